import {
  capabilitiesSchema,
  type Capabilities,
  type ModelDefinition,
  type Pricing,
  type ProviderDeclaration,
  type SharedModelDefinition,
} from './catalog.schemas.ts';
import type { z } from 'zod';
import {
  DEFAULT_OUTPUT_MODALITIES,
  PARAMETER_PRESETS,
  WIRES,
  type Modality,
  type ParameterDescriptor,
  type TokenCounter,
  type Workload,
} from './wires.ts';

/** Capabilities with every default applied: what model rows show (spec: Model row `capabilities`). */
interface ComposedCapabilities {
  input_modalities: Modality[];
  output_modalities: Modality[];
  tool_calls: boolean;
  streaming: boolean;
  prompt_caching: boolean;
  structured_output: boolean;
  reasoning: { efforts?: string[] | undefined; budget_tokens?: { minimum: number; maximum: number } | undefined } | null;
  limits: { combined_input_output_tokens?: number | undefined; input_tokens?: number | undefined; output_tokens?: number | undefined };
  generation_parameters: Record<string, ParameterDescriptor>;
  /** null: the byte estimate. */
  token_counter: TokenCounter | null;
  wire_options: { prompt_format: string | null };
  model_identity: string | null;
}

/** The static part of a model row: everything except availability, which depends on policy and credentials. */
export interface ComposedModel {
  ref: string;
  provider_id: string;
  /** Effective upstream id sent to the provider. */
  model_id: string;
  display_name: string | null;
  workload: Workload;
  capabilities: ComposedCapabilities;
  pricing: Pricing | null;
}

export type ComposeResult = { ok: true; model: ComposedModel } | { ok: false; reason: string };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Spec "Inheritance and composition": authored objects merge recursively into inherited ones, except `limits`,
 * which replaces; arrays and scalars replace; `null` is a value (it keeps its field meaning, it deletes nothing).
 */
function mergeCapabilities(inherited: Capabilities | undefined, authored: Capabilities | undefined): Capabilities {
  const merge = (base: Record<string, unknown>, over: Record<string, unknown>, depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = { ...base };
    for (const [key, value] of Object.entries(over)) {
      if (value === undefined) continue;
      const current = out[key];
      const replaces = depth === 0 && key === 'limits';
      out[key] = !replaces && isPlainObject(current) && isPlainObject(value) ? merge(current, value, depth + 1) : value;
    }
    return out;
  };
  return merge(inherited ?? {}, authored ?? {}, 0);
}

/** One zod issue of the merged capabilities as `capabilities.<path>: <message>`, with a hint for a changed kind. */
function describeComposedIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid value';
  const path = ['capabilities', ...issue.path.map(String)].join('.');
  const kindChanged = issue.code === 'unrecognized_keys' && issue.path.length > 0;
  const hint = kindChanged
    ? ' (an authored object merges into the inherited one field by field: author a value of the inherited kind, or inherit a definition that does not set this field)'
    : '';
  return `${path}: ${issue.message}${hint}`;
}

function expandDescriptor(name: string, authored: Record<string, unknown>): ParameterDescriptor | string {
  const preset = PARAMETER_PRESETS[name];
  const pick = <K extends keyof ParameterDescriptor>(key: K): ParameterDescriptor[K] | undefined =>
    authored[key] as ParameterDescriptor[K] | undefined;
  const kind = pick('kind') ?? preset?.kind;
  if (!kind) return `generation_parameters.${name}: kind is required (only max_output_tokens and verbosity have presets)`;
  const d: ParameterDescriptor = {
    kind,
    default: pick('default') !== undefined ? (pick('default') as ParameterDescriptor['default']) : (preset?.default ?? null),
    minimum: pick('minimum') !== undefined ? (pick('minimum') as number | null) : (preset?.minimum ?? null),
    maximum: pick('maximum') !== undefined ? (pick('maximum') as number | null) : (preset?.maximum ?? null),
    allowed_values:
      pick('allowed_values') !== undefined
        ? (pick('allowed_values') as ParameterDescriptor['allowed_values'])
        : (preset?.allowed_values ?? null),
  };
  const where = `generation_parameters.${name}`;
  const numeric = d.kind === 'integer' || d.kind === 'number';
  if (!numeric && (d.minimum !== null || d.maximum !== null))
    return `${where}: minimum and maximum apply only to integer and number parameters`;
  if (d.kind === 'integer' && [d.minimum, d.maximum].some((v) => v !== null && !Number.isInteger(v)))
    return `${where}: integer bounds must be integers`;
  if (d.minimum !== null && d.maximum !== null && d.minimum > d.maximum) return `${where}: minimum is above maximum`;
  const fits = (v: unknown): boolean => {
    if (d.kind === 'boolean') return typeof v === 'boolean';
    if (d.kind === 'string') return typeof v === 'string';
    if (typeof v !== 'number' || (d.kind === 'integer' && !Number.isInteger(v))) return false;
    return (d.minimum === null || v >= d.minimum) && (d.maximum === null || v <= d.maximum);
  };
  if (d.allowed_values !== null) {
    if (d.kind === 'boolean') return `${where}: allowed_values does not apply to boolean parameters`;
    if (d.allowed_values.length === 0) return `${where}: allowed_values must not be empty (use null for no restriction)`;
    if (!d.allowed_values.every(fits)) return `${where}: allowed_values do not match kind ${d.kind} and its bounds`;
  }
  if (d.default !== null) {
    if (!fits(d.default)) return `${where}: default does not match kind ${d.kind} and its bounds`;
    if (d.allowed_values !== null && !d.allowed_values.includes(d.default as string | number))
      return `${where}: default is not one of allowed_values`;
  }
  return d;
}

/** Which rates a complete price formula needs and allows, by workload (spec "Prices": formula validation). */
const PRICE_FORMULAS: Record<Workload, { required: (keyof Pricing)[]; allowed: (keyof Pricing)[] }> = {
  text_generation: {
    required: ['input_per_million_tokens', 'output_per_million_tokens'],
    allowed: ['input_per_million_tokens', 'output_per_million_tokens', 'cache_read_per_million_tokens', 'cache_write_per_million_tokens'],
  },
  embeddings: { required: ['input_per_million_tokens'], allowed: ['input_per_million_tokens'] },
  image_generation: { required: ['per_image'], allowed: ['per_image', 'input_per_million_tokens'] },
  speech: { required: ['per_million_characters'], allowed: ['per_million_characters'] },
  transcription: { required: ['per_minute'], allowed: ['per_minute'] },
};

function checkPricing(pricing: Pricing, workload: Workload): string | undefined {
  const formula = PRICE_FORMULAS[workload];
  for (const key of formula.required) if (pricing[key] === undefined) return `pricing: ${workload} needs ${formula.required.join(' and ')}`;
  for (const key of Object.keys(pricing) as (keyof Pricing)[]) {
    if (key !== 'unit' && !formula.allowed.includes(key)) return `pricing: ${key} does not apply to ${workload}`;
  }
  return undefined;
}

function checkModalities(workload: Workload, input: Modality[], output: Modality[]): string | undefined {
  if (new Set(input).size !== input.length || new Set(output).size !== output.length) return 'modalities must not repeat';
  if (input.includes('embedding')) return 'input_modalities: embedding is an output modality';
  if (workload === 'embeddings')
    return output.length === 1 && output[0] === 'embedding' ? undefined : 'output_modalities: embeddings output exactly [embedding]';
  if (output.includes('embedding')) return 'output_modalities: only embeddings models output embedding';
  const needs: Partial<Record<Workload, Modality>> = {
    text_generation: 'text',
    transcription: 'text',
    image_generation: 'image',
    speech: 'audio',
  };
  const need = needs[workload];
  if (need && !output.includes(need)) return `output_modalities: ${workload} must output ${need}`;
  if (workload === 'transcription' && !input.includes('audio')) return 'input_modalities: transcription needs audio input';
  return undefined;
}

/**
 * Composes the model a complete ref names (`<provider_id>/<model key>`) from a stored definition entry: what the
 * projection serves and what the definition commands check before saving, so both compose an entry the same way.
 */
export function composeRef(
  providerId: string,
  declaration: ProviderDeclaration,
  ref: string,
  definition: ModelDefinition,
  shared: Readonly<Record<string, SharedModelDefinition>>,
): ComposeResult {
  return composeModel({ providerId, declaration, modelKey: ref.slice(providerId.length + 1), definition, shared });
}

/**
 * Composes one model: the shared definition it inherits, its authored fields, then the wire's defaults for what is
 * still omitted. Returns a reason instead of throwing, so the catalog loader and the definition commands can report
 * it their own way (a log line naming the file, or 422 `validation_failed`).
 */
export function composeModel(input: {
  providerId: string;
  declaration: ProviderDeclaration;
  modelKey: string;
  definition: ModelDefinition;
  shared: Readonly<Record<string, SharedModelDefinition>>;
}): ComposeResult {
  const { definition, declaration } = input;
  const fail = (reason: string): ComposeResult => ({ ok: false, reason });
  let inherited: SharedModelDefinition = {};
  if (definition.inherit !== undefined) {
    const found = Object.hasOwn(input.shared, definition.inherit) ? input.shared[definition.inherit] : undefined;
    if (!found) return fail(`inherit: unknown model definition ${JSON.stringify(definition.inherit)}`);
    inherited = found;
  }
  const merged = mergeCapabilities(inherited.capabilities, definition.capabilities);
  // The merge is field by field, so it can produce a value neither side authored: a `hub` token_counter merged into
  // an inherited `anchored` one keeps `encoding` and `safety_factor`. Spec "Inheritance and composition": such a
  // composed model is invalid (422 on a definition write; the catalog refuses to load). So the merged capabilities
  // must pass the same grammar as authored ones before anything is read from them.
  const checked = capabilitiesSchema.safeParse(merged);
  if (!checked.success) return fail(`the composed capabilities are invalid: ${describeComposedIssue(checked.error)}`);
  const caps = checked.data;
  const workload: Workload = caps.workload ?? 'text_generation';
  const wire = WIRES[declaration.api_format].workloads[workload];
  if (!wire) return fail(`api_format ${declaration.api_format} does not support the ${workload} workload`);

  const flag = (name: 'tool_calls' | 'streaming' | 'prompt_caching'): boolean | string => {
    const value = caps[name];
    if (value === undefined) return wire[name];
    if (value && !wire[name]) return `${name}: the ${declaration.api_format} wire does not support it for ${workload}`;
    return value;
  };
  const toolCalls = flag('tool_calls');
  const streaming = flag('streaming');
  const promptCaching = flag('prompt_caching');
  for (const value of [toolCalls, streaming, promptCaching]) if (typeof value === 'string') return fail(value);

  const reasoning = caps.reasoning ?? null;
  if (reasoning && !wire.reasoning) return fail(`reasoning: the ${declaration.api_format} wire does not support it for ${workload}`);

  let structuredOutput = wire.structured_output;
  let parameters: Record<string, ParameterDescriptor>;
  if (caps.generation_parameters === undefined) {
    parameters = { ...wire.generation_parameters };
  } else {
    parameters = {};
    for (const [name, authored] of Object.entries(caps.generation_parameters)) {
      if (name === 'output_format') {
        if (authored !== false) return fail('generation_parameters.output_format: only false (disable structured output) is accepted');
        structuredOutput = false;
        continue;
      }
      if (authored === false) return fail(`generation_parameters.${name}: false is accepted only for output_format`);
      const expanded = expandDescriptor(name, authored);
      if (typeof expanded === 'string') return fail(expanded);
      parameters[name] = expanded;
    }
  }

  const input_modalities = caps.input_modalities ?? [];
  const output_modalities = caps.output_modalities ?? [...DEFAULT_OUTPUT_MODALITIES[workload]];
  const modalityProblem = checkModalities(workload, input_modalities, output_modalities);
  if (modalityProblem) return fail(modalityProblem);

  const pricing = definition.pricing ?? null;
  if (pricing) {
    const problem = checkPricing(pricing, workload);
    if (problem) return fail(problem);
  }

  return {
    ok: true,
    model: {
      ref: `${input.providerId}/${input.modelKey}`,
      provider_id: input.providerId,
      model_id: definition.model_id ?? input.modelKey,
      display_name: definition.display_name ?? null,
      workload,
      capabilities: {
        input_modalities,
        output_modalities,
        tool_calls: toolCalls as boolean,
        streaming: streaming as boolean,
        prompt_caching: promptCaching as boolean,
        structured_output: structuredOutput,
        reasoning,
        limits: caps.limits ?? {},
        generation_parameters: parameters,
        token_counter: caps.token_counter === undefined ? wire.token_counter : caps.token_counter,
        wire_options: { prompt_format: caps.wire_options?.prompt_format ?? null },
        model_identity: caps.model_identity ?? null,
      },
      pricing,
    },
  };
}
