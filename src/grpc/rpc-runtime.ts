import { AppError, INTERNAL_MESSAGE, isAppError } from '../core/errors.ts';
import { requireCapability, type Authenticator } from '../core/identity/auth.ts';
import type { AuthResult } from '../core/identity/identity.model.ts';
import type { Logger } from '../core/logger.ts';
import type { CanonicalObject, ProtoJsonCodec } from './proto-json.ts';
import type { LoadedMethod, LoadedProtos } from './protos.ts';
import { fastifyPathOf, type RpcMethod } from './rpc.ts';

/** An RpcMethod checked against the protos, with the proto method it implements. */
export interface BoundRpc {
  rpc: RpcMethod;
  proto: LoadedMethod;
}

/**
 * Checks every RpcMethod against the loaded protos: the method exists and is unary, no method is implemented
 * twice, and the HTTP mapping equals the `google.api.http` annotation (the proto is the published contract, so
 * a drift is a programming error that stops the start).
 */
export function bindRpcs(protos: LoadedProtos, rpcs: readonly RpcMethod[]): BoundRpc[] {
  const seen = new Set<string>();
  return rpcs.map((rpc) => {
    const name = `${rpc.service}/${rpc.method}`;
    const proto = protos.services.get(rpc.service)?.get(rpc.method);
    if (!proto) throw new Error(`RpcMethod ${name} is not declared in the protos`);
    if (proto.definition.requestStream || proto.definition.responseStream) throw new Error(`RpcMethod ${name}: only unary RPCs are supported`);
    if (seen.has(name)) throw new Error(`RpcMethod ${name} is registered twice`);
    seen.add(name);
    const rule = proto.http;
    if (!rule) throw new Error(`RpcMethod ${name}: the proto declares no google.api.http mapping`);
    const expected = { method: rule.method, path: fastifyPathOf(rule.template), body: rule.body === '*' ? '*' : undefined };
    if (rule.body !== '' && rule.body !== '*') throw new Error(`RpcMethod ${name}: body "${rule.body}" is not supported (only "*" or none)`);
    const actual = { method: rpc.http.method, path: rpc.http.path, body: rpc.http.body };
    if (expected.method !== actual.method || expected.path !== actual.path || expected.body !== actual.body) {
      throw new Error(`RpcMethod ${name}: HTTP mapping ${JSON.stringify(actual)} differs from the proto annotation ${JSON.stringify(expected)}`);
    }
    return { rpc, proto };
  });
}

export interface RpcRuntimeDeps {
  auth: Authenticator;
  codec: ProtoJsonCodec;
  /** The longest any call may run (`PLATFORM_RPC_DEADLINE_MS`); shorter client deadlines win. */
  maxDeadlineMs: number;
}

export interface RpcInvocation {
  /** The raw `authorization` value (gRPC metadata or HTTP header). */
  authorization: string | undefined;
  /** The credential already resolved from `authorization` (the HTTP mapping does so before reading the body). */
  authenticated?: AuthResult | undefined;
  /**
   * Produces the canonical request (bytes as Buffers); called only after authentication, so strangers learn
   * nothing from validation.
   */
  decode(): CanonicalObject;
  /** The client's deadline in epoch ms (Infinity or undefined when none). */
  clientDeadline?: number | undefined;
  /** Aborted when the client goes away. */
  signal?: AbortSignal | undefined;
  /**
   * Which transport carries the call. It also decides the form of `bytes` fields in the returned response:
   * Buffers for gRPC (serialized as they are), base64 text for HTTP (written as JSON).
   */
  transport: 'grpc' | 'http';
  log: Logger;
}

/** Any thrown value as an AppError; unexpected errors are logged here with their cause and become INTERNAL. */
export function asAppError(error: unknown, log: Logger): AppError {
  if (isAppError(error)) {
    if (error.code === 'internal') log.error({ err: error, cause: error.cause }, 'rpc failed');
    return error;
  }
  log.error({ err: error }, 'rpc failed unexpectedly');
  return new AppError('internal', INTERNAL_MESSAGE, { cause: error });
}

/**
 * Runs one call of a bound RPC, whatever the transport: authenticate and authorize, decode, run the handler under
 * the deadline, and return the response in canonical JSON. Throws an AppError (deadline: `deadline_exceeded`).
 */
export async function invokeRpc(deps: RpcRuntimeDeps, bound: BoundRpc, call: RpcInvocation): Promise<CanonicalObject> {
  const { rpc, proto } = bound;
  const principal = requireCapability(call.authenticated ?? (await deps.auth.authenticate({ authorization: call.authorization })), rpc.capability);
  const request = call.decode();

  const now = Date.now();
  const clientDeadline = call.clientDeadline !== undefined && Number.isFinite(call.clientDeadline) ? call.clientDeadline : Infinity;
  const deadline = Math.min(clientDeadline, now + deps.maxDeadlineMs);
  if (deadline <= now) throw new AppError('deadline_exceeded', 'deadline exceeded before the call started');

  const controller = new AbortController();
  const onClientGone = () => controller.abort(new AppError('unavailable', 'the client cancelled the call'));
  if (call.signal?.aborted) onClientGone();
  call.signal?.addEventListener('abort', onClientGone, { once: true });
  const timer = setTimeout(() => controller.abort(new AppError('deadline_exceeded', 'deadline exceeded')), deadline - now);
  const aborted = new Promise<never>((_resolve, reject) => {
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error), { once: true });
  });
  // Whichever loses the race may settle later; it must not become an unhandled rejection.
  aborted.catch(() => undefined);
  try {
    const work = rpc.handler({ principal, request, deadline, signal: controller.signal, log: call.log, transport: call.transport });
    work.catch(() => undefined);
    const response = await Promise.race([work, aborted]);
    try {
      // Buffers from the handler pass without a check or a copy; only base64 text is checked (in linear time).
      return deps.codec.fromJson(proto.responseType, response, { unknownFields: 'drop', where: 'response', bytes: call.transport === 'grpc' ? 'buffer' : 'base64' });
    } catch (error) {
      throw new AppError('internal', INTERNAL_MESSAGE, { cause: error });
    }
  } finally {
    clearTimeout(timer);
    call.signal?.removeEventListener('abort', onClientGone);
  }
}
