import type { ComposedModel } from '../catalog/catalog.compose.ts';
import type { CredentialLane, Workload } from '../catalog/wires.ts';

/**
 * The contract every wire adapter module fulfils (issue 14 §5). An adapter is one upstream endpoint family of one
 * `api_format` for one or more workloads: it declares what it offers (the defaults a model definition inherits when it
 * omits a field), how its model directory is read, the fixed probe the model test sends, and how a request for a
 * composed model is built. Building is pure: an adapter never sends anything; the discovery and model-test commands
 * (next issues) send what it builds.
 *
 * This module is a leaf (types and the presets only), so adapters and the catalog can both import it without a cycle.
 */

type ParameterKind = 'integer' | 'number' | 'string' | 'boolean';

/** A generation-parameter descriptor with every field filled (what rows show). */
export interface ParameterDescriptor {
  kind: ParameterKind;
  default: number | string | boolean | null;
  minimum: number | null;
  maximum: number | null;
  allowed_values: (string | number)[] | null;
}

/** Presets: a parameter declared as `{}` takes these (spec: "Generation parameter presets"). */
export const PARAMETER_PRESETS: Readonly<Record<string, ParameterDescriptor>> = {
  max_output_tokens: { kind: 'integer', default: null, minimum: 1, maximum: null, allowed_values: null },
  verbosity: { kind: 'string', default: 'low', minimum: null, maximum: null, allowed_values: ['low', 'medium', 'high'] },
};

export type TokenCounter =
  { kind: 'hub'; tokenizer_id: string } | { kind: 'bpe'; encoding: string } | { kind: 'anchored'; encoding: string; safety_factor: string };

/** What one wire offers for one workload: the defaults an omitted field inherits (spec: "Model definition fields"). */
export interface WireProfile {
  tool_calls: boolean;
  streaming: boolean;
  prompt_caching: boolean;
  /** Structured output is derived from the wire, and disabled by `generation_parameters.output_format: false`. */
  structured_output: boolean;
  /** Whether a reasoning declaration can be honoured on this wire. */
  reasoning: boolean;
  /** The wire's own parameter table, used when a definition omits `generation_parameters`. */
  generation_parameters: Readonly<Record<string, ParameterDescriptor>>;
  /** Used when a definition omits `token_counter`; null is the byte estimate. */
  token_counter: TokenCounter | null;
}

/** A request an adapter built: everything a sender needs, nothing sent. `body` is JSON text or multipart parts. */
export interface UpstreamRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body: string | MultipartBody | null;
}

/** A multipart/form-data body as named parts (the transcription upload); the sender encodes it. */
export interface MultipartBody {
  kind: 'multipart';
  parts: ({ name: string; value: string } | { name: string; filename: string; contentType: string; data: Uint8Array })[];
}

/** The credential a request carries, already decrypted by the caller; adapters only decide where it goes. */
export type WireCredential = { kind: 'api_key'; key: string } | { kind: 'oauth_tokens'; accessToken: string } | null;

/** Where a request goes: the provider declaration's base URL and the composed model. */
export interface Target {
  baseUrl: string;
  model: ComposedModel;
  credential: WireCredential;
}

export type MessageRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';
export type ContentPart = { type: 'text'; text: string } | { type: 'image'; media_type: string; data: string };

/** A chat message in the platform's neutral form; adapters translate it to their wire. */
export interface ChatMessage {
  role: MessageRole;
  content: string | ContentPart[];
  /** On assistant messages: the calls it made. */
  tool_calls?: { id: string; name: string; arguments: string }[];
  /** On tool messages: the call answered. */
  tool_call_id?: string;
  /** On tool messages: the tool's name (Gemini matches responses by name). */
  name?: string;
}

export interface ToolSpec {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

export interface TextGenerationInput {
  messages: ChatMessage[];
  /** Generation parameters by their platform names (`max_output_tokens`, `temperature`, …). */
  parameters?: Record<string, unknown>;
  tools?: ToolSpec[];
  /** Whether and which tool the model must call; sent only with `tools` (each wire names it its own way). */
  tool_choice?: 'auto' | 'none' | 'required' | { name: string };
  stream?: boolean;
  /** Derived structured output: a JSON Schema the answer must follow. */
  output_schema?: Record<string, unknown>;
  reasoning?: { effort?: string; budget_tokens?: number };
}

export interface EmbeddingsInput {
  input: string[];
  /** Embeddings parameters by their platform names, checked against the model's table by the wire. */
  parameters?: Record<string, unknown>;
}

export interface ImageInput {
  prompt: string;
  parameters?: Record<string, unknown>;
}

export interface SpeechInput {
  text: string;
  parameters?: Record<string, unknown>;
}

export interface TranscriptionInput {
  audio: Uint8Array;
  filename: string;
  contentType: string;
  parameters?: Record<string, unknown>;
}

/** The input of each workload. */
export interface WorkloadInputs {
  text_generation: TextGenerationInput;
  embeddings: EmbeddingsInput;
  image_generation: ImageInput;
  speech: SpeechInput;
  transcription: TranscriptionInput;
}

/** Provider-reported usage of one call, as the provider counted it (authoritative over any estimate). */
export interface WireUsage {
  input_tokens: number;
  output_tokens: number;
  /** Input tokens served from the provider's prompt cache, when it reports them; null when it does not say. */
  cached_input_tokens: number | null;
}

/** Why generation stopped, in the platform's words (each wire maps its own values). */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'other';

export interface TextGenerationOutput {
  text: string;
  tool_calls: { id: string; name: string; arguments: string }[];
  finish_reason: FinishReason;
  usage: WireUsage | null;
}

export interface EmbeddingsOutput {
  embeddings: number[][];
  usage: WireUsage | null;
}

export interface ImageOutput {
  images: { data: string; media_type: string }[];
  usage: WireUsage | null;
}

export interface SpeechOutput {
  audio: Uint8Array;
  media_type: string;
}

export interface TranscriptionOutput {
  text: string;
  usage: WireUsage | null;
}

/** The answer of each workload, in the platform's neutral form. */
export interface WorkloadOutputs {
  text_generation: TextGenerationOutput;
  embeddings: EmbeddingsOutput;
  image_generation: ImageOutput;
  speech: SpeechOutput;
  transcription: TranscriptionOutput;
}

/** One piece of a streamed text answer, in the platform's neutral form. */
export type TextDelta =
  | { type: 'text'; text: string }
  /** A tool call's start (`id`, `name`) and/or a fragment of its JSON arguments; `index` orders the calls. */
  | { type: 'tool_call'; index: number; id?: string; name?: string; arguments: string }
  | { type: 'finish'; finish_reason: FinishReason }
  | { type: 'usage'; usage: WireUsage };

/**
 * Decodes a streamed answer incrementally: bytes in as they arrive (any split, even inside a UTF-8 character or an SSE
 * line), neutral deltas out. Throws an Error on a stream that is not this wire's format or that carries an error event.
 */
export interface StreamDecoder {
  push(chunk: Uint8Array): TextDelta[];
  /** The end of the body: flushes what is left; throws when the stream ended mid-event. */
  end(): TextDelta[];
  /**
   * The usage the provider reported so far, for a stream that ends before its final usage (the client went away, the
   * connection broke): what it already billed. Only wires that report usage as they go have it.
   */
  usageSoFar?(): WireUsage | null;
}

/** One page of a model directory, parsed. */
export interface DirectoryPage {
  models: { id: string; display_name: string | null }[];
  /** The cursor of the next page, or null when this page is the last. */
  next: string | null;
}

/** Thrown by a directory's `parse` when a page says more follow but gives no way to fetch them (incomplete pagination). */
export class DirectoryPagingError extends Error {}

/** How an adapter's model directory is read (spec rule 4: the discovery command pages through it). */
export interface DirectoryFormat {
  /** The request for one page; `cursor` is null for the first. */
  request(baseUrl: string, credential: WireCredential, cursor: string | null): UpstreamRequest;
  /** Parses a page; throws on a body that is not this directory's format (discovery answers 422). */
  parse(body: unknown): DirectoryPage;
}

/** The fixed probe of the model test, or why this model cannot be probed (spec rule 8: `test_input_unavailable`). */
export type ProbeInput<W extends Workload> =
  { ok: true; input: WorkloadInputs[W] } | { ok: false; outcome: 'test_input_unavailable'; reason: string };

/** One endpoint adapter: an `api_format` serving one workload. */
export interface EndpointAdapter<W extends Workload = Workload> {
  apiFormat: string;
  workload: W;
  /** Credential lanes this endpoint can authenticate with. */
  credentials: readonly CredentialLane[];
  profile: WireProfile;
  directory: DirectoryFormat;
  /** The fixed, small probe for a composed model of this workload. */
  probe(model: ComposedModel): ProbeInput<W>;
  /** Builds the upstream request; throws `AppError('validation_failed')` on input the model does not accept. */
  build(target: Target, input: WorkloadInputs[W]): UpstreamRequest;
  /** Reads a 2xx answer of a request built without streaming; throws an Error when it is not this endpoint's answer. */
  parse(answer: { body: Uint8Array; headers: Record<string, string> }): WorkloadOutputs[W];
  /** Text generation: a decoder for the answer of a request built with `stream: true`. */
  streamDecoder?: () => StreamDecoder;
  /**
   * Text generation on a wire that requires an output budget: the one it sends when the call sets none (fitting
   * counts it, since the provider refuses input plus that budget beyond the context window).
   */
  defaultMaxOutput?: (model: ComposedModel) => number;
}
