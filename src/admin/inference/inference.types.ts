import type { Workload } from '../catalog/wires.ts';
import type {
  ChatMessage,
  EmbeddingsOutput,
  FinishReason,
  TextDelta,
  TextGenerationOutput,
  ToolSpec,
  WireUsage,
} from '../wires/wire.types.ts';

/**
 * The contract between the member plane's inference routes (`src/member/inference/`: the native InferenceRequest and
 * the OpenAI-compatible surface) and the model plane's execution path (`src/admin/inference/`: selection, admission,
 * fitting, execution, usage). Routes translate their wire format to `InferenceRequest` and the results back; they never
 * see a credential, a provider URL or a policy.
 */

/** Who is calling: the member-plane or executor token's Human (platform credentials never reach here, spec Authentication 6). */
export interface InferenceCaller {
  accountId: string;
  humanId: string;
  /** The id of the token that authenticated the request: the unit of the rate and stream limits. */
  credentialId: string;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export interface TextGenerationRequest {
  workload: 'text_generation';
  messages: ChatMessage[];
  tools?: ToolSpec[];
  tool_choice?: ToolChoice;
  /** Generation parameters by their platform names; each must be declared by the model's composed table (else 400). */
  parameters?: Record<string, unknown>;
  max_output_tokens?: number;
  /** Checked against the model's reasoning declaration by the wire (an undeclared effort is 400). */
  reasoning?: { effort: string };
  stream: boolean;
}

export interface EmbeddingsRequest {
  workload: 'embeddings';
  input: string[];
  /** Embeddings parameters by their platform names (`dimensions`, `output_dimensionality`); checked as for text. */
  parameters?: Record<string, unknown>;
  /**
   * The OpenAI surface's `dimensions`: the vector size under whichever name the model declares for it (`dimensions`
   * or `output_dimensionality`), which the surface cannot know before the model is chosen.
   */
  dimensions?: number;
}

export interface InferenceRequest {
  /** Candidate model refs in order (the selector): the first admissible one is used; one ref is an explicit choice. */
  models: string[];
  input: TextGenerationRequest | EmbeddingsRequest;
}

/** What every answer carries about the call. */
export interface InferenceMeta {
  /** The usage record's id. */
  request_id: string;
  /** The model ref that was admitted and called. */
  model: string;
  model_identity: string | null;
  workload: Workload;
}

/** An estimated cost in the Account's cost unit; absent (null) when a price or the unit is unknown. */
export interface InferenceCost {
  amount: string;
  unit: string;
}

export interface CompletedTextGeneration {
  meta: InferenceMeta;
  output: TextGenerationOutput;
  usage: WireUsage | null;
  cost: InferenceCost | null;
}

export interface CompletedEmbeddings {
  meta: InferenceMeta;
  output: EmbeddingsOutput;
  usage: WireUsage | null;
  cost: InferenceCost | null;
}

/** How a streamed call ended, once its stream is over (usage is recorded by then). */
export interface StreamSettlement {
  finish_reason: FinishReason | null;
  usage: WireUsage | null;
  cost: InferenceCost | null;
}

export interface StreamedTextGeneration {
  meta: InferenceMeta;
  /** The neutral deltas as the provider sends them; iterating to the end settles the call. */
  deltas: AsyncIterable<TextDelta>;
  /** Resolves when the stream ended (completed, failed or aborted) and its usage row is written. */
  settled: Promise<StreamSettlement>;
}

/**
 * The execution path's entry point (implemented in `src/admin/inference/`, exposed on the model plane as `infer`).
 * Refusals are `AppError`s: 400 `parameter_invalid` (an undeclared parameter, named), 404 `not_found` (no candidate
 * names a model of the Account), 409 `model_unavailable` (no candidate admissible; the message names each candidate's
 * `unavailable_reason`), 400 `context_length_exceeded` (input plus `max_output_tokens` cannot fit, naming both figures),
 * 429 `rate_limited` (a caller limit, with `Retry-After`), and for upstream failures 502 `provider_error` / 504
 * `deadline_exceeded` / 429 `rate_limited` (upstream 429, with the provider's wait). `signal` aborts the upstream call
 * (the client went away); usage is still recorded.
 */
export interface InferenceEngine {
  infer(
    caller: InferenceCaller,
    request: InferenceRequest,
    signal: AbortSignal,
  ): Promise<CompletedTextGeneration | CompletedEmbeddings | StreamedTextGeneration>;
}
