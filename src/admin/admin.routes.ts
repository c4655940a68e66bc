import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../core/identity/auth.ts';
import {
  apiKeyCommandSchema,
  availabilityCommandSchema,
  costUnitCommandSchema,
  costUnitResponseSchema,
  discoveryCommandSchema,
  discoveryResponseSchema,
  laneCommandSchema,
  modelsQuerySchema,
  modelsResponseSchema,
  modelTestCommandSchema,
  modelTestResponseSchema,
  providerEnvelopeSchema,
  providerIdParamsSchema,
  providerResponseSchema,
  providersResponseSchema,
  visibilityCommandSchema,
} from './admin.schemas.ts';
import { definitionRoutes } from './definitions/definitions.routes.ts';
import { defineRoute, JsonText, registerApiRoutes, type AnyApiRoute } from '../core/http/api-route.ts';
import type { ModelPlane } from './model-plane.ts';
import { usageRoutes } from './usage/usage.routes.ts';
import { registerOpenApiRoute } from './openapi.ts';
import { createStatePrefetch } from './state-prefetch.ts';

/** Base path of the admin API (spec: "All paths are under {base_url}/api/v1/admin"). */
const ADMIN_BASE = '/api/v1/admin';

const AUTH_ERRORS = ['unauthorized', 'administrator_required'] as const;
const COMMAND_ERRORS = [
  ...AUTH_ERRORS,
  'parameter_missing',
  'parameter_invalid',
  'not_found',
  'stale_object',
  'validation_failed',
  'model_plane_unavailable',
] as const;

function filterOf(query: { workload?: string | undefined; available?: 'true' | 'false' | undefined }) {
  return {
    ...(query.workload ? { workload: query.workload as never } : {}),
    ...(query.available ? { available: query.available === 'true' } : {}),
  };
}

/**
 * The part-1 admin routes (spec: Endpoints), thin: auth, schemas and a call into the model plane. Every success is
 * 200; every error the `{error:{code,message}}` envelope.
 */
function adminRoutes(plane: ModelPlane): AnyApiRoute[] {
  const tag = 'admin';
  // The provider-call commands read the Account's state while the caller's credential is looked up (issue 15's
  // latency target; see state-prefetch.ts).
  const prefetch = createStatePrefetch((accountId) => plane.readState(accountId));
  return [
    defineRoute({
      method: 'GET',
      path: `${ADMIN_BASE}/models`,
      operationId: 'adminListModels',
      summary: 'The account-effective model catalog, ordered by ref, unavailable models included',
      tag,
      auth: 'administrator',
      query: modelsQuerySchema,
      response: modelsResponseSchema,
      errors: [...AUTH_ERRORS, 'parameter_invalid', 'model_plane_unavailable'],
      handler: async ({ principal, query }) => {
        const body = await plane.adminModelsJson(principal.accountId, filterOf(query));
        return new JsonText(body.json, body.gzip);
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${ADMIN_BASE}/model_providers`,
      operationId: 'adminListModelProviders',
      summary: 'Every provider row (a removed custom provider is absent)',
      tag,
      auth: 'administrator',
      response: providersResponseSchema,
      errors: [...AUTH_ERRORS, 'model_plane_unavailable'],
      handler: async ({ principal }) => ({ model_providers: await plane.adminProviders(principal.accountId) }),
    }),
    defineRoute({
      method: 'GET',
      path: `${ADMIN_BASE}/model_providers/{provider_id}`,
      operationId: 'adminGetModelProvider',
      summary: 'One provider row with its configuration',
      tag,
      auth: 'administrator',
      params: providerIdParamsSchema,
      response: providerEnvelopeSchema,
      errors: [...AUTH_ERRORS, 'not_found', 'model_plane_unavailable'],
      handler: async ({ principal, params }) => plane.adminProvider(principal.accountId, params.provider_id),
    }),
    defineRoute({
      method: 'PUT',
      path: `${ADMIN_BASE}/model_providers/{provider_id}/lane`,
      operationId: 'adminSetLane',
      summary: 'Enable or disable the provider lane (enabling creates the policy if missing)',
      tag,
      auth: 'administrator',
      params: providerIdParamsSchema,
      command: laneCommandSchema,
      response: providerResponseSchema,
      errors: COMMAND_ERRORS,
      handler: async ({ principal, params, command }) =>
        plane.setLane(principal.accountId, params.provider_id, command.enabled, command.expected_lock_version ?? null),
    }),
    defineRoute({
      method: 'PUT',
      path: `${ADMIN_BASE}/model_providers/{provider_id}/model_visibility`,
      operationId: 'adminSetModelVisibility',
      summary: 'Hide or show a model for every Agent of the Account',
      tag,
      auth: 'administrator',
      params: providerIdParamsSchema,
      command: visibilityCommandSchema,
      response: providerResponseSchema,
      errors: COMMAND_ERRORS,
      handler: async ({ principal, params, command }) =>
        plane.setVisibility(principal.accountId, params.provider_id, command.model, command.visible, command.expected_lock_version ?? null),
    }),
    defineRoute({
      method: 'PUT',
      path: `${ADMIN_BASE}/model_providers/{provider_id}/model_availability`,
      operationId: 'adminSetModelAvailability',
      summary: 'Mark a model invalid or clear the mark (requires a policy)',
      tag,
      auth: 'administrator',
      params: providerIdParamsSchema,
      command: availabilityCommandSchema,
      requiredCommandFields: ['expected_lock_version'],
      response: providerResponseSchema,
      errors: COMMAND_ERRORS,
      handler: async ({ principal, params, command }) =>
        plane.setAvailability(principal.accountId, params.provider_id, command.model, command.available, command.expected_lock_version),
    }),
    defineRoute({
      method: 'POST',
      path: `${ADMIN_BASE}/model_providers/{provider_id}/model_discovery`,
      operationId: 'adminDiscoverModels',
      summary: "Read the provider's model directory and mark configured models it does not list invalid (no retry, no redirect)",
      tag,
      auth: 'administrator',
      params: providerIdParamsSchema,
      command: discoveryCommandSchema,
      requiredCommandFields: ['expected_lock_version'],
      response: discoveryResponseSchema,
      errors: COMMAND_ERRORS,
      beforeAuth: prefetch.start,
      handler: async ({ principal, params, command, reply }) =>
        plane.discoverModels(
          principal.accountId,
          params.provider_id,
          command.expected_lock_version,
          prefetch.take(reply.request, principal),
        ),
    }),
    defineRoute({
      method: 'POST',
      path: `${ADMIN_BASE}/model_providers/{provider_id}/model_test`,
      operationId: 'adminTestModel',
      summary: 'Send one fixed diagnostic request to the model (30 s deadline, no retry; 10 per Human per three minutes)',
      tag,
      auth: 'administrator',
      params: providerIdParamsSchema,
      command: modelTestCommandSchema,
      requiredCommandFields: ['expected_lock_version'],
      response: modelTestResponseSchema,
      errors: [...COMMAND_ERRORS, 'rate_limited'],
      beforeAuth: prefetch.start,
      handler: async ({ principal, params, command, reply }) =>
        plane.testModel(
          principal.accountId,
          principal.humanId,
          params.provider_id,
          command.model,
          command.expected_lock_version,
          prefetch.take(reply.request, principal),
        ),
    }),
    defineRoute({
      method: 'PUT',
      path: `${ADMIN_BASE}/model_providers/{provider_id}/api_key`,
      operationId: 'adminPutApiKey',
      summary: 'Install or rotate the API key; enables the provider; the key is never returned',
      tag,
      auth: 'administrator',
      params: providerIdParamsSchema,
      command: apiKeyCommandSchema,
      response: providerResponseSchema,
      errors: [
        ...AUTH_ERRORS,
        'parameter_missing',
        'parameter_invalid',
        'not_found',
        'material_kind_conflict',
        'stale_object',
        'model_plane_unavailable',
      ],
      handler: async ({ principal, params, command }) => plane.putApiKey(principal.accountId, params.provider_id, command.api_key),
    }),
    defineRoute({
      method: 'DELETE',
      path: `${ADMIN_BASE}/model_providers/{provider_id}/api_key`,
      operationId: 'adminDeleteApiKey',
      summary: 'Clear the API key; the policy and enabled stay unchanged',
      tag,
      auth: 'administrator',
      params: providerIdParamsSchema,
      response: providerResponseSchema,
      errors: [...AUTH_ERRORS, 'not_found', 'material_kind_conflict', 'stale_object', 'model_plane_unavailable'],
      handler: async ({ principal, params }) => plane.deleteApiKey(principal.accountId, params.provider_id),
    }),
    defineRoute({
      method: 'GET',
      path: `${ADMIN_BASE}/account/cost_unit`,
      operationId: 'adminGetCostUnit',
      summary: "The Account's cost unit, or null when none is configured",
      tag,
      auth: 'administrator',
      response: costUnitResponseSchema,
      errors: AUTH_ERRORS,
      handler: async ({ principal }) => ({ account: await plane.costUnit.get(principal.accountId) }),
    }),
    defineRoute({
      method: 'PUT',
      path: `${ADMIN_BASE}/account/cost_unit`,
      operationId: 'adminConfigureCostUnit',
      summary: 'Configure the cost unit once (the same value again is accepted; another value is 409 conflict)',
      tag,
      auth: 'administrator',
      command: costUnitCommandSchema,
      response: costUnitResponseSchema,
      errors: [...AUTH_ERRORS, 'parameter_missing', 'parameter_invalid', 'conflict'],
      handler: async ({ principal, command }) => ({ account: await plane.costUnit.configure(principal.accountId, command.cost_unit) }),
    }),
  ];
}

/**
 * Registers the admin routes and the OpenAPI document, which describes them with every other route table of the app
 * (the session routes and the member plane, which `buildRestApp` mounts beside them). Called once from `buildRestApp`.
 */
export function registerModelPlaneRoutes(app: FastifyInstance, deps: { plane: ModelPlane; auth: Authenticator }): void {
  registerApiRoutes(
    app,
    [
      ...adminRoutes(deps.plane),
      ...definitionRoutes(deps.plane, { base: ADMIN_BASE, errors: COMMAND_ERRORS }),
      ...usageRoutes(deps.plane.usage, { base: ADMIN_BASE }),
    ],
    {
      auth: deps.auth,
    },
  );
  registerOpenApiRoute(app);
}
