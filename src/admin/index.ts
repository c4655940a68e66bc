// What other services may use of the admin service (eslint.boundaries.js): the member plane reads the same model
// projection through the plane and answers with the same schemas.
export type { ModelPlane } from './model-plane.ts';
export { memberProvidersResponseSchema, modelsQuerySchema, modelsResponseSchema } from './admin.schemas.ts';
export type {
  CompletedEmbeddings,
  CompletedTextGeneration,
  InferenceCaller,
  InferenceRequest,
  StreamedTextGeneration,
} from './inference/inference.types.ts';
