/**
 * The wire adapters the platform already supports, and what each offers per workload. A provider declaration may
 * only name an `api_format` and a `credentials` lane listed here (spec: "Provider declaration": "must already be
 * supported"); a model definition inherits the wire's capabilities, generation-parameter table and token counter
 * when it omits them (spec: "Model definition fields").
 */

/** What a model does; selects the wire's endpoint and the default output modalities. */
export const WORKLOADS = ['text_generation', 'embeddings', 'image_generation', 'speech', 'transcription'] as const;
export type Workload = (typeof WORKLOADS)[number];

/** Credential lanes (spec: Authentication 7). */
export const CREDENTIAL_LANES = ['api_key', 'oauth_tokens', 'none'] as const;
export type CredentialLane = (typeof CREDENTIAL_LANES)[number];

/** Wire adapter names. `openai_chat` is the compatible-chat adapter (OpenAI, Mistral, Ollama, vLLM, …). */
export const API_FORMATS = ['openai_chat', 'anthropic_messages', 'gemini_generate_content'] as const;
export type ApiFormat = (typeof API_FORMATS)[number];

export const MODALITIES = ['text', 'image', 'audio', 'video', 'pdf', 'embedding'] as const;
export type Modality = (typeof MODALITIES)[number];

/** BPE encodings the deployment ships; a `bpe` or `anchored` counter must name one of them. */
export const BPE_ENCODINGS = ['cl100k_base', 'o200k_base', 'p50k_base', 'r50k_base'] as const;

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
  | { kind: 'hub'; tokenizer_id: string }
  | { kind: 'bpe'; encoding: string }
  | { kind: 'anchored'; encoding: string; safety_factor: string };

/** What one wire offers for one workload. */
interface WireProfile {
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

export interface WireAdapter {
  credentials: readonly CredentialLane[];
  workloads: Partial<Readonly<Record<Workload, WireProfile>>>;
}

const number = (minimum: number, maximum: number): ParameterDescriptor => ({ kind: 'number', default: null, minimum, maximum, allowed_values: null });
const maxTokens = PARAMETER_PRESETS.max_output_tokens as ParameterDescriptor;

const noText: Omit<WireProfile, 'generation_parameters'> = {
  tool_calls: false,
  streaming: false,
  prompt_caching: false,
  structured_output: false,
  reasoning: false,
  token_counter: null,
};

/**
 * The supported adapters. Token counters of non-OpenAI wires are `anchored` estimates (an encoding's count times a
 * safety factor), because the exact tokenizers are not public; catalog entries can declare better ones.
 */
export const WIRES: Readonly<Record<ApiFormat, WireAdapter>> = {
  openai_chat: {
    credentials: ['api_key', 'oauth_tokens', 'none'],
    workloads: {
      text_generation: {
        tool_calls: true,
        streaming: true,
        prompt_caching: false,
        structured_output: true,
        reasoning: true,
        generation_parameters: { max_output_tokens: maxTokens, temperature: number(0, 2), top_p: number(0, 1) },
        token_counter: { kind: 'anchored', encoding: 'o200k_base', safety_factor: '1.25' },
      },
      embeddings: { ...noText, generation_parameters: {}, token_counter: { kind: 'anchored', encoding: 'cl100k_base', safety_factor: '1.25' } },
      image_generation: { ...noText, generation_parameters: {} },
      speech: { ...noText, streaming: true, generation_parameters: {} },
      transcription: { ...noText, generation_parameters: {} },
    },
  },
  anthropic_messages: {
    credentials: ['api_key', 'oauth_tokens'],
    workloads: {
      text_generation: {
        tool_calls: true,
        streaming: true,
        prompt_caching: true,
        structured_output: false,
        reasoning: true,
        generation_parameters: {
          max_output_tokens: maxTokens,
          temperature: number(0, 1),
          top_p: number(0, 1),
          top_k: { kind: 'integer', default: null, minimum: 1, maximum: null, allowed_values: null },
        },
        token_counter: { kind: 'anchored', encoding: 'cl100k_base', safety_factor: '1.3' },
      },
    },
  },
  gemini_generate_content: {
    credentials: ['api_key', 'oauth_tokens'],
    workloads: {
      text_generation: {
        tool_calls: true,
        streaming: true,
        prompt_caching: true,
        structured_output: true,
        reasoning: true,
        generation_parameters: { max_output_tokens: maxTokens, temperature: number(0, 2), top_p: number(0, 1) },
        token_counter: { kind: 'anchored', encoding: 'o200k_base', safety_factor: '1.3' },
      },
      embeddings: { ...noText, generation_parameters: {}, token_counter: { kind: 'anchored', encoding: 'o200k_base', safety_factor: '1.3' } },
    },
  },
};

/** Output modalities when a definition omits them: they follow the workload (spec: `output_modalities`). */
export const DEFAULT_OUTPUT_MODALITIES: Readonly<Record<Workload, Modality[]>> = {
  text_generation: ['text'],
  transcription: ['text'],
  image_generation: ['image'],
  speech: ['audio'],
  embeddings: ['embedding'],
};

/** The one supported `wire_options.prompt_format` value (single leading system instruction layout). */
export const PROMPT_FORMATS = ['model3_5'] as const;
