import { PARAMETER_PRESETS, type ParameterDescriptor, type TokenCounter, type WireProfile } from '../wires/wire.types.ts';
import { ENDPOINT_ADAPTERS } from '../wires/wires.registry.ts';

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

export { PARAMETER_PRESETS, type ParameterDescriptor, type TokenCounter };

export interface WireAdapter {
  credentials: readonly CredentialLane[];
  workloads: Partial<Readonly<Record<Workload, WireProfile>>>;
}

/**
 * What each supported adapter offers, per workload, derived from the endpoint adapter modules (`../wires/`): each
 * declares its workloads, capabilities, parameter table and default token counter. Token counters of non-OpenAI
 * wires are `anchored` estimates (an encoding's count times a safety factor), because the exact tokenizers are not
 * public; catalog entries can declare better ones.
 */
export const WIRES: Readonly<Record<ApiFormat, WireAdapter>> = wiresFromAdapters();

function wiresFromAdapters(): Record<ApiFormat, WireAdapter> {
  const out = {} as Record<ApiFormat, WireAdapter>;
  for (const format of API_FORMATS) {
    const endpoints = ENDPOINT_ADAPTERS.filter((a) => a.apiFormat === format);
    const workloads: Partial<Record<Workload, WireProfile>> = {};
    for (const e of endpoints) workloads[e.workload] = e.profile;
    out[format] = { credentials: CREDENTIAL_LANES.filter((lane) => endpoints.every((e) => e.credentials.includes(lane))), workloads };
  }
  return out;
}

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
