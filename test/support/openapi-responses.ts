import { gunzipSync } from 'node:zlib';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { OPENAPI_PATH } from '../../src/admin/openapi.ts';

/**
 * Holds every REST response of a test server to the OpenAPI document that server publishes. The check sits on the
 * server (a Fastify `onSend` hook added by `startRestApp`), not on one client, so every request a test makes is
 * checked whatever sends it (the harness client, plain fetch, curl from the docs test, the openai npm client), and
 * a route added later cannot escape it: a registered route under a documented prefix that the document does not
 * describe is itself a violation.
 */

/** Path prefixes the document is responsible for. Health routes and the gRPC HTTP mappings have other contracts. */
const DOCUMENTED_PREFIXES = ['/api/v1/', '/agent_api/v1/'] as const;

// ajv-formats is CommonJS with its function on `default` under ESM interop.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
) => Ajv2020;

/** One response as the server sends it. */
export interface Exchange {
  method: string;
  /** The request path without its query string. */
  path: string;
  /** The matched route's URL in Fastify form (`/x/:id`), or undefined when no route matched (404/405 answers). */
  route: string | undefined;
  status: number;
  headers: Record<string, string | undefined>;
  /** The body as sent (gzip-decoded by the caller), or undefined when there is none. */
  body: string | undefined;
}

// The document is untyped JSON; these are the parts the check reads.
interface MediaType {
  schema?: unknown;
}
interface ResponseObject {
  content?: Record<string, MediaType>;
  headers?: Record<string, { schema?: unknown }>;
}
interface Operation {
  responses: Record<string, ResponseObject>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown> };
}

/** JSON Pointer segment inside a URI fragment (RFC 6901 §6). */
function pointer(...segments: string[]): string {
  return segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
}

/** `/x/:id` → `/x/{id}`, the document's template form. */
function templateOf(route: string): string {
  return route.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * A checker for one document: returns what is wrong with an exchange, or undefined when it holds to the document.
 * Schemas are compiled from the document itself (its `$ref`s resolve inside it), once per response.
 */
export function createResponseChecker(document: unknown): (exchange: Exchange) => string | undefined {
  const doc = document as Document;
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: false }));
  const id = 'urn:platform:openapi';
  ajv.addSchema(doc, id);
  const compiled = new Map<string, ValidateFunction>();
  const validator = (...segments: string[]): ValidateFunction => {
    const key = pointer(...segments);
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.getSchema(`${id}#/${key}`);
      if (!validate) throw new Error(`the document has no schema at #/${key}`);
      compiled.set(key, validate);
    }
    return validate;
  };
  const describe = (validate: ValidateFunction): string => {
    const error = validate.errors?.[0];
    return error
      ? `${error.instancePath || '(root)'} ${error.message ?? 'is invalid'}${error.params ? ` ${JSON.stringify(error.params)}` : ''}`
      : 'is invalid';
  };
  const parse = (body: string | undefined): { ok: true; value: unknown } | { ok: false } => {
    try {
      return { ok: true, value: JSON.parse(body ?? '') as unknown };
    } catch {
      return { ok: false };
    }
  };

  return (exchange) => {
    if (!DOCUMENTED_PREFIXES.some((prefix) => exchange.path.startsWith(prefix))) return undefined;
    const where = `${exchange.method} ${exchange.path} → ${exchange.status}`;
    const head = exchange.method === 'HEAD';
    if (exchange.route === undefined) {
      // No route matched: only "there is no such route/method" (or an unroutable URL) may answer, in the envelope.
      if (![400, 404, 405].includes(exchange.status)) return `${where}: no route matched, yet the status is not 400, 404 or 405`;
      if (head) return undefined;
      const parsed = parse(exchange.body);
      if (!parsed.ok) return `${where}: the body is not JSON`;
      const envelope = validator('components', 'schemas', 'Error');
      return envelope(parsed.value) ? undefined : `${where}: not the error envelope: ${describe(envelope)}`;
    }
    const template = templateOf(exchange.route);
    const method = head ? 'get' : exchange.method.toLowerCase();
    const operation = doc.paths[template]?.[method];
    if (!operation) return `${where}: undocumented route ${method.toUpperCase()} ${template}`;
    const status = String(exchange.status);
    const response = operation.responses[status] ?? operation.responses.default;
    if (!response)
      return `${where}: status ${status} is not documented for ${method.toUpperCase()} ${template} (documented: ${Object.keys(operation.responses).join(', ')})`;
    const responseKey = operation.responses[status] ? status : 'default';
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      if (header.schema === undefined) continue;
      const value = exchange.headers[name.toLowerCase()];
      if (value === undefined) return `${where}: the documented header ${name} is missing`;
      const validate = validator('paths', template, method, 'responses', responseKey, 'headers', name, 'schema');
      if (!validate(value)) return `${where}: header ${name} ${describe(validate)}`;
    }
    if (head) return undefined;
    if (!response.content) return exchange.body ? `${where}: a body was sent where the document declares none` : undefined;
    const mediaType = (exchange.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
    if (!response.content[mediaType])
      return `${where}: content type ${mediaType || '(none)'} is not documented (documented: ${Object.keys(response.content).join(', ')})`;
    if (response.content[mediaType].schema === undefined) return undefined;
    const parsed = parse(exchange.body);
    if (!parsed.ok) return `${where}: the body is not JSON`;
    const validate = validator('paths', template, method, 'responses', responseKey, 'content', mediaType, 'schema');
    return validate(parsed.value) ? undefined : `${where}: the body does not match the documented schema: ${describe(validate)}`;
  };
}

/** The violations a server has recorded. */
export interface ResponseCheck {
  /** Returns the violations recorded since the last call and forgets them. */
  take(): string[];
}

function bodyText(payload: unknown, encoding: string | undefined): string | undefined {
  if (payload === null || payload === undefined) return undefined;
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return (encoding === 'gzip' ? gunzipSync(payload) : payload).toString('utf8');
  // A stream: no route of the documented prefixes streams, so say so rather than skip it silently.
  return '<stream>';
}

/**
 * Adds the check to `app` (before it is ready) and loads the document the app itself serves once it is. Every
 * response under the documented prefixes is checked; violations are recorded for the test to fail on.
 */
export async function checkResponsesAgainstOpenApi(app: FastifyInstance): Promise<ResponseCheck> {
  // Set once the app is ready and serves its document; responses before that (the document's own) are not checked.
  const state: { check?: (exchange: Exchange) => string | undefined } = {};
  const violations: string[] = [];
  app.addHook('onSend', async (request, reply, payload) => {
    const check = state.check;
    if (!check) return payload;
    const headers: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(reply.getHeaders()))
      headers[name.toLowerCase()] = value === undefined ? undefined : String(value);
    try {
      const problem = check({
        method: request.method,
        path: request.url.split('?')[0] ?? request.url,
        route: request.routeOptions.url,
        status: reply.statusCode,
        headers,
        body: bodyText(payload, headers['content-encoding']),
      });
      if (problem) violations.push(problem);
    } catch (error) {
      violations.push(`${request.method} ${request.url}: the check failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    return payload;
  });
  await app.ready();
  const served = await app.inject({ method: 'GET', url: OPENAPI_PATH });
  if (served.statusCode !== 200) throw new Error(`${OPENAPI_PATH} answered ${served.statusCode}`);
  state.check = createResponseChecker(JSON.parse(served.body));
  return {
    take() {
      return violations.splice(0, violations.length);
    },
  };
}
