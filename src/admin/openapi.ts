import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../core/errors.ts';
import { SESSION_COOKIE } from '../core/identity/auth.ts';
import { errorResponseSchema } from './admin.schemas.ts';
import { fastifyPath, routeErrors, type AnyApiRoute, type ApiRoute } from './http/api-route.ts';

/** Where the document is served. */
export const OPENAPI_PATH = '/api/v1/openapi.json';

type JsonObject = Record<string, unknown>;

/** JSON Schema (draft 2020-12, OpenAPI 3.1's dialect) of a zod schema, without the `$schema` marker. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonObject;
  delete out.$schema;
  return out;
}

function parametersOf(schema: z.ZodType | undefined, where: 'path' | 'query'): JsonObject[] {
  if (!schema) return [];
  const json = jsonSchema(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, JsonObject>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: where, required: where === 'path' || required.has(name), ...(description ? { description } : {}), schema: rest };
  });
}

function errorResponses(codes: readonly ErrorCode[]): Record<string, JsonObject> {
  const byStatus = new Map<number, string[]>();
  for (const code of codes) {
    const status = ERROR_CODES[code].http;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, JsonObject> = {};
  for (const [status, list] of [...byStatus.entries()].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: `Error envelope; code ${list.join(' or ')}`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return out;
}

/**
 * Builds the OpenAPI 3.1 document of a route table. Request parameters and bodies come from the very zod schemas
 * the handlers validate with, responses from the response schemas.
 */
export function buildOpenApiDocument(routes: readonly AnyApiRoute[]): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const anyRoute of routes) {
    // Only the schemas are read here, never the handler, so the erased generics can be restored to ZodType.
    const route = anyRoute as ApiRoute;
    const security =
      route.auth === 'administrator'
        ? route.method === 'GET'
          ? [{ bearer: [] }, { sessionCookie: [] }]
          : [{ bearer: [] }]
        : route.auth === 'member'
          ? [{ bearer: [] }]
          : [];
    const operation: JsonObject = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      security,
      parameters: [...parametersOf(route.params, 'path'), ...parametersOf(route.query, 'query')],
      ...(route.command
        ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(z.strictObject({ command: route.command }), 'input') } } } }
        : {}),
      responses: {
        '200': { description: 'Success', content: { 'application/json': { schema: jsonSchema(route.response, 'output') } } },
        ...errorResponses(routeErrors(anyRoute)),
      },
    };
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Platform model-provider admin API and member model discovery',
      version: '1.0.0',
      description: 'Admin routes under /api/v1/admin (Human owner or administrator); member routes under /agent_api/v1 (member-plane and executor tokens).',
    },
    paths,
    components: {
      schemas: { Error: jsonSchema(errorResponseSchema, 'output') },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'API Session bearer, platform-plane token (admin) or member-plane/executor token (member)' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'Browser session; GET and HEAD only' },
      },
    },
  };
}

/** `GET /api/v1/openapi.json`: public, since it describes routes and holds no data. */
export function registerOpenApiRoute(app: FastifyInstance, routes: readonly AnyApiRoute[]): void {
  const text = JSON.stringify(buildOpenApiDocument(routes));
  app.get(fastifyPath(OPENAPI_PATH), async (_request, reply) => reply.type('application/json; charset=utf-8').send(text));
}
