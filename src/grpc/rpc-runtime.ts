import { toBinary, type JsonObject, type Message } from '@bufbuild/protobuf';
import { AppError, INTERNAL_MESSAGE, isAppError } from '../core/errors.ts';
import { requireCapability, type Authenticator } from '../core/identity/auth.ts';
import type { AuthResult } from '../core/identity/identity.model.ts';
import type { Logger } from '../core/logger.ts';
import { assertStorableMessage, isMessageOf, messageToJson, responseFromJson } from './codec.ts';
import type { LoadedMethod, LoadedProtos } from './protos.ts';
import { fastifyPathOf, type RpcMethod } from './rpc.ts';
import {
  prepareElement,
  sharedElementsOf,
  splicedBytes,
  splicedJson,
  type PreparedElement,
  type SharedElements,
} from './spliced-answers.ts';

/** An RpcMethod checked against the protos, with the proto method it implements. */
export interface BoundRpc {
  rpc: RpcMethod;
  proto: LoadedMethod;
  /** The response field named by `rpc.sharedElements`, with the per-object cache of its converted elements. */
  shared?: SharedElements | undefined;
}

/**
 * What `invokeRpcResponse` returns: the response message, or (RpcMethod.sharedElements) the rest of the message
 * and its shared elements in order, which the transport splices (spliced-answers.ts).
 */
export type RpcResponse =
  | { message: Message; split?: undefined }
  | { message?: undefined; split: { rest: Message; shared: SharedElements; elements: PreparedElement[] } };

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
    if (proto.desc.methodKind !== 'unary') throw new Error(`RpcMethod ${name}: only unary RPCs are supported`);
    if (seen.has(name)) throw new Error(`RpcMethod ${name} is registered twice`);
    seen.add(name);
    const rule = proto.http;
    if (!rule) throw new Error(`RpcMethod ${name}: the proto declares no google.api.http mapping`);
    const expected = { method: rule.method, path: fastifyPathOf(rule.template), body: rule.body === '*' ? '*' : undefined };
    if (rule.body !== '' && rule.body !== '*')
      throw new Error(`RpcMethod ${name}: body "${rule.body}" is not supported (only "*" or none)`);
    const actual = { method: rpc.http.method, path: rpc.http.path, body: rpc.http.body };
    if (expected.method !== actual.method || expected.path !== actual.path || expected.body !== actual.body) {
      throw new Error(
        `RpcMethod ${name}: HTTP mapping ${JSON.stringify(actual)} differs from the proto annotation ${JSON.stringify(expected)}`,
      );
    }
    const shared = rpc.sharedElements === undefined ? undefined : sharedElementsOf(proto.output, rpc.sharedElements, name);
    return { rpc, proto, shared };
  });
}

export interface RpcRuntimeDeps {
  auth: Authenticator;
  /** The longest any call may run (`PLATFORM_RPC_DEADLINE_MS`); shorter client deadlines win. */
  maxDeadlineMs: number;
}

export interface RpcInvocation {
  /** The raw `authorization` value (gRPC metadata or HTTP header). */
  authorization: string | undefined;
  /** The credential already resolved from `authorization` (the HTTP mapping does so before reading the body). */
  authenticated?: AuthResult | undefined;
  /**
   * Produces the request message (decoded by the generated codec); called only after authentication, so strangers
   * learn nothing from validation.
   */
  decode(): Message;
  /** The client's deadline in epoch ms (Infinity or undefined when none). */
  clientDeadline?: number | undefined;
  /**
   * Registers `cancel` to run if the client goes away before the answer; returns what undoes the registration.
   * (A callback rather than an AbortSignal: see `CallCancellation`.)
   */
  onClientGone?: ((cancel: () => void) => () => void) | undefined;
  /** Which transport carries the call (handlers may pick the pre-encoded form it sends, `EncodedMessage`). */
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
 * Runs one call of a bound RPC and returns its response as proto3 JSON (the HTTP mapping's answer, parsed): for
 * tests and tools; the transports use `invokeRpcResponse` and write the message themselves.
 */
export async function invokeRpc(deps: RpcRuntimeDeps, bound: BoundRpc, call: RpcInvocation): Promise<JsonObject> {
  const response = await invokeRpcResponse(deps, bound, call);
  return JSON.parse(httpResponseBody(bound, response).toString()) as JsonObject;
}

/**
 * A handler's response as a message of the RPC's output type: a message is taken as it is; JSON goes through the
 * generated codec, where a member the message does not declare fails the call (RpcMethod.recordData: only stored
 * records may carry such members, and they are dropped). The elements of a `sharedElements` field are kept apart.
 */
function convertResponse(bound: BoundRpc, response: unknown): RpcResponse {
  const { output } = bound.proto;
  if (isMessageOf(response, output)) return { message: response };
  const shared = bound.shared;
  const list: unknown =
    shared && typeof response === 'object' && response !== null ? (response as Record<string, unknown>)[shared.field.name] : undefined;
  const records = bound.rpc.recordData === 'response';
  if (!shared || !Array.isArray(list)) return { message: responseFromJson(output, response, records) };
  const restInput: Record<string, unknown> = { ...(response as Record<string, unknown>) };
  delete restInput[shared.field.name];
  const rest = responseFromJson(output, restInput, records);
  const elementRecords = bound.rpc.recordData !== undefined;
  const elements = list.map((element: unknown) => prepareElement(shared, element, elementRecords));
  return { split: { rest, shared, elements } };
}

/**
 * The cancellation of one call (deadline passed, client gone), with an AbortController only once a handler reads
 * `signal`: most calls finish long before anything cancels them, and Node 20's AbortSignals are costly to collect
 * (a loop making one per iteration turned 0.03 ms young-generation collections into 1.3-1.9 ms ones, with a full
 * collection every ~80 ms).
 */
class CallCancellation {
  private controller: AbortController | undefined;
  private reason: Error | undefined;
  private fail: ((reason: Error) => void) | undefined;

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.reason !== undefined) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  cancel(reason: Error): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller?.abort(reason);
    this.fail?.(reason);
  }

  /** `work`'s outcome, or the cancellation's reason if that comes first. */
  race<T>(work: Promise<T>): Promise<T> {
    if (this.reason !== undefined) return Promise.reject(this.reason);
    return new Promise<T>((resolve, reject) => {
      this.fail = reject;
      work.then(resolve, reject);
    });
  }
}

/** `invokeRpc`, keeping a response with shared elements split so the transport can assemble it from cached pieces. */
export async function invokeRpcResponse(deps: RpcRuntimeDeps, bound: BoundRpc, call: RpcInvocation): Promise<RpcResponse> {
  const { rpc } = bound;
  const principal = requireCapability(
    call.authenticated ?? (await deps.auth.authenticate({ authorization: call.authorization })),
    rpc.capability,
  );
  const request = call.decode();
  // Text neither database can store (NUL, an unpaired surrogate) is refused once per call at the boundary shared by
  // both transports, naming the field by its proto path (`id`, `queries.3.package.name`). Without it PostgreSQL
  // failed such a text deep in SQL (GetVuln of an id holding NUL answered INTERNAL / 500 there, NOT_FOUND on SQLite).
  assertStorableMessage(bound.proto.input, request);

  const now = Date.now();
  const clientDeadline = call.clientDeadline !== undefined && Number.isFinite(call.clientDeadline) ? call.clientDeadline : Infinity;
  const deadline = Math.min(clientDeadline, now + deps.maxDeadlineMs);
  if (deadline <= now) throw new AppError('deadline_exceeded', 'deadline exceeded before the call started');

  const cancellation = new CallCancellation();
  const undoClientGone = call.onClientGone?.(() => cancellation.cancel(new AppError('unavailable', 'the client cancelled the call')));
  const timer = setTimeout(() => cancellation.cancel(new AppError('deadline_exceeded', 'deadline exceeded')), deadline - now);
  try {
    const work = rpc.handler({
      principal,
      request,
      deadline,
      get signal() {
        return cancellation.signal;
      },
      log: call.log,
      transport: call.transport,
    });
    // Whichever loses the race may settle later; it must not become an unhandled rejection.
    work.catch(() => undefined);
    const response = await cancellation.race(work);
    try {
      return convertResponse(bound, response);
    } catch (error) {
      throw new AppError('internal', INTERNAL_MESSAGE, { cause: error });
    }
  } finally {
    clearTimeout(timer);
    undoClientGone?.();
  }
}

/** The JSON text of a response (HTTP mapping), spliced around its shared elements when it has them. */
export function httpResponseBody(bound: BoundRpc, response: RpcResponse): string | Buffer {
  const { output } = bound.proto;
  if (response.message) return JSON.stringify(messageToJson(output, response.message));
  const { rest, shared, elements } = response.split;
  return splicedJson(output, rest, shared, elements);
}

/** The protobuf bytes of a response (gRPC), spliced around its shared elements when it has them. */
export function grpcResponseBytes(bound: BoundRpc, response: RpcResponse): Buffer {
  const { output } = bound.proto;
  if (response.message) {
    const bytes = toBinary(output, response.message);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  const { rest, shared, elements } = response.split;
  return splicedBytes(output, rest, shared, elements);
}
