import type * as http2 from 'node:http2';
import { performance } from 'node:perf_hooks';
import { fromBinary, toBinary, type Message } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation, type ServingStatusMap } from 'grpc-health-check';
import { AppError, GRPC_STATUS } from '../core/errors.ts';
import type { Authenticator } from '../core/identity/auth.ts';
import type { Logger } from '../core/logger.ts';
import { servedSchema } from './descriptors.ts';
import type { LoadedMethod, LoadedProtos } from './protos.ts';
import { addReflection, ReflectionIndex } from './reflection.ts';
import type { RpcMethod } from './rpc.ts';
import { asAppError, bindRpcs, grpcResponseBytes, invokeRpcResponse, type BoundRpc, type RpcRuntimeDeps } from './rpc-runtime.ts';

export interface GrpcServerOptions {
  protos: LoadedProtos;
  /** The implemented RPCs; methods of the protos without one answer UNIMPLEMENTED. */
  rpcs: readonly RpcMethod[];
  auth: Authenticator;
  log: Logger;
  /** `PLATFORM_RPC_DEADLINE_MS`: the longest a call may run. */
  maxDeadlineMs: number;
  /** Largest request message accepted; larger ones are refused by grpc-js with RESOURCE_EXHAUSTED. */
  maxReceiveMessageBytes: number;
  /** Largest response message sent. */
  maxSendMessageBytes: number;
}

export interface GrpcListenOptions {
  host: string;
  port: number;
  /** PEM certificate chain and key: TLS; absent: cleartext HTTP/2 (h2c). */
  tls?: { cert: Buffer; key: Buffer } | undefined;
}

/** A gRPC server with the platform's services, the standard health service and server reflection. */
export interface PlatformGrpcServer {
  server: grpc.Server;
  /** Binds and starts; returns the bound port and a URL such as `grpc://127.0.0.1:50051` (`grpcs://` with TLS). */
  listen(options: GrpcListenOptions): Promise<{ port: number; url: string }>;
  /**
   * Stops gracefully: health turns NOT_SERVING, no new calls are accepted, calls in flight may finish within
   * `timeoutMs`, after which the remaining ones are cancelled.
   */
  close(timeoutMs?: number): Promise<void>;
}

function metadataValue(metadata: grpc.Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  return typeof value === 'string' ? value : undefined;
}

/** What the request deserializer hands on when the bytes are no valid protobuf message of the request type. */
class MalformedRequest {
  constructor(readonly cause: unknown) {}
}

/**
 * The message codecs this server speaks: protobuf only. `application/grpc+json` and the gRPC-Web types begin with
 * `application/grpc`, so grpc-js would otherwise parse their bodies as protobuf (regression).
 */
const SERVED_CONTENT_TYPE = /^application\/grpc(\+proto)?\s*(;.*)?$/i;

/**
 * Refuses content types other than `application/grpc[+proto]` with HTTP 415 (what the gRPC HTTP/2 protocol says for
 * a non-gRPC type, and what connect-go answers for a codec it lacks) and `grpc-status` UNIMPLEMENTED, which gRPC
 * clients read before the HTTP status. Installed as grpc-js's own content-type check (`_verifyContentType`, private
 * in grpc-js 1.14 and checked at start), which runs before a call exists, so nothing of such a request is read.
 */
function refuseOtherCodecs(server: grpc.Server): void {
  const internals = server as unknown as {
    _verifyContentType?: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => boolean;
  };
  const original = internals._verifyContentType;
  if (typeof original !== 'function')
    throw new Error('@grpc/grpc-js has no _verifyContentType: the content-type check cannot be installed');
  internals._verifyContentType = function (stream, headers) {
    const type = headers['content-type'];
    if (typeof type === 'string' && type.toLowerCase().startsWith('application/grpc') && !SERVED_CONTENT_TYPE.test(type)) {
      stream.respond(
        {
          ':status': 415,
          'content-type': 'application/grpc',
          'accept-post': 'application/grpc, application/grpc+proto',
          'grpc-status': String(GRPC_STATUS.UNIMPLEMENTED),
          'grpc-message': encodeURIComponent('unsupported content-type: this server speaks application/grpc (protobuf) only'),
        },
        { endStream: true },
      );
      return false;
    }
    return original.call(this, stream, headers);
  };
}

/**
 * A compressed-flag message on a call without `grpc-encoding` (or with `identity`) fails with INTERNAL, as the gRPC
 * compression spec requires; grpc-js 1.14 would read its bytes as uncompressed (regression). grpc-js decides this in
 * the call's private `decompressMessage(frame, encoding)`, which this interceptor wraps per call; its rejection
 * becomes the call's status through grpc-js's own path.
 */
const compressedFlagGuard: grpc.ServerInterceptor = (_method, call) => {
  const internals = call as unknown as { decompressMessage?: (frame: Buffer, encoding: string) => Buffer | Promise<Buffer> };
  const original = internals.decompressMessage;
  if (typeof original !== 'function')
    throw new Error('@grpc/grpc-js has no decompressMessage: the compressed-flag check cannot be installed');
  internals.decompressMessage = (frame, encoding) => {
    if (encoding === 'identity' && frame[0] === 1) {
      // grpc-js sends a rejection of this method as the call's status, so it must be a status object.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      return Promise.reject({ code: GRPC_STATUS.INTERNAL, details: 'compressed message without a grpc-encoding' });
    }
    return original.call(call, frame, encoding);
  };
  return new grpc.ServerInterceptingCall(call);
};

function deadlineMs(deadline: grpc.Deadline): number {
  return deadline instanceof Date ? deadline.getTime() : deadline;
}

type UnaryCall = grpc.ServerUnaryCall<Message | MalformedRequest, Buffer>;
/** Responses are encoded in the handler (see `serviceDefinition`), so the callback takes the wire bytes. */
type UnaryCallback = grpc.sendUnaryData<Buffer>;
/** A call whose responses stream: a server-streaming (health Watch) or bidirectional (reflection) call. */
type StreamingCall = grpc.ServerWritableStream<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>;

/**
 * An `addService` for the standard services that remembers their open response streams. A health `Watch` (and a
 * reflection stream a client keeps open) never ends by itself, and a graceful shutdown waits for every open call,
 * so `close()` must end them or it would always wait the full shutdown timeout.
 */
function trackingStreams(server: grpc.Server, open: Set<StreamingCall>): Pick<grpc.Server, 'addService'> {
  return {
    addService(service, implementation) {
      const wrapped: grpc.UntypedServiceImplementation = { ...implementation };
      for (const [name, method] of Object.entries(service)) {
        if (!method.responseStream) continue;
        // grpc-js finds a handler by the method name or its original (lowerCamelCase) name.
        const key = name in implementation ? name : method.originalName;
        const handler = key === undefined ? undefined : implementation[key];
        if (key === undefined || !handler) continue;
        wrapped[key] = (call: StreamingCall) => {
          open.add(call);
          const forget = () => open.delete(call);
          call.once('cancelled', forget);
          call.once('finish', forget);
          call.once('close', forget);
          (handler as (call: StreamingCall) => void)(call);
        };
      }
      server.addService(service, wrapped);
    },
  };
}

/**
 * The grpc-js service definition of a service's methods, over the generated codec: requests are read with
 * `fromBinary` (unknown fields dropped, as before), responses arrive already encoded (`grpcResponseBytes` splices
 * shared elements) and pass as they are.
 */
function serviceDefinition(methods: Iterable<LoadedMethod>): grpc.ServiceDefinition {
  const out: Record<string, grpc.MethodDefinition<Message | MalformedRequest, Buffer>> = {};
  for (const m of methods) {
    out[m.method] = {
      path: m.path,
      requestStream: m.desc.methodKind === 'client_streaming' || m.desc.methodKind === 'bidi_streaming',
      responseStream: m.desc.methodKind === 'server_streaming' || m.desc.methodKind === 'bidi_streaming',
      originalName: m.desc.localName,
      requestSerialize: (message: Message | MalformedRequest) => {
        if (message instanceof MalformedRequest) throw new Error('a malformed request cannot be sent');
        return Buffer.from(toBinary(m.input, message));
      },
      // Bytes that are no message of the request type are the client's error, answered INVALID_ARGUMENT after
      // authentication by the handler; a throwing deserializer would make grpc-js answer INTERNAL (regression).
      requestDeserialize: (bytes: Buffer): Message | MalformedRequest => {
        try {
          return fromBinary(m.input, bytes, { readUnknownFields: false });
        } catch (error) {
          return new MalformedRequest(error);
        }
      },
      responseSerialize: (bytes: Buffer) => bytes,
      responseDeserialize: (bytes: Buffer) => bytes,
    };
  }
  return out;
}

/** The request message of a gRPC call; bytes that did not decode are INVALID_ARGUMENT. */
function decodeGrpcRequest(request: Message | MalformedRequest): Message {
  if (request instanceof MalformedRequest)
    throw new AppError('parameter_invalid', 'request: not a valid protobuf message of the request type', { cause: request.cause });
  return request;
}

/**
 * Builds the gRPC server: each RpcMethod becomes a unary handler that reads `authorization` from the metadata,
 * honours the client's deadline, and maps errors to gRPC status codes once (an AppError's code by table, anything
 * else INTERNAL with a generic message).
 */
export function createGrpcServer(options: GrpcServerOptions): PlatformGrpcServer {
  const { protos, log } = options;
  const bound = bindRpcs(protos, options.rpcs);
  const deps: RpcRuntimeDeps = { auth: options.auth, maxDeadlineMs: options.maxDeadlineMs };
  const server = new grpc.Server({
    'grpc.max_receive_message_length': options.maxReceiveMessageBytes,
    'grpc.max_send_message_length': options.maxSendMessageBytes,
    // Idle connections are closed after a while, and dead peers are noticed by keepalive pings.
    'grpc.max_connection_idle_ms': 5 * 60_000,
    'grpc.keepalive_time_ms': 2 * 60_000,
    'grpc.keepalive_timeout_ms': 20_000,
    // Channelz stays on although nothing reads it: with it off, grpc-js 1.14 does not track sessions for
    // forceShutdown, and calls still running at the shutdown timeout would never be cancelled.
    interceptors: [compressedFlagGuard],
  });
  refuseOtherCodecs(server);

  function unaryHandler(b: BoundRpc) {
    const name = `${b.rpc.service}/${b.rpc.method}`;
    const callLog = log.child({ rpc: name, transport: 'grpc' });
    return (call: UnaryCall, callback: UnaryCallback): void => {
      const started = performance.now();
      // The log line is written after the answer is handed over, so it never delays it.
      const finish = (code: number) => callLog.info({ code, ms: Math.round(performance.now() - started) }, 'rpc completed');
      invokeRpcResponse(deps, b, {
        authorization: metadataValue(call.metadata, 'authorization'),
        decode: () => decodeGrpcRequest(call.request),
        clientDeadline: deadlineMs(call.getDeadline()),
        // Registered while the handler runs only: grpc-js also reports every finished stream as cancelled.
        onClientGone: (cancel) => {
          call.on('cancelled', cancel);
          return () => call.off('cancelled', cancel);
        },
        transport: 'grpc',
        log: callLog,
      }).then(
        (response) => {
          let message: Buffer;
          try {
            // The service definition's serializer passes these bytes on.
            message = grpcResponseBytes(b, response);
          } catch (error) {
            const appError = asAppError(error, callLog);
            callback({ code: GRPC_STATUS.INTERNAL, details: appError.message });
            finish(appError.grpcCode);
            return;
          }
          callback(null, message);
          finish(GRPC_STATUS.OK);
        },
        (error: unknown) => {
          const appError = asAppError(error, callLog);
          const metadata = new grpc.Metadata();
          for (const [key, value] of Object.entries(appError.headers)) metadata.set(key.toLowerCase(), value);
          callback({ code: appError.grpcCode, details: appError.message, metadata });
          finish(appError.grpcCode);
        },
      );
    };
  }

  const serviceNames: string[] = [];
  for (const [serviceName, methods] of protos.services) {
    const definition = serviceDefinition(methods.values());
    const implementation: grpc.UntypedServiceImplementation = {};
    for (const b of bound) if (b.rpc.service === serviceName) implementation[b.rpc.method] = unaryHandler(b);
    // Methods without an implementation answer UNIMPLEMENTED (grpc-js's default handler).
    if (methods.size > 0) server.addService(definition, implementation);
    serviceNames.push(serviceName);
  }

  const statuses: ServingStatusMap = { '': 'SERVING' };
  for (const name of serviceNames) statuses[name] = 'SERVING';
  const health = new HealthImplementation(statuses);
  const openStreams = new Set<StreamingCall>();
  health.addToServer(trackingStreams(server, openStreams));

  // Reflection describes the served services and the health service from their compiled descriptors, so grpcurl,
  // `buf curl` and dynamic clients need no proto files. (A service only a test loads has no compiled descriptor.)
  const schema = servedSchema();
  const reflected = [...serviceNames.filter((name) => schema.registry.getService(name)), 'grpc.health.v1.Health'];
  addReflection(trackingStreams(server, openStreams), new ReflectionIndex(schema, reflected));

  let started = false;
  return {
    server,
    async listen({ host, port, tls }) {
      const credentials = tls
        ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: tls.cert, private_key: tls.key }], false)
        : grpc.ServerCredentials.createInsecure();
      const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
      const boundPort = await new Promise<number>((resolve, reject) => {
        server.bindAsync(address, credentials, (error, p) => (error ? reject(error) : resolve(p)));
      });
      started = true;
      const urlHost = host.includes(':') ? `[${host}]` : host;
      return { port: boundPort, url: `${tls ? 'grpcs' : 'grpc'}://${urlHost}:${boundPort}` };
    },
    async close(timeoutMs = 10_000) {
      // Watchers are told NOT_SERVING first; then their streams end (status OK), as they would never end alone.
      for (const name of Object.keys(statuses)) health.setStatus(name, 'NOT_SERVING');
      for (const call of openStreams) if (!call.writableEnded) call.end();
      openStreams.clear();
      if (!started) {
        server.forceShutdown();
        return;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          log.warn({ timeoutMs }, 'gRPC calls still running at shutdown; cancelling them');
          server.forceShutdown();
          resolve();
        }, timeoutMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
