import { z } from 'zod';
import type { FastifyInstance } from 'fastify';
import { memberProvidersResponseSchema, modelsQuerySchema, modelsResponseSchema, type ModelPlane } from '../admin/index.ts';
import { defineRoute, JsonText, registerApiRoutes, type AnyApiRoute } from '../core/http/api-route.ts';
import type { Authenticator } from '../core/identity/auth.ts';
import { inferenceRequestRoutes } from './inference/inference-requests.routes.ts';
import { openAiModelListSchema } from './inference/openai.openapi.ts';
import { registerOpenAiRoutes } from './inference/openai.routes.ts';

/** The member discovery query, plus the switch to OpenAI's list shape (also chosen by the OpenAI client's headers). */
const memberModelsQuerySchema = modelsQuerySchema.extend({
  format: z.enum(['openai']).optional().describe("openai: OpenAI's model list shape of the visible, available models"),
});

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
      query: memberModelsQuerySchema,
      // The OpenAI client's variant of this path (./inference/openai.routes.ts) answers OpenAI's list.
      response: z.union([modelsResponseSchema, openAiModelListSchema]),
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
  // The OpenAI-compatible surface of the same execution path (OpenAI's shapes and errors, so its clients work unchanged).
  registerOpenAiRoutes(app, { engine: deps.plane, plane: deps.plane, auth: deps.auth });
}
