import { AppError, INTERNAL_MESSAGE, isAppError } from '../core/errors.ts';
import { requireCapability, type Authenticator } from '../core/identity/auth.ts';
import type { AuthResult } from '../core/identity/identity.model.ts';
import type { Logger } from '../core/logger.ts';
import { assertStorableText } from '../core/storable-text.ts';
import protobuf from 'protobufjs';
import type { BytesForm, CanonicalObject, ProtoJsonCodec } from './proto-json.ts';
import { LOADER_OPTIONS } from './proto-files.ts';
import { varintBytes, varintSize } from './proto-wire.ts';
import type { LoadedMethod, LoadedProtos } from './protos.ts';
import { EncodedMessage, fastifyPathOf, type RpcMethod } from './rpc.ts';

/** An RpcMethod checked against the protos, with the proto method it implements. */
export interface BoundRpc {
  rpc: RpcMethod;
  proto: LoadedMethod;
  /** The response field named by `rpc.sharedElements`, with the per-object cache of its converted elements. */
  shared?: SharedElements | undefined;
}

/**
 * One element of a `sharedElements` field: its canonical form, its JSON text and its wire bytes, each filled in
 * once needed (an `EncodedMessage` arrives with its text or its bytes and no canonical form).
 */
export interface PreparedElement {
  canonical?: CanonicalObject;
  json?: string | Buffer;
  bytes?: Uint8Array;
}

export interface SharedElements {
  field: protobuf.Field;
  /** Full name of the element message type. */
  typeName: string;
  /** Keyed by the handler's element object; the handler promises never to change one it has handed out. */
  cache: WeakMap<object, PreparedElement>;
}

/**
 * A response whose `sharedElements` field is kept apart: `rest` is the canonical rest of the message, `elements`
 * the converted elements in order (see `httpResponseBody` and `grpcResponseBytes`).
 */
export interface SplitResponse {
  rest: CanonicalObject;
  shared: SharedElements;
  elements: PreparedElement[];
}

/** What `invokeRpcResponse` returns: a canonical message, or one split around its shared elements. */
export type RpcResponse = { canonical: CanonicalObject; split?: undefined } | { canonical?: undefined; split: SplitResponse };

function sharedElementsOf(protos: LoadedProtos, rpc: RpcMethod, responseType: string, name: string): SharedElements | undefined {
  if (rpc.sharedElements === undefined) return undefined;
  const field = protos.codec.type(responseType).fields[rpc.sharedElements];
  const elementType = field?.resolvedType;
  if (!field || !field.repeated || field.map || !(elementType instanceof protobuf.Type)) {
    throw new Error(`RpcMethod ${name}: sharedElements "${rpc.sharedElements}" is not a repeated message field of ${responseType}`);
  }
  const typeName = elementType.fullName.startsWith('.') ? elementType.fullName.slice(1) : elementType.fullName;
  return { field, typeName, cache: new WeakMap() };
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
    return { rpc, proto, shared: sharedElementsOf(protos, rpc, proto.responseType, name) };
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
  /**
   * Registers `cancel` to run if the client goes away before the answer; returns what undoes the registration.
   * (A callback rather than an AbortSignal: see `CallCancellation`.)
   */
  onClientGone?: ((cancel: () => void) => () => void) | undefined;
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
  const response = await invokeRpcResponse(deps, bound, call);
  if (response.canonical) return response.canonical;
  const { rest, shared, elements } = response.split;
  const bytes = call.transport === 'grpc' ? 'buffer' : 'base64';
  return elements.length === 0 ? rest : { [shared.field.name]: elements.map((e) => canonicalOf(deps.codec, shared, e, bytes)), ...rest };
}

/** The canonical form of an element, derived from its JSON text or its wire bytes when it came encoded. */
function canonicalOf(codec: ProtoJsonCodec, shared: SharedElements, e: PreparedElement, bytes: BytesForm): CanonicalObject {
  if (e.canonical) return e.canonical;
  if (e.json !== undefined) e.canonical = codec.fromJson(shared.typeName, JSON.parse(e.json.toString()), { where: 'response', bytes });
  else if (e.bytes) {
    const type = codec.type(shared.typeName);
    e.canonical = codec.fromProto(shared.typeName, type.toObject(type.decode(e.bytes), LOADER_OPTIONS), { bytes });
  }
  else throw new Error('a prepared element holds no form');
  return e.canonical;
}

/** Converts a handler's response; the elements of a `sharedElements` field are converted once per object. */
function convertResponse(deps: RpcRuntimeDeps, bound: BoundRpc, response: unknown, bytes: BytesForm): RpcResponse {
  // Unknown fields fail the call (RpcMethod.recordData): only stored records may carry fields the message lacks.
  const strict = { unknownFields: 'reject' as const, where: 'response', bytes };
  const records = { ...strict, unknownFields: 'drop' as const };
  const options = bound.rpc.recordData === 'response' ? records : strict;
  const elementOptions = bound.rpc.recordData === undefined ? strict : records;
  const shared = bound.shared;
  const list: unknown = shared && typeof response === 'object' && response !== null ? (response as Record<string, unknown>)[shared.field.name] : undefined;
  if (!shared || !Array.isArray(list)) return { canonical: deps.codec.fromJson(bound.proto.responseType, response, options) };
  const restInput: Record<string, unknown> = { ...(response as Record<string, unknown>) };
  delete restInput[shared.field.name];
  const rest = deps.codec.fromJson(bound.proto.responseType, restInput, options);
  const elements = list.map((element: unknown): PreparedElement => {
    if (element instanceof EncodedMessage) return { json: element.json, bytes: element.wire };
    if (typeof element !== 'object' || element === null) return { canonical: deps.codec.fromJson(shared.typeName, element, elementOptions) };
    let prepared = shared.cache.get(element);
    if (prepared === undefined) {
      prepared = { canonical: deps.codec.fromJson(shared.typeName, element, elementOptions) };
      shared.cache.set(element, prepared);
    }
    return prepared;
  });
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

/**
 * Refuses a request holding text neither database can store (NUL, an unpaired surrogate) with INVALID_ARGUMENT /
 * 400, once per call at the boundary shared by both transports, naming the field by its proto path (`id`,
 * `queries.3.package.name`). Without it PostgreSQL failed such a text deep in SQL (GetVuln of an id holding NUL
 * answered INTERNAL / 500 there and NOT_FOUND on SQLite). Bytes fields are Buffers and are not text.
 */
function assertStorableRequest(request: CanonicalObject): void {
  for (const [field, value] of Object.entries(request)) assertStorableText(value, field);
}

/** `invokeRpc`, keeping a response with shared elements split so the transport can assemble it from cached pieces. */
export async function invokeRpcResponse(deps: RpcRuntimeDeps, bound: BoundRpc, call: RpcInvocation): Promise<RpcResponse> {
  const { rpc } = bound;
  const principal = requireCapability(call.authenticated ?? (await deps.auth.authenticate({ authorization: call.authorization })), rpc.capability);
  const request = call.decode();
  assertStorableRequest(request);

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
      // Buffers from the handler pass without a check or a copy; only base64 text is checked (in linear time).
      return convertResponse(deps, bound, response, call.transport === 'grpc' ? 'buffer' : 'base64');
    } catch (error) {
      throw new AppError('internal', INTERNAL_MESSAGE, { cause: error });
    }
  } finally {
    clearTimeout(timer);
    undoClientGone?.();
  }
}

/**
 * The JSON text of a response (HTTP mapping); shared elements are written once and their text reused. Elements
 * that arrived as UTF-8 bytes are spliced as bytes (a large answer is then one Buffer, never a large string).
 */
export function httpResponseBody(codec: ProtoJsonCodec, response: RpcResponse): string | Buffer {
  if (response.canonical) return JSON.stringify(response.canonical);
  const { rest, shared, elements } = response.split;
  if (elements.length === 0) return JSON.stringify(rest);
  const texts = elements.map((e) => (e.json ??= JSON.stringify(canonicalOf(codec, shared, e, 'base64'))));
  const restText = JSON.stringify(rest);
  // The shared field goes first, where the converted message would hold it too; the keys of `rest` follow.
  const head = `{${JSON.stringify(shared.field.name)}:[`;
  const tail = `]${restText === '{}' ? '}' : `,${restText.slice(1)}`}`;
  if (texts.every((t) => typeof t === 'string')) return `${head}${texts.join(',')}${tail}`;
  const comma = Buffer.from(',');
  const parts: Buffer[] = [Buffer.from(head)];
  texts.forEach((t, i) => {
    if (i > 0) parts.push(comma);
    parts.push(typeof t === 'string' ? Buffer.from(t) : t);
  });
  parts.push(Buffer.from(tail));
  return Buffer.concat(parts);
}

/**
 * The protobuf bytes of a response (gRPC). A message may hold its fields in any order and a repeated field may be
 * split (protobuf encoding, "Field Order"), so the rest of the message is encoded and each shared element appended
 * as its cached bytes behind its tag and length.
 */
export function grpcResponseBytes(codec: ProtoJsonCodec, responseType: string, response: RpcResponse): Buffer {
  const restBytes = codec.encode(responseType, response.canonical ?? response.split.rest);
  if (response.canonical || response.split.elements.length === 0) return Buffer.from(restBytes.buffer, restBytes.byteOffset, restBytes.byteLength);
  const { shared, elements } = response.split;
  const tag = varintBytes(shared.field.id * 8 + 2);
  const parts = elements.map((e) => (e.bytes ??= codec.encode(shared.typeName, canonicalOf(codec, shared, e, 'buffer'))));
  let total = restBytes.byteLength;
  for (const bytes of parts) total += tag.length + varintSize(bytes.byteLength) + bytes.byteLength;
  const out = Buffer.allocUnsafe(total);
  let offset = 0;
  for (const bytes of parts) {
    for (const chunk of [tag, varintBytes(bytes.byteLength), bytes]) {
      out.set(chunk, offset);
      offset += chunk.length;
    }
  }
  out.set(restBytes, offset);
  return out;
}
