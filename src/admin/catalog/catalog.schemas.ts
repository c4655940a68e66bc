import { z } from 'zod';
import { API_FORMATS, BPE_ENCODINGS, CREDENTIAL_LANES, MODALITIES, PROMPT_FORMATS, WORKLOADS } from './wires.ts';

/**
 * The authored grammar of provider declarations and model definitions (spec: "Provider declaration", "Model
 * definition fields"). One set of zod schemas validates catalog files, policy definition entries and, through
 * `z.toJSONSchema`, describes them in the OpenAPI document. Objects are strict: a misspelt field is an error, not
 * a silently ignored default.
 */

/** Provider ids are one path segment: no `/`, so `<provider_id>/<upstream_model_id>` splits at the first `/`. */
export const providerIdSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'provider id: lower-case letters, digits, ".", "_" or "-", at most 63 characters');

/** The part of a reference after the provider's `/`; it may itself contain `/` (spec: Model row `ref`). */
export const modelKeySchema = z
  .string()
  .min(1)
  .max(256)
  .regex(
    // eslint-disable-next-line no-control-regex -- the point is to refuse control characters
    /^[^\s\u0000-\u001f\u007f](?:[^\u0000-\u001f\u007f]*[^\s\u0000-\u001f\u007f])?$/,
    'model name: no control characters, no leading or trailing whitespace',
  );

const definitionNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'definition name: letters, digits, ".", "_" or "-"');

/** A non-negative decimal written as a string, so prices never pass through binary floating point. */
const decimalSchema = z.string().regex(/^(0|[1-9]\d{0,11})(\.\d{1,12})?$/, 'a non-negative decimal string such as "2.50"');

const positiveInt = z
  .number()
  .int()
  .min(1)
  .max(2 ** 31 - 1);

/** Limit windows. `combined_input_output_tokens` is the context window; authored `limits` replace inherited ones. */
const limitsSchema = z.strictObject({
  combined_input_output_tokens: positiveInt.optional(),
  input_tokens: positiveInt.optional(),
  output_tokens: positiveInt.optional(),
});

const modalitySchema = z.enum(MODALITIES);

const parameterValue = z.union([z.number(), z.string().max(256), z.boolean(), z.null()]);

/** A generation-parameter descriptor as authored: `{}` takes the preset, otherwise only the differences. */
const parameterDescriptorSchema = z.strictObject({
  kind: z.enum(['integer', 'number', 'string', 'boolean']).optional(),
  default: parameterValue.optional(),
  minimum: z.number().nullable().optional(),
  maximum: z.number().nullable().optional(),
  allowed_values: z
    .array(z.union([z.string().max(256), z.number()]))
    .max(64)
    .nullable()
    .optional(),
});

/** `false` is accepted only for `output_format` (disables structured output), checked at composition. */
const generationParametersSchema = z.record(
  z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'parameter name: lower-case snake_case'),
  z.union([parameterDescriptorSchema, z.literal(false)]),
);

const safetyFactor = z
  .string()
  .regex(/^\d{1,6}(\.\d{1,6})?$/, 'safety_factor: a decimal string')
  .refine((v) => Number(v) >= 1, 'safety_factor: at least 1');

export const tokenCounterSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('hub'),
    tokenizer_id: z
      .string()
      .min(1)
      .max(256)
      .regex(/^[A-Za-z0-9][A-Za-z0-9._/-]*$/, 'tokenizer_id: a tokenizer name such as org/name'),
  }),
  z.strictObject({ kind: z.literal('bpe'), encoding: z.enum(BPE_ENCODINGS) }),
  z.strictObject({ kind: z.literal('anchored'), encoding: z.enum(BPE_ENCODINGS), safety_factor: safetyFactor }),
]);

const wireOptionsSchema = z.strictObject({ prompt_format: z.enum(PROMPT_FORMATS).nullable().optional() });

/** Spec "model_identity": nonempty, no leading/trailing whitespace, at most 256 bytes. */
const modelIdentitySchema = z
  .string()
  .min(1)
  // A pattern and a character bound rather than refinements where possible, so the published JSON Schema carries them
  // (JavaScript's \s is the set String.prototype.trim removes); the byte bound has no JSON Schema form.
  .max(256)
  .regex(/^\S(?:[\s\S]*\S)?$/, 'model_identity: no leading or trailing whitespace')
  .refine((v) => Buffer.byteLength(v, 'utf8') <= 256, 'model_identity: at most 256 bytes');

/** Reasoning support must be declared: effort levels, a thinking-token budget, or both. */
const reasoningSchema = z
  .strictObject({
    efforts: z
      .array(z.enum(['minimal', 'low', 'medium', 'high']))
      .min(1)
      .optional(),
    budget_tokens: z.strictObject({ minimum: positiveInt, maximum: positiveInt }).optional(),
  })
  .refine((r) => r.efforts !== undefined || r.budget_tokens !== undefined, 'reasoning: declare efforts, budget_tokens or both')
  .refine((r) => !r.budget_tokens || r.budget_tokens.minimum <= r.budget_tokens.maximum, 'reasoning.budget_tokens: minimum above maximum');

/** Capability fields; in authored definitions they sit under `capabilities` (spec: "Provider configuration"). */
export const capabilitiesSchema = z.strictObject({
  workload: z.enum(WORKLOADS).optional(),
  limits: limitsSchema.optional(),
  input_modalities: z.array(modalitySchema).max(8).optional(),
  output_modalities: z.array(modalitySchema).max(8).optional(),
  tool_calls: z.boolean().optional(),
  streaming: z.boolean().optional(),
  prompt_caching: z.boolean().optional(),
  reasoning: reasoningSchema.nullable().optional(),
  generation_parameters: generationParametersSchema.optional(),
  token_counter: tokenCounterSchema.nullable().optional(),
  wire_options: wireOptionsSchema.optional(),
  model_identity: modelIdentitySchema.nullable().optional(),
});

/**
 * Prices: optional spending estimates in `unit` (for example `USD`), decimal strings. Which rates a formula needs
 * depends on the workload and is checked at composition; an explicit all-zero formula is allowed.
 */
export const pricingSchema = z.strictObject({
  unit: z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,31}$/, 'unit: a currency code or unit name such as USD'),
  input_per_million_tokens: decimalSchema.optional(),
  output_per_million_tokens: decimalSchema.optional(),
  cache_read_per_million_tokens: decimalSchema.optional(),
  cache_write_per_million_tokens: decimalSchema.optional(),
  per_image: decimalSchema.optional(),
  per_million_characters: decimalSchema.optional(),
  per_minute: decimalSchema.optional(),
});

/** A model definition as authored (catalog model entry or policy definition entry). */
export const modelDefinitionSchema = z.strictObject({
  inherit: definitionNameSchema.optional(),
  model_id: modelKeySchema.optional(),
  display_name: z.string().min(1).max(200).nullable().optional(),
  capabilities: capabilitiesSchema.optional(),
  pricing: pricingSchema.nullable().optional(),
});

/** A shared, price-free definition models inherit from; deployment configuration only. */
export const sharedModelDefinitionSchema = z.strictObject({
  capabilities: capabilitiesSchema.optional(),
});

/** Spec "Provider declaration": complete, and naming only supported adapters and lanes. */
export const providerDeclarationSchema = z.strictObject({
  display_name: z.string().min(1).max(200),
  base_url: z
    .string()
    .max(2048)
    .refine((raw) => {
      try {
        const url = new URL(raw);
        return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '';
      } catch {
        return false;
      }
    }, 'base_url: an absolute http(s) URL without credentials'),
  api_format: z.enum(API_FORMATS),
  credentials: z.enum(CREDENTIAL_LANES),
});

/** One provider in a catalog file: its declaration plus its models keyed by the part of the ref after `/`. */
const catalogProviderSchema = providerDeclarationSchema.extend({
  models: z.record(modelKeySchema, modelDefinitionSchema).optional(),
});

/** A catalog file (YAML or JSON): shared definitions and/or providers. */
export const catalogFileSchema = z.strictObject({
  model_definitions: z.record(definitionNameSchema, sharedModelDefinitionSchema).optional(),
  providers: z.record(providerIdSchema, catalogProviderSchema).optional(),
});

export type ModelDefinition = z.infer<typeof modelDefinitionSchema>;
export type SharedModelDefinition = z.infer<typeof sharedModelDefinitionSchema>;
export type ProviderDeclaration = z.infer<typeof providerDeclarationSchema>;
export type Capabilities = z.infer<typeof capabilitiesSchema>;
export type Pricing = z.infer<typeof pricingSchema>;
