import { z } from 'zod';
import {
  modelDefinitionSchema,
  pricingSchema,
  providerDeclarationSchema,
  sharedModelDefinitionSchema,
  tokenCounterSchema,
} from './catalog/catalog.schemas.ts';
import { CREDENTIAL_LANES, MODALITIES, WORKLOADS } from './catalog/wires.ts';
import { COST_UNIT_PATTERN } from './cost-unit/cost-unit.service.ts';
import { MODEL_TEST_OUTCOMES } from './model-test/model-test.outcome.ts';
import { MAX_LOCK_VERSION } from './policy/policy.service.ts';
import { UNAVAILABLE_REASONS } from './projection/projection.ts';

/**
 * Request and response schemas of the admin and member routes. The request schemas are the ones the handlers
 * validate with; the OpenAPI document is generated from these same objects (spec: Endpoints; issue: OpenAPI).
 */

/** Spec Endpoints rule 2: an integer from 0 through 2147483647 (a JSON number, not a string). */
const lockVersionSchema = z.number().int().min(0).max(MAX_LOCK_VERSION).describe("The provider row's lock_version as last read");

/** A complete model reference `<provider_id>/<upstream_model_id>`, carried whole in the body (rule 1). */
const modelRefSchema = z
  .string()
  .min(3)
  .max(400)
  .describe('Complete model reference <provider_id>/<upstream_model_id>; the upstream id may contain "/"');

const optionalVersion = lockVersionSchema.nullable().optional().describe('Omission means null (no policy yet)');
const requiredVersion = lockVersionSchema.nullable().describe('Required; null when the provider has no policy');

export const laneCommandSchema = z.strictObject({ enabled: z.boolean(), expected_lock_version: optionalVersion });
export const visibilityCommandSchema = z.strictObject({
  model: modelRefSchema,
  visible: z.boolean(),
  expected_lock_version: optionalVersion,
});
export const availabilityCommandSchema = z.strictObject({
  model: modelRefSchema,
  available: z.boolean(),
  expected_lock_version: requiredVersion,
});
export const apiKeyCommandSchema = z.strictObject({ api_key: z.string().describe('The provider API key; never returned') });
/**
 * The definition commands (spec: Endpoints; issue 14). `definition` is validated by the same grammar the catalog
 * files use; the routes declare it a definition field, so a malformed definition is 422 `validation_failed` naming
 * the field (spec rule 3), while a malformed version stays 400 `parameter_invalid` (rule 2).
 */
export const providerDefinitionCommandSchema = z.strictObject({
  definition: providerDeclarationSchema.describe(
    'The complete provider declaration: display_name, base_url, api_format and credentials; never a credential',
  ),
  expected_lock_version: optionalVersion,
});
export const providerDefinitionDeleteCommandSchema = z.strictObject({ expected_lock_version: optionalVersion });
export const modelDefinitionCommandSchema = z.strictObject({
  model: modelRefSchema,
  definition: modelDefinitionSchema.describe(
    'The complete model entry as authored; it replaces the stored entry whole (inheritance is not expanded)',
  ),
  expected_lock_version: optionalVersion,
});
export const modelDefinitionRefCommandSchema = z.strictObject({ model: modelRefSchema, expected_lock_version: optionalVersion });
/** Discovery and the model test take a required version (rule 4 and 8): a missing one is 400 `parameter_missing`. */
export const discoveryCommandSchema = z.strictObject({ expected_lock_version: requiredVersion });
export const modelTestCommandSchema = z.strictObject({ model: modelRefSchema, expected_lock_version: requiredVersion });
export const costUnitCommandSchema = z.strictObject({
  cost_unit: z.string().regex(COST_UNIT_PATTERN, 'a currency code or unit name such as USD').describe('For example a currency code'),
});

export const modelsQuerySchema = z.object({
  workload: z.enum(WORKLOADS).optional().describe('Only models of this workload'),
  available: z.enum(['true', 'false']).optional().describe('true: only available models; false: only unavailable ones'),
});

/**
 * Any path segment is accepted here: a provider id that names no provider (too long or malformed included) is an
 * unknown provider, 404 `not_found` (spec: Errors), answered by the lookup rather than as a malformed parameter.
 */
export const providerIdParamsSchema = z.object({
  provider_id: z
    .string()
    .describe('Provider id (lower-case letters, digits, ".", "_", "-"; at most 63 characters); an unknown id is 404 not_found'),
});

const parameterDescriptorView = z.object({
  kind: z.enum(['integer', 'number', 'string', 'boolean']),
  default: z.union([z.number(), z.string(), z.boolean(), z.null()]),
  minimum: z.number().nullable(),
  maximum: z.number().nullable(),
  allowed_values: z.array(z.union([z.string(), z.number()])).nullable(),
});

const composedCapabilitiesSchema = z.object({
  input_modalities: z.array(z.enum(MODALITIES)),
  output_modalities: z.array(z.enum(MODALITIES)),
  tool_calls: z.boolean(),
  streaming: z.boolean(),
  prompt_caching: z.boolean(),
  structured_output: z.boolean(),
  reasoning: z
    .object({
      efforts: z.array(z.string()).optional(),
      budget_tokens: z.object({ minimum: z.number().int(), maximum: z.number().int() }).optional(),
    })
    .nullable(),
  limits: z.object({
    combined_input_output_tokens: z.number().int().optional(),
    input_tokens: z.number().int().optional(),
    output_tokens: z.number().int().optional(),
  }),
  generation_parameters: z.record(z.string(), parameterDescriptorView),
  token_counter: tokenCounterSchema.nullable().describe('null: the byte estimate'),
  wire_options: z.object({ prompt_format: z.string().nullable() }),
  model_identity: z.string().nullable(),
});

export const modelRowSchema = z.object({
  ref: z.string(),
  provider_id: z.string(),
  model_id: z.string().describe('Effective upstream model id'),
  display_name: z.string().nullable(),
  workload: z.enum(WORKLOADS),
  capabilities: composedCapabilitiesSchema,
  pricing: pricingSchema.nullable().describe('Spending estimate; null when unknown'),
  token_counter_available: z
    .boolean()
    .describe(
      'false when the token counter the model selects cannot be used (its tokenizer file is missing or invalid); no other counter replaces it',
    ),
  available: z.boolean(),
  visible: z.boolean().describe('false when manually hidden or marked invalid'),
  unavailable_reason: z.enum(UNAVAILABLE_REASONS).nullable().describe('The first refusal, in priority order'),
});

const providerRowSchema = z.object({
  id: z.string(),
  display_name: z.string().nullable(),
  credentials: z.enum(CREDENTIAL_LANES).nullable(),
  enabled: z.boolean(),
  lock_version: lockVersionSchema.nullable().describe('null when no policy exists'),
  configured: z.boolean().describe('A credential is installed'),
  material_kind: z.string().nullable(),
  reauthorization_required: z.boolean(),
  unavailable_until: z.string().nullable().describe('ISO 8601 admission-delay floor, or null'),
  models: z.number().int(),
});

const configurationSchema = z.object({
  definition: providerDeclarationSchema.nullable(),
  source: z.enum(['catalog', 'override', 'custom', 'removed']),
  models: z.array(
    z.object({
      model: z.string(),
      definition: modelDefinitionSchema,
      source: z.enum(['catalog', 'override', 'custom']),
      removed: z.boolean(),
    }),
  ),
  model_definitions: z.record(z.string(), sharedModelDefinitionSchema),
});

const memberProviderRowSchema = z.object({
  id: z.string(),
  display_name: z.string().nullable(),
  credentials: z.enum(CREDENTIAL_LANES).nullable(),
  enabled: z.boolean(),
  configured: z.boolean(),
  reauthorization_required: z.boolean(),
  unavailable_until: z.string().nullable(),
  models: z.number().int().describe('Models visible to members'),
});

export const modelsResponseSchema = z.object({ models: z.array(modelRowSchema) });
export const providersResponseSchema = z.object({ model_providers: z.array(providerRowSchema) });
export const providerResponseSchema = z.object({ model_provider: providerRowSchema });
export const providerEnvelopeSchema = z.object({ model_provider: providerRowSchema, configuration: configurationSchema });
export const memberProvidersResponseSchema = z.object({ model_providers: z.array(memberProviderRowSchema) });
export const discoveryResponseSchema = z.object({
  models: z.array(z.object({ id: z.string().describe('The upstream model id'), display_name: z.string().nullable() })),
});
export const modelTestResponseSchema = z.object({
  model_test: z.object({
    outcome: z.enum(MODEL_TEST_OUTCOMES),
    duration_ms: z.number().int(),
    http_status: z.number().int().nullable().describe('The provider answer status; null when no answer was received'),
    availability_update: z.enum(['unchanged', 'applied', 'noop', 'stale', 'not_found', 'invalid']),
  }),
  model_provider: providerRowSchema,
});
export const costUnitResponseSchema = z.object({ account: z.object({ cost_unit: z.string().nullable() }) });
export const errorResponseSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/** `GET /usage` filters (issue 16 item 6); the range checks (order, 366 days) are the usage reads' own. */
export const usageQuerySchema = z.object({
  from: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('Start, inclusive: an ISO-8601 timestamp with a zone; default `to` minus 30 days'),
  to: z.iso.datetime({ offset: true }).optional().describe('End, exclusive: an ISO-8601 timestamp with a zone; default now'),
  model: modelRefSchema.optional().describe('Only requests for this complete model reference'),
  human_id: z.string().min(1).max(200).optional().describe('Only requests made by this Human'),
});

const usageFiguresShape = {
  requests: z.number().int(),
  input_tokens: z.number().int().describe('As the providers reported them; a request without reported usage adds 0'),
  output_tokens: z.number().int(),
  cached_input_tokens: z.number().int(),
  cost: z.string().nullable().describe('Exact decimal sum in cost_unit; null when a request that reached the provider has no known cost'),
};

export const usageResponseSchema = z.object({
  usage: z.object({
    from: z.string().describe('The range read, inclusive (ISO-8601, UTC)'),
    to: z.string().describe('The range read, exclusive (ISO-8601, UTC)'),
    cost_unit: z.string().nullable().describe("The Account's cost unit; null when none is configured"),
    totals: z.object(usageFiguresShape),
    by_day_and_model: z
      .array(
        z.object({
          day: z.string().describe('UTC date YYYY-MM-DD on which the requests started'),
          model: z.string(),
          ...usageFiguresShape,
          failed: z.number().int().describe('Requests whose outcome is not succeeded (upstream failure, client gone, refusal)'),
        }),
      )
      .describe('Ordered by day, then model'),
  }),
});
