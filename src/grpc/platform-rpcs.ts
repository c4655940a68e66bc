import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { PlatformContext } from '../app/context.ts';
import { createDocumentsRpcs } from '../documents/documents.rpcs.ts';
import { MAX_METADATA_BYTES, createDocumentsService } from '../documents/documents.service.ts';
import { createPageTokenCodec } from '../documents/page-token.ts';
import { createOsvRpcs } from '../osv/osv.rpcs.ts';
import { osvRuntimeFor } from '../osv/osv.runtime.ts';
import { createGrpcServer, type PlatformGrpcServer } from './grpc.server.ts';
import { registerRpcRoutes } from './http-mapping.ts';
import { loadProtos, type LoadedProtos } from './protos.ts';
import type { RpcMethod } from './rpc.ts';
import { narrowTables } from '../core/db/database.ts';

const MiB = 1024 * 1024;

let protos: LoadedProtos | undefined;

/** The platform's public protos, loaded once per process. */
export function platformProtos(): LoadedProtos {
  protos ??= loadProtos();
  return protos;
}

/**
 * Every implemented RPC of the platform, for both transports: PlatformDocuments and PlatformOSV. A proto method
 * missing from this list answers UNIMPLEMENTED over gRPC and has no HTTP route.
 */
export function platformRpcs(ctx: PlatformContext): RpcMethod[] {
  const secrets = [ctx.secretKeys.current, ...ctx.secretKeys.all.filter((k) => k.id !== ctx.secretKeys.current.id)].map((k) => k.key);
  const documents = createDocumentsService({
    db: narrowTables(ctx.database.db),
    dialect: ctx.database.dialect,
    clock: ctx.clock,
    config: ctx.config.documents,
    pageTokens: createPageTokenCodec(secrets),
  });
  return [...createDocumentsRpcs({ service: documents, config: ctx.config.documents }), ...createOsvRpcs({ service: osvRuntimeFor(ctx).service })];
}

/** The HTTP mappings (`/platform/v1/...`) on the REST listener. */
export function registerPlatformRpcRoutes(app: FastifyInstance, ctx: PlatformContext, rpcs: readonly RpcMethod[] = platformRpcs(ctx), loaded: LoadedProtos = platformProtos()): void {
  registerRpcRoutes(app, { protos: loaded, rpcs, auth: ctx.auth, maxDeadlineMs: ctx.config.grpc.PLATFORM_RPC_DEADLINE_MS });
}

/**
 * gRPC message limits from the document limits: a request holds one document (plus metadata and framing); a
 * response holds one ListDocuments page, which may exceed the page bound by one document, or an OSV answer (soft
 * limit 10 MB at OSV.dev), whichever is larger.
 */
export function grpcMessageLimits(ctx: PlatformContext): { maxReceiveMessageBytes: number; maxSendMessageBytes: number } {
  const d = ctx.config.documents;
  return {
    maxReceiveMessageBytes: Math.max(4 * MiB, d.PLATFORM_DOCUMENT_MAX_BYTES + MAX_METADATA_BYTES + MiB),
    maxSendMessageBytes: Math.max(64 * MiB, d.PLATFORM_DOCUMENT_PAGE_MAX_BYTES + d.PLATFORM_DOCUMENT_MAX_BYTES + MAX_METADATA_BYTES + MiB),
  };
}

/** The platform's gRPC server (not yet listening). Tests may pass other RPCs or protos. */
export function createPlatformGrpcServer(ctx: PlatformContext, rpcs: readonly RpcMethod[] = platformRpcs(ctx), loaded: LoadedProtos = platformProtos()): PlatformGrpcServer {
  return createGrpcServer({
    protos: loaded,
    rpcs,
    auth: ctx.auth,
    log: ctx.log.child({ listener: 'grpc' }),
    maxDeadlineMs: ctx.config.grpc.PLATFORM_RPC_DEADLINE_MS,
    ...grpcMessageLimits(ctx),
  });
}

/** Starts the gRPC listener on `PLATFORM_HOST:PLATFORM_GRPC_PORT` (TLS with `PLATFORM_TLS_CERT`/`PLATFORM_TLS_KEY`). */
export async function startGrpcListener(ctx: PlatformContext): Promise<{ name: string; url: string; close(): Promise<void> }> {
  const core = ctx.config.core;
  const tls = core.PLATFORM_TLS_CERT && core.PLATFORM_TLS_KEY ? { cert: readFileSync(core.PLATFORM_TLS_CERT), key: readFileSync(core.PLATFORM_TLS_KEY) } : undefined;
  const server = createPlatformGrpcServer(ctx);
  try {
    const { url } = await server.listen({ host: core.PLATFORM_HOST, port: core.PLATFORM_GRPC_PORT, tls });
    return { name: 'grpc', url, close: () => server.close(ctx.config.grpc.PLATFORM_GRPC_SHUTDOWN_TIMEOUT_MS) };
  } catch (error) {
    await server.close(0);
    throw error;
  }
}
