import type { Message } from '@bufbuild/protobuf';
import type { Capability, Principal } from '../core/identity/identity.model.ts';
import type { Logger } from '../core/logger.ts';

/**
 * How an RPC's errors look on its HTTP mapping:
 * - `envelope`: the platform's REST envelope `{"error":{"code":"<AppError code>","message"}}` (documents);
 * - `status`: `{"code": <gRPC status number>, "message"}` as OSV.dev's transcoder answers (osv-facts.md §1).
 * Either way the HTTP status comes from the AppError code table (400, 401, 403, 404, 413, 500, 504, ...). The style
 * also covers errors the app writes for a `status` route's path (405, 404 under its directory, 503, 415).
 */
export type HttpErrorStyle = 'envelope' | 'status';

/** The HTTP mapping of an RPC; it must agree with the `google.api.http` annotation in the proto (checked at start). */
export interface RpcHttpMapping {
  method: 'GET' | 'POST' | 'DELETE';
  /** A Fastify path pattern: the annotation's `{id}` written `:id`, for example `/platform/v1/osv/vulns/:id`. */
  path: string;
  /** `'*'`: the JSON body is the whole request message. Absent: no body; fields come from the path and query. */
  body?: '*';
  /** Largest accepted HTTP body in bytes (default: the REST listener's `PLATFORM_BODY_LIMIT_BYTES`). */
  bodyLimit?: number;
  /** Error body style (default `envelope`). */
  errorStyle?: HttpErrorStyle;
}

/** What a handler receives; the same on both transports. */
export interface RpcCall<Req> {
  /** The authenticated caller: a platform-plane token holding the method's capability. */
  principal: Principal;
  /**
   * The request message, decoded by the generated codec (`@bufbuild/protobuf`, schemas from protoc-gen-es in
   * src/grpc/generated/es): `fromBinary` on gRPC, `fromJson` on the HTTP mapping (unknown fields refused there). The
   * same message on both transports: int64 as bigint, bytes as Uint8Array (no base64 round trip on gRPC), a oneof as
   * `{ case, value }`, fields absent on the wire at their default value.
   */
  request: Req;
  /** Epoch milliseconds by which the answer is due: the client's gRPC deadline, capped by `PLATFORM_RPC_DEADLINE_MS`. */
  deadline: number;
  /**
   * Aborted when the deadline passes or the client goes away; long work should stop (or return partial results).
   * Created when first read (an AbortSignal per call costs the garbage collector), so read it only when needed.
   */
  readonly signal: AbortSignal;
  /** A child logger naming the RPC and transport. */
  log: Logger;
  /**
   * Which transport carried the call: for logs, and for choosing which pre-encoded form to return
   * (`EncodedMessage`); the answer itself must not depend on it.
   */
  transport: 'grpc' | 'http';
}

/**
 * One RPC implementation serving both gRPC and its HTTP mapping. The server authenticates the caller
 * (`authorization: Bearer <platform token>` → `requireCapability(capability)`), decodes the request with the
 * generated codec, runs `handler` under the deadline, encodes the response (`toBinary` / `toJson`; a field the
 * response message does not declare fails the call, see `recordData`; default values are left out), and maps errors
 * once per transport: an `AppError` keeps its code and message (gRPC code and HTTP status from the table in
 * `src/core/errors.ts`); any other error becomes INTERNAL / 500 with a generic message, the cause going to the log
 * only. `Req` is the generated request message type (for example `Query`); `Res` is what the handler returns:
 * the generated response message, its proto3 JSON (the generated `…Json` type), or that JSON with `EncodedMessage`
 * elements (`sharedElements`).
 */
export interface RpcMethod<Req extends Message = Message, Res = unknown> {
  /** Full proto service name, for example `platform.v1.PlatformOSV`. */
  service: string;
  /** Method name as in the proto, for example `GetVuln`. */
  method: string;
  /** The capability the caller's platform token must carry. */
  capability: Capability;
  http: RpcHttpMapping;
  /**
   * The implementation; returns the response message (built with `create`, bytes as Uint8Arrays) or its proto3
   * JSON with the proto field names (empty fields may be present or absent), which the generated codec checks.
   */
  handler(call: RpcCall<Req>): Promise<Res>;
  /**
   * A repeated message field of the response (proto name, for example `vulns`) whose elements the handler hands
   * out already written (`EncodedMessage`: OSV records' stored answers for `Query`, each result of a `QueryBatch`)
   * or as shared objects it never changes (records from a cache). Each element object is checked and converted
   * once, and its JSON text and protobuf bytes are kept beside it (keyed by the object, so they go when the
   * handler's cache drops it); a response of hundreds of records is then assembled from those pieces instead of
   * being converted field by field on every call. This is the RPC layer's one hook for a hand-written fast path
   * (src/grpc/spliced-answers.ts; docs/grpc.md, "The codecs").
   */
  sharedElements?: string;
  /**
   * Where the response carries records imported from outside as they were stored (OSV records): `'elements'`
   * the elements of `sharedElements`, `'response'` the whole response. Fields of those records that the message
   * does not declare are dropped, as OSV.dev's API drops them. Anywhere else a response field the message does not
   * declare is a programming error (a misspelled field would otherwise vanish): the call fails with INTERNAL and
   * the log names the field.
   */
  recordData?: 'elements' | 'response';
}

/**
 * An element of a `sharedElements` field handed over already encoded: its canonical JSON text (what
 * the generated codec's `toJsonString` of the element gives, as a string or UTF-8 bytes) and/or its protobuf bytes. A handler
 * whose elements were encoded ahead of time (records stored with their answers) returns the form the transport
 * sends, and the response is assembled from these bytes without parsing or converting anything; the other form is
 * derived only when something asks for it.
 */
export class EncodedMessage {
  constructor(
    readonly json: string | Buffer | undefined,
    readonly wire: Uint8Array | undefined,
  ) {
    if (json === undefined && wire === undefined) throw new Error('an EncodedMessage needs its JSON text or its protobuf bytes');
  }
}

/** `/platform/v1/documents/{id}` → `/platform/v1/documents/:id` (only single-segment field names are supported). */
export function fastifyPathOf(template: string): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
}

/** Names of the path parameters of a Fastify pattern. */
export function pathParamsOf(pattern: string): string[] {
  return [...pattern.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] as string);
}
