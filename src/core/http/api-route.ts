import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { AppError, type ErrorCode } from '../errors.ts';
import { requireAdministrator, requireMemberPlane, requireSession, SESSION_COOKIE, type Authenticator } from '../identity/auth.ts';
import type { Principal } from '../identity/identity.model.ts';
import { parseInput, unknownFieldsMessage } from '../validation.ts';

/**
 * A declarative route: method, path, auth boundary, the zod schemas that validate its input, its response schema
 * and the errors it can answer. The same table registers the Fastify routes and generates the OpenAPI document,
 * so the description cannot drift from what is enforced.
 */

/**
 * Pre-serialised JSON, sent as is (large catalog reads are assembled from cached fragments). `gzip`, when given,
 * returns the same body compressed; it is used for clients that accept gzip and is expected to be memoised by its
 * owner, so a repeated read costs no compression.
 */
export class JsonText {
  constructor(
    readonly text: string | Buffer,
    readonly gzip?: () => Buffer,
  ) {}
}

/** True when the request's Accept-Encoding admits gzip (a `q=0` refuses it). */
function acceptsGzip(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '');
  for (const part of value.split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== '*') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

/** Reads the credential parts of a request for the authenticator. */
export function credentialsOf(request: FastifyRequest): { authorization: string | undefined; cookie: string | undefined } {
  return { authorization: request.headers.authorization, cookie: request.cookies[SESSION_COOKIE] };
}

/** Who may call a route: the admin boundary, the member plane, any API Session (the session routes), or anyone. */
type RouteAuth = 'administrator' | 'member' | 'session' | 'public';

interface RouteInput<P extends z.ZodType, Q extends z.ZodType, C extends z.ZodType, B extends z.ZodType = z.ZodType> {
  /** Null only on public routes. */
  principal: Principal;
  params: z.infer<P>;
  query: z.infer<Q>;
  command: z.infer<C>;
  /** The parsed body of a route declaring `body` (not a command). */
  body: z.infer<B>;
  /** For the few routes that set more than the body (the session cookie). */
  reply: FastifyReply;
}

export interface ApiRoute<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  C extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  method: 'GET' | 'PUT' | 'DELETE' | 'POST';
  /** OpenAPI form, `{provider_id}` for parameters. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  auth: RouteAuth;
  params?: P;
  query?: Q;
  /** The body is `{"command": <this>}` (spec: "Mutation bodies have the root command"). */
  command?: C;
  /** A body that is not a command (sign-in's `{email, password}`); a route declares `command` or `body`, not both. */
  body?: B;
  /** Command fields whose absence is 400 `parameter_missing` rather than `parameter_invalid`. */
  requiredCommandFields?: readonly string[];
  /**
   * Command fields holding a definition (the command schema must be an object schema): a missing or malformed value
   * there is 422 `validation_failed` naming the field (spec: Endpoints rule 3, "invalid declarations give 422"),
   * while the other fields keep 400. Other fields are checked first, so a bad version is still 400.
   */
  definitionFields?: readonly string[];
  response: z.ZodType;
  errors: readonly ErrorCode[];
  rateLimit?: { max: number; timeWindow: number };
  /** Largest body in bytes, for a route whose bodies outgrow the app's limit (`PLATFORM_BODY_LIMIT_BYTES`). */
  bodyLimit?: number;
  /**
   * Called as the request arrives, before authentication, for a read the handler will need that may overlap the
   * credential lookup (one database round trip fewer in sequence). The caller is not authenticated yet: whatever it
   * starts must be safe to discard, and the handler uses it only for the principal authentication then returns.
   */
  beforeAuth?: (request: FastifyRequest) => void;
  handler(input: RouteInput<P, Q, C, B>): Promise<unknown>;
}

/**
 * Every error a route can answer: its own list plus what the shared machinery adds. Authentication runs before
 * the handler (401 on every authenticated route, 403 on admin routes for a member's session), and a route that
 * takes a body can meet a missing field (400); any method but GET can meet the server's body limit (413), a
 * non-JSON content type or charset (415) and malformed JSON (400).
 * Any request can carry text neither database can store (in a path parameter, the query, a bearer or a cookie),
 * which the server's boundary refuses with 400 `parameter_invalid` before the route runs.
 * The OpenAPI document declares exactly this list.
 */
export function routeErrors(route: AnyApiRoute): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.errors);
  codes.add('parameter_invalid');
  if (route.auth !== 'public') codes.add('unauthorized');
  if (route.auth === 'administrator') codes.add('administrator_required');
  if (route.command || route.body) codes.add('parameter_missing');
  // The server reads a body sent with any method but GET (a DELETE may carry one): its size, type and charset are
  // checked before the route runs, whether or not the route wants a body.
  if (route.method !== 'GET') for (const code of ['payload_too_large', 'unsupported_media_type'] as const) codes.add(code);
  return [...codes];
}

/** Keeps the generic parameters of one route while building a heterogeneous table. */
export function defineRoute<P extends z.ZodType, Q extends z.ZodType, C extends z.ZodType, B extends z.ZodType = z.ZodType>(
  route: ApiRoute<P, Q, C, B>,
): AnyApiRoute {
  return route;
}

// A table mixes routes with different schemas; their handlers are only ever called with input parsed by their own
// schemas, so the erased type is safe here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyApiRoute = ApiRoute<any, any, any, any>;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses `{"command": {...}}`: a missing (or null) root is `parameter_missing`, as is a missing field listed in
 * `requiredCommandFields`; anything else malformed is `parameter_invalid` naming the field. Messages never repeat
 * client input (see `./input.ts`).
 */
function parseCommand(route: AnyApiRoute, body: unknown): unknown {
  if (!route.command) return undefined;
  if (!isPlainObject(body) || body.command === undefined || body.command === null) {
    throw new AppError('parameter_missing', 'the request body needs the root "command" object');
  }
  const extra = Object.keys(body).filter((k) => k !== 'command');
  if (extra.length > 0) throw new AppError('parameter_invalid', `body: ${unknownFieldsMessage(extra)} (fields go inside "command")`);
  const command = body.command;
  if (isPlainObject(command)) {
    for (const field of route.requiredCommandFields ?? []) {
      if (!Object.hasOwn(command, field))
        throw new AppError('parameter_missing', `command.${field} is required (send null when the provider has no policy)`);
    }
  }
  if (route.definitionFields && isPlainObject(command)) return parseWithDefinitionFields(route, route.definitionFields, command);
  return parseInput(route.command, command, 'command');
}

const withoutDefinitionFields = new WeakMap<AnyApiRoute, z.ZodType>();

/** `parseCommand` for a route with definition fields: 400 for the other fields first, then 422 for a definition. */
function parseWithDefinitionFields(route: AnyApiRoute, fields: readonly string[], command: Record<string, unknown>): unknown {
  const schema = route.command as z.ZodObject;
  let rest = withoutDefinitionFields.get(route);
  if (!rest) {
    // zod types the mask by the literal keys of the shape; these keys are only known at runtime.
    rest = schema.omit(Object.fromEntries(fields.map((f) => [f, true])) as never);
    withoutDefinitionFields.set(route, rest);
  }
  const others = Object.fromEntries(Object.entries(command).filter(([key]) => !fields.includes(key)));
  const out = parseInput(rest, others, 'command') as Record<string, unknown>;
  for (const field of fields) {
    const fieldSchema = schema.shape[field] as z.ZodType | undefined;
    if (!fieldSchema) throw new Error(`${route.operationId}: definition field ${field} is not in the command schema`);
    try {
      out[field] = parseInput(fieldSchema, command[field], `command.${field}`);
    } catch (error) {
      if (error instanceof AppError && error.code === 'parameter_invalid') throw new AppError('validation_failed', error.message);
      throw error;
    }
  }
  return out;
}

/** Applies a route's auth boundary (src/core/identity/auth.ts policies). */
async function authorize(auth: RouteAuth, authenticator: Authenticator, request: FastifyRequest): Promise<Principal | null> {
  if (auth === 'public') return null;
  const result = await authenticator.authenticate(credentialsOf(request));
  if (auth === 'administrator') return requireAdministrator(result, request.method);
  if (auth === 'session') return requireSession(result, request.method);
  return requireMemberPlane(result);
}

/** `{provider_id}` → `:provider_id`. */
export function fastifyPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

const principals = new WeakMap<FastifyRequest, Principal | null>();

/** Every route table registered on an app, in order: what its OpenAPI document describes (see `../openapi.ts`). */
const registered = new WeakMap<FastifyInstance, AnyApiRoute[]>();

/** The routes `registerApiRoutes` put on `app`, so the document covers every table without a list to keep in step. */
export function registeredApiRoutes(app: FastifyInstance): readonly AnyApiRoute[] {
  return registered.get(app) ?? [];
}

/** An operation served by a route outside the route tables (its own Fastify route), described for the OpenAPI document. */
export interface DocumentedOperation {
  method: 'GET' | 'POST';
  path: string;
  /** The OpenAPI Operation Object, as JSON. */
  operation: Record<string, unknown>;
  /** Schemas its `$ref`s name, added to the document's `components.schemas`. */
  schemas?: Record<string, Record<string, unknown>>;
}

const documented = new WeakMap<FastifyInstance, DocumentedOperation[]>();

/** Adds an operation to the document of `app` (routes that speak another API's shapes, such as OpenAI's). */
export function documentOperation(app: FastifyInstance, operation: DocumentedOperation): void {
  const list = documented.get(app) ?? [];
  documented.set(app, list);
  list.push(operation);
}

/** The operations `documentOperation` added to `app`. */
export function documentedOperations(app: FastifyInstance): readonly DocumentedOperation[] {
  return documented.get(app) ?? [];
}

/**
 * Registers a route table. Authentication runs in `onRequest`, before the body is parsed, so an unauthenticated
 * caller gets 401 even with a malformed body, and input is validated only for callers allowed to send it.
 */
export function registerApiRoutes(app: FastifyInstance, routes: readonly AnyApiRoute[], deps: { auth: Authenticator }): void {
  const list = registered.get(app) ?? [];
  registered.set(app, list);
  for (const route of routes) {
    if (route.command && route.body) throw new Error(`${route.operationId}: a route declares command or body, not both`);
    list.push(route);
    app.route({
      method: route.method,
      url: fastifyPath(route.path),
      ...(route.rateLimit ? { config: { rateLimit: route.rateLimit } } : {}),
      ...(route.bodyLimit !== undefined ? { bodyLimit: route.bodyLimit } : {}),
      onRequest: async (request) => {
        route.beforeAuth?.(request);
        principals.set(request, await authorize(route.auth, deps.auth, request));
      },
      handler: async (request, reply) => {
        const principal = principals.get(request) ?? null;
        const params: unknown = route.params ? parseInput(route.params, request.params, 'path') : {};
        const query: unknown = route.query ? parseInput(route.query, request.query, 'query') : {};
        const command = parseCommand(route, request.body);
        const body: unknown = route.body ? parseInput(route.body, request.body ?? {}, 'body') : undefined;
        const result = await route.handler({ principal: principal as Principal, params, query, command, body, reply });
        void reply.header('cache-control', 'no-store');
        if (result instanceof JsonText) {
          void reply.type('application/json; charset=utf-8');
          if (result.gzip) {
            void reply.header('vary', 'accept-encoding');
            if (acceptsGzip(request.headers['accept-encoding'])) return reply.header('content-encoding', 'gzip').send(result.gzip());
          }
          return reply.send(result.text);
        }
        return result;
      },
    });
  }
}
