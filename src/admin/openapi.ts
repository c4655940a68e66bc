import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../core/errors.ts';
import { SESSION_COOKIE } from '../core/identity/auth.ts';
import { errorResponseSchema } from './admin.schemas.ts';
import {
  documentedOperations,
  fastifyPath,
  registeredApiRoutes,
  routeErrors,
  type AnyApiRoute,
  type ApiRoute,
  type DocumentedOperation,
} from '../core/http/api-route.ts';

/** Where the document is served. */
export const OPENAPI_PATH = '/api/v1/openapi.json';

/**
 * The document changes only with a deploy, but replicas of two releases can answer side by side during one: caches
 * may keep it, yet must revalidate each use (`no-cache`), which costs a 304 against the ETag and never serves the
 * previous release's routes after a client has seen the new ones. It is public: it holds no data.
 */
const OPENAPI_CACHE_CONTROL = 'public, no-cache';

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
 * An operation of a route table that another surface also answers on the same path and method (the OpenAI client's
 * model list): each status it adds, or whose JSON body it answers in another shape, accepts either shape.
 */
function withAlternativeResponses(operation: JsonObject, alternative: JsonObject): JsonObject {
  const responses = { ...(operation.responses as Record<string, JsonObject>) };
  for (const [status, response] of Object.entries(alternative.responses as Record<string, JsonObject>)) {
    const current = responses[status];
    const schemaOf = (r: JsonObject | undefined) => (r?.content as Record<string, JsonObject> | undefined)?.['application/json']?.schema;
    const [mine, theirs] = [schemaOf(current), schemaOf(response)];
    responses[status] =
      current && mine !== undefined && theirs !== undefined
        ? {
            description: `${String(current.description)}; or ${String(response.description)}`,
            content: { 'application/json': { schema: { anyOf: [mine, theirs] } } },
          }
        : (current ?? response);
  }
  return { ...operation, responses };
}

/**
 * Builds the OpenAPI 3.1 document of a route table. Request parameters and bodies come from the very zod schemas
 * the handlers validate with, responses from the response schemas.
 */
function buildOpenApiDocument(routes: readonly AnyApiRoute[], others: readonly DocumentedOperation[]): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const anyRoute of routes) {
    // Only the schemas are read here, never the handler, so the erased generics can be restored to ZodType.
    const route = anyRoute as ApiRoute;
    const cookieToo = route.method === 'GET' ? [{ bearer: [] }, { sessionCookie: [] }] : [{ bearer: [] }];
    const security =
      route.auth === 'administrator' || route.auth === 'session' ? cookieToo : route.auth === 'member' ? [{ bearer: [] }] : [];
    const operation: JsonObject = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      security,
      parameters: [...parametersOf(route.params, 'path'), ...parametersOf(route.query, 'query')],
      ...(route.command
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: jsonSchema(z.strictObject({ command: route.command }), 'input') } },
            },
          }
        : route.body
          ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.body, 'input') } } } }
          : {}),
      responses: {
        '200': { description: 'Success', content: { 'application/json': { schema: jsonSchema(route.response, 'output') } } },
        ...errorResponses(routeErrors(anyRoute)),
      },
    };
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }
  for (const other of others) {
    const item = (paths[other.path] ??= {});
    const method = other.method.toLowerCase();
    const existing = item[method];
    item[method] = existing ? withAlternativeResponses(existing, other.operation) : other.operation;
  }
  // The document describes its own route too, so every route under /api/v1 is in it.
  paths[OPENAPI_PATH] = {
    get: {
      operationId: 'getOpenApiDocument',
      summary: 'This document (public)',
      tags: ['meta'],
      security: [],
      parameters: [],
      responses: {
        '200': {
          description: 'The OpenAPI 3.1 document',
          headers: {
            'Cache-Control': { schema: { const: OPENAPI_CACHE_CONTROL } },
            ETag: { description: 'Changes when the document does (with a deploy)', schema: { type: 'string' } },
          },
          content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'paths'] } } },
        },
        '304': { description: 'Not modified (If-None-Match matched the ETag)' },
        // The server's boundary refuses unstorable text in the query or a cookie before any route runs.
        ...errorResponses(['parameter_invalid']),
      },
    },
  };
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Platform REST API: sessions, model-provider administration and member model discovery',
      version: '1.0.0',
      description:
        'Session routes under /api/v1/sessions; admin routes under /api/v1/admin (Human owner or administrator); member routes under /agent_api/v1 (member-plane and executor tokens).',
    },
    // Relative, so it resolves against wherever this document was fetched from (OpenAPI 3.1 "Server Object"): the
    // same document is right behind any host name, port, TLS terminator or proxy, and stays one cacheable byte
    // string. A URL built from the request's Host or X-Forwarded-* headers would trust client-supplied values and
    // make every host a different document.
    servers: [{ url: '/', description: 'The origin serving this document' }],
    paths,
    components: {
      schemas: {
        Error: jsonSchema(errorResponseSchema, 'output'),
        ...Object.fromEntries(others.flatMap((o) => Object.entries(o.schemas ?? {}))),
      },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'API Session bearer, platform-plane token (admin) or member-plane/executor token (member)',
        },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'Browser session; GET and HEAD only' },
      },
    },
  };
}

/** True when an If-None-Match header lists `etag` (or `*`); weak comparison, as RFC 9110 prescribes for GET. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || bare(tag) === bare(etag));
}

/**
 * `GET /api/v1/openapi.json`: public, since it describes routes and holds no data. The document covers every route
 * table registered on `app` through `registerApiRoutes` (sessions, admin, member), built once when the app is ready,
 * after every table has been registered, so a new table cannot be left out of it.
 */
export function registerOpenApiRoute(app: FastifyInstance): void {
  let text = '';
  let etag = '';
  app.addHook('onReady', async () => {
    text = JSON.stringify(buildOpenApiDocument(registeredApiRoutes(app), documentedOperations(app)));
    etag = `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
  });
  app.get(fastifyPath(OPENAPI_PATH), async (request, reply) => {
    void reply.header('cache-control', OPENAPI_CACHE_CONTROL).header('etag', etag);
    if (matchesEtag(request.headers['if-none-match'], etag)) return reply.status(304).send();
    return reply.type('application/json; charset=utf-8').send(text);
  });
}
