import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ScalarType, type DescField, type DescMessage, type JsonObject, type JsonValue, type Message } from '@bufbuild/protobuf';
import { AppError, ERROR_CODES, errorEnvelope, INTERNAL_MESSAGE, isAppError, type ErrorCode } from '../core/errors.ts';
import { frameworkErrorToAppError } from '../core/http/server.ts';
import { requireCapability, type Authenticator } from '../core/identity/auth.ts';
import type { AuthResult, Capability } from '../core/identity/identity.model.ts';
import type { Logger } from '../core/logger.ts';
import { requestFromJson } from './codec.ts';
import type { LoadedProtos } from './protos.ts';
import { pathParamsOf, type HttpErrorStyle, type RpcMethod } from './rpc.ts';
import { asAppError, bindRpcs, httpResponseBody, invokeRpcResponse, type BoundRpc, type RpcRuntimeDeps } from './rpc-runtime.ts';

export interface RpcRoutesDeps {
  protos: LoadedProtos;
  rpcs: readonly RpcMethod[];
  auth: Authenticator;
  /** `PLATFORM_RPC_DEADLINE_MS`: HTTP callers get this deadline. */
  maxDeadlineMs: number;
}

/** Writes an error in the RPC's style; the one place the HTTP mappings write errors. */
export function sendRpcError(reply: FastifyReply, error: AppError, style: HttpErrorStyle): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) void reply.header(name, value);
  if (error.code === 'unauthorized') void reply.header('www-authenticate', 'Bearer');
  const body = style === 'status' ? { code: error.grpcCode, message: error.message } : errorEnvelope(error.code, error.message);
  return reply.status(error.httpStatus).send(body);
}

/** Scalar text from a path or query parameter, typed for the field so the codec can check it. */
function paramValue(field: DescField, text: string): JsonValue {
  if (field.scalar === ScalarType.BOOL) {
    if (text === 'true') return true;
    if (text === 'false') return false;
    throw new AppError('parameter_invalid', `${field.name}: expected true or false`);
  }
  if (field.message) throw new AppError('parameter_invalid', `${field.name}: a message cannot be given as a parameter`);
  return text;
}

/** The field a parameter names: by its proto name or in lowerCamelCase. */
function paramField(desc: DescMessage, name: string): DescField | undefined {
  return (
    desc.fields.find((f) => f.name === name) ??
    desc.fields.find((f) => f.name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase()) === name)
  );
}

/**
 * Sets `path` (dotted field names) of `target` from parameter text, creating nested messages as needed; unknown
 * fields are INVALID_ARGUMENT, as a strict transcoder answers.
 */
function setParam(input: DescMessage, target: JsonObject, path: string, values: string[], where: string): void {
  let desc = input;
  let object = target;
  const parts = path.split('.');
  for (const [i, part] of parts.entries()) {
    const field = paramField(desc, part);
    if (!field) throw new AppError('parameter_invalid', `${where} ${path}: unknown field`);
    if (i === parts.length - 1) {
      if (field.fieldKind === 'list') object[field.name] = values.map((v) => paramValue(field, v));
      else if (values.length !== 1) throw new AppError('parameter_invalid', `${where} ${path}: given more than once`);
      else object[field.name] = paramValue(field, values[0] as string);
      return;
    }
    if (field.fieldKind !== 'message') throw new AppError('parameter_invalid', `${where} ${path}: not a message field`);
    const next = (object[field.name] ??= {}) as JsonObject;
    object = next;
    desc = field.message;
  }
}

/**
 * Refuses a request whose credential can never be accepted (none, unknown, revoked, wrong plane) with
 * `unauthorized`. A missing capability is left to `invokeRpc`, which enforces it with the rest of the call.
 */
function requireAuthenticated(result: AuthResult, capability: Capability): void {
  try {
    requireCapability(result, capability);
  } catch (error) {
    if (isAppError(error) && error.code === 'unauthorized') throw error;
  }
}

/** The `authorization` header, refusing two or more (Node keeps only the first): which one counts is ambiguous. */
function authorizationHeader(request: FastifyRequest): string | undefined {
  let count = 0;
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === 'authorization') count += 1;
  if (count > 1) throw new AppError('unauthorized', 'more than one authorization value');
  return request.headers.authorization;
}

/**
 * Which request paths answer errors in the `status` style although no route of theirs wrote the error: the paths of
 * `status` routes (a 405 for another method) and anything under their shared directory (`/platform/v1/osv/`, an
 * unknown path there), unless an `envelope` route lives under it too. (Errors Fastify answers before routing, a
 * malformed percent-escape or an over-long parameter, run no hook and stay in the app's envelope: docs/grpc.md.)
 */
function statusStylePaths(bound: readonly BoundRpc[]): (path: string) => boolean {
  const patternOf = (path: string) =>
    new RegExp('^' + path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]*') + '/?$');
  const status = bound.filter((b) => b.rpc.http.errorStyle === 'status').map((b) => b.rpc.http.path);
  if (status.length === 0) return () => false;
  const patterns = status.map(patternOf);
  let prefix = status.reduce((common, path) => {
    let i = 0;
    while (i < common.length && common[i] === path[i]) i += 1;
    return common.slice(0, i);
  });
  prefix = prefix.slice(0, prefix.lastIndexOf('/') + 1);
  const envelopePaths = bound.filter((b) => b.rpc.http.errorStyle !== 'status').map((b) => b.rpc.http.path);
  if (prefix.length <= 1 || envelopePaths.some((path) => path.startsWith(prefix))) prefix = '';
  return (path) => (prefix !== '' && path.startsWith(prefix)) || patterns.some((p) => p.test(path));
}

/** `{"error":{"code","message"}}` as `{"code": <gRPC code>, "message"}`, or undefined when `payload` is no envelope. */
function asStatusBody(payload: unknown): string | undefined {
  if (typeof payload !== 'string' || !payload.startsWith('{"error":')) return undefined;
  try {
    const parsed = JSON.parse(payload) as { error?: { code?: unknown; message?: unknown } };
    const code = parsed.error?.code;
    if (typeof code !== 'string' || !Object.hasOwn(ERROR_CODES, code) || typeof parsed.error?.message !== 'string') return undefined;
    return JSON.stringify({ code: ERROR_CODES[code as ErrorCode].grpc, message: parsed.error.message });
  } catch {
    return undefined;
  }
}

function decodeHttpRequest(b: BoundRpc, request: FastifyRequest): Message {
  const { input } = b.proto;
  let raw: JsonObject = {};
  if (b.rpc.http.body === '*') {
    const body = request.body;
    if (body !== undefined && body !== null) {
      if (typeof body !== 'object' || Array.isArray(body)) throw new AppError('parameter_invalid', 'body: expected a JSON object');
      raw = { ...(body as JsonObject) };
    }
  } else {
    // Fields not bound by the path come from the query string (google.api.http rules).
    const query = (request.query ?? {}) as Record<string, string | string[] | undefined>;
    for (const [key, value] of Object.entries(query)) {
      if (value === undefined) continue;
      setParam(input, raw, key, Array.isArray(value) ? value : [value], 'query parameter');
    }
  }
  const params = (request.params ?? {}) as Record<string, string>;
  // Path parameters win over the body, as transcoders do.
  for (const name of pathParamsOf(b.rpc.http.path)) {
    const value = params[name];
    if (value !== undefined) setParam(input, raw, name, [value], 'path parameter');
  }
  return requestFromJson(input, raw, b.rpc.http.body === '*' ? 'body' : 'request');
}

/**
 * Registers the HTTP mapping of every RpcMethod on the REST listener (`PLATFORM_HTTP_PORT`) at its annotated
 * path. The same `invokeRpc` serves gRPC, so each RPC has one implementation; JSON uses the proto field names
 * (ARCHITECTURE.md, "gRPC"), responses leave out empty fields, and errors use the RPC's style.
 */
export function registerRpcRoutes(app: FastifyInstance, deps: RpcRoutesDeps): void {
  const bound = bindRpcs(deps.protos, deps.rpcs);
  const runtime: RpcRuntimeDeps = { auth: deps.auth, maxDeadlineMs: deps.maxDeadlineMs };
  const authenticated = new WeakMap<FastifyRequest, AuthResult>();
  // Errors written for these paths by the app rather than by a route (405, 404, 503 while closing) come in the
  // platform envelope; OSV clients get OSV.dev's body there too (regression: GetVuln answered some errors in each
  // style). Only error answers are looked at.
  const isStatusStyle = statusStylePaths(bound);
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode < 400 || !isStatusStyle(request.url.split('?')[0] ?? '')) return payload;
    return asStatusBody(payload) ?? payload;
  });
  for (const b of bound) {
    const style: HttpErrorStyle = b.rpc.http.errorStyle ?? 'envelope';
    const name = `${b.rpc.service}/${b.rpc.method}`;
    app.route({
      method: b.rpc.http.method,
      url: b.rpc.http.path,
      ...(b.rpc.http.bodyLimit !== undefined ? { bodyLimit: b.rpc.http.bodyLimit } : {}),
      // The RPC boundary checks the decoded request once for both transports, naming fields by their proto path.
      config: { checksStorableTextItself: true },
      // The request's logger carries the RPC's name from the start: one child logger per request, not two (pino
      // rebuilds every level method of each child).
      childLoggerFactory: (logger, bindings, options) => logger.child({ ...bindings, rpc: name, transport: 'http' }, options),
      // The caller is authenticated before the body is read, so a stranger cannot make the server read and parse a
      // large body (a CreateDocument body may be over 11 MB); 401 comes first, before any 413 or 400.
      onRequest: async (request: FastifyRequest) => {
        const result = await deps.auth.authenticate({ authorization: authorizationHeader(request) });
        requireAuthenticated(result, b.rpc.capability);
        authenticated.set(request, result);
      },
      // Errors before the handler runs (authentication, body parsing, size limits) answer in the RPC's style too.
      errorHandler: (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
        let mapped = isAppError(error) ? error : frameworkErrorToAppError(error);
        if (!mapped) {
          request.log.error({ err: error, rpc: name }, 'unexpected error');
          mapped = new AppError('internal', INTERNAL_MESSAGE);
        }
        void sendRpcError(reply, mapped, style);
      },
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const log = request.log as Logger;
        try {
          const response = await invokeRpcResponse(runtime, b, {
            authorization: authorizationHeader(request),
            authenticated: authenticated.get(request),
            decode: () => decodeHttpRequest(b, request),
            // The connection closing before the answer is written means the client went away: cancel the call.
            onClientGone: (cancel) => {
              const onClose = () => {
                if (!reply.raw.writableEnded) cancel();
              };
              reply.raw.once('close', onClose);
              return () => reply.raw.off('close', onClose);
            },
            transport: 'http',
            log,
          });
          return reply.status(200).type('application/json; charset=utf-8').send(httpResponseBody(b, response));
        } catch (error) {
          return sendRpcError(reply, asAppError(error, log), style);
        }
      },
    });
  }
}
