import { readFileSync } from 'node:fs';
import { MAX_METADATA_BYTES } from '../documents/documents.service.ts';
import { createGrpcServer, type PlatformGrpcServer } from '../grpc/grpc.server.ts';
import type { LoadedProtos } from '../grpc/protos.ts';
import type { RpcMethod } from '../grpc/rpc.ts';
import type { PlatformContext } from './context.ts';

const MiB = 1024 * 1024;

/**
 * gRPC message limits from the document limits: a request holds one document (plus metadata and framing); a
 * response holds one ListDocuments page, which may exceed the page bound by one document, or an OSV answer (soft
 * limit 10 MB at OSV.dev), whichever is larger.
 */
export function grpcMessageLimits(core: PlatformContext): { maxReceiveMessageBytes: number; maxSendMessageBytes: number } {
  const d = core.config.documents;
  return {
    maxReceiveMessageBytes: Math.max(4 * MiB, d.PLATFORM_DOCUMENT_MAX_BYTES + MAX_METADATA_BYTES + MiB),
    maxSendMessageBytes: Math.max(64 * MiB, d.PLATFORM_DOCUMENT_PAGE_MAX_BYTES + d.PLATFORM_DOCUMENT_MAX_BYTES + MAX_METADATA_BYTES + MiB),
  };
}

/** The platform's gRPC server (not yet listening) serving `rpcs`. Tests may add RPCs or pass other protos. */
export function createPlatformGrpcServer(
  core: PlatformContext,
  served: { protos: LoadedProtos; rpcs: readonly RpcMethod[] },
): PlatformGrpcServer {
  return createGrpcServer({
    protos: served.protos,
    rpcs: served.rpcs,
    auth: core.auth,
    log: core.log.child({ listener: 'grpc' }),
    maxDeadlineMs: core.config.grpc.PLATFORM_RPC_DEADLINE_MS,
    ...grpcMessageLimits(core),
  });
}

/** Starts the gRPC listener on `PLATFORM_HOST:PLATFORM_GRPC_PORT` (TLS with `PLATFORM_TLS_CERT`/`PLATFORM_TLS_KEY`). */
export async function startGrpcListener(
  core: PlatformContext,
  served: { protos: LoadedProtos; rpcs: readonly RpcMethod[] },
): Promise<{ name: string; url: string; close(): Promise<void> }> {
  const settings = core.config.core;
  const tls =
    settings.PLATFORM_TLS_CERT && settings.PLATFORM_TLS_KEY
      ? { cert: readFileSync(settings.PLATFORM_TLS_CERT), key: readFileSync(settings.PLATFORM_TLS_KEY) }
      : undefined;
  const server = createPlatformGrpcServer(core, served);
  try {
    const { url } = await server.listen({ host: settings.PLATFORM_HOST, port: settings.PLATFORM_GRPC_PORT, tls });
    return { name: 'grpc', url, close: () => server.close(core.config.grpc.PLATFORM_GRPC_SHUTDOWN_TIMEOUT_MS) };
  } catch (error) {
    await server.close(0);
    throw error;
  }
}
