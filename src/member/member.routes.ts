import type { FastifyInstance } from 'fastify';
import { memberProvidersResponseSchema, modelsQuerySchema, modelsResponseSchema, type ModelPlane } from '../admin/index.ts';
import { defineRoute, JsonText, registerApiRoutes, type AnyApiRoute } from '../core/http/api-route.ts';
import type { Authenticator } from '../core/identity/auth.ts';
import { inferenceRequestRoutes } from './inference/inference-requests.routes.ts';

/** Base path of the member plane (spec: Versioning). */
const MEMBER_BASE = '/agent_api/v1';

/**
 * Member-plane model discovery: read-only, for member-plane and executor tokens. It reads the same projection as
 * the admin routes, minus hidden and invalid models. There is deliberately no write route here: provider writes
 * have no member-plane alias (spec: Endpoints rule 13).
 */
export function memberRoutes(plane: ModelPlane): AnyApiRoute[] {
  const tag = 'member';
  const errors = ['unauthorized', 'model_plane_unavailable'] as const;
  return [
    defineRoute({
      method: 'GET',
      path: `${MEMBER_BASE}/models`,
      operationId: 'memberListModels',
      summary: 'Models visible to Agents of the Account, ordered by ref (hidden and invalid models are absent)',
      tag,
      auth: 'member',
      query: modelsQuerySchema,
      response: modelsResponseSchema,
      errors: [...errors, 'parameter_invalid'],
      handler: async ({ principal, query }) => {
        const body = await plane.memberModelsJson(principal.accountId, {
          ...(query.workload ? { workload: query.workload } : {}),
          ...(query.available ? { available: query.available === 'true' } : {}),
        });
        return new JsonText(body.json, body.gzip);
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${MEMBER_BASE}/model_providers`,
      operationId: 'memberListModelProviders',
      summary: 'Providers of the Account, without policy versions or credential details',
      tag,
      auth: 'member',
      response: memberProvidersResponseSchema,
      errors,
      handler: async ({ principal }) => ({ model_providers: await plane.memberProviders(principal.accountId) }),
    }),
  ];
}

/** Mounts the member plane's routes; the admin service's OpenAPI document lists them with its own. */
export function registerMemberRoutes(app: FastifyInstance, deps: { plane: ModelPlane; auth: Authenticator }): void {
  registerApiRoutes(app, [...memberRoutes(deps.plane), ...inferenceRequestRoutes(deps.plane, MEMBER_BASE)], { auth: deps.auth });
}
