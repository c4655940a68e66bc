// What other services may use of the admin service (eslint.boundaries.js): the member plane reads the same model
// projection through the plane and answers with the same schemas.
export type { ModelPlane } from './model-plane.ts';
export { memberProvidersResponseSchema, modelsQuerySchema, modelsResponseSchema } from './admin.schemas.ts';
// The inference contract: the member plane's routes translate to and from it (src/admin/inference/inference.types.ts).
export type {
  CompletedEmbeddings,
  CompletedTextGeneration,
  InferenceCaller,
  InferenceCost,
  InferenceEngine,
  InferenceMeta,
  InferenceRequest,
  StreamedTextGeneration,
  StreamSettlement,
  ToolChoice,
} from './inference/inference.types.ts';
export type { ChatMessage, ContentPart, FinishReason, TextDelta, ToolSpec, WireUsage } from './wires/wire.types.ts';
