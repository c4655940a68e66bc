import { readFileSync } from 'node:fs';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { registerModelPlaneRoutes } from '../admin/admin.routes.ts';
import { registerConsoleRoutes } from '../console/index.ts';
import { isDatabaseReachable } from '../core/db/database.ts';
import { createHttpApp, registerHealthRoutes } from '../core/http/server.ts';
import { registerSessionRoutes } from '../core/identity/sessions.routes.ts';
import { registerRpcRoutes } from '../grpc/http-mapping.ts';
import { registerMemberRoutes } from '../member/member.routes.ts';
import type { LoadedProtos } from '../grpc/protos.ts';
import type { RpcMethod } from '../grpc/rpc.ts';
import type { PlatformServices } from './compose.ts';
import type { PlatformContext } from './context.ts';

/** The HTTP mappings (`/platform/v1/...`) of `rpcs` on the REST listener. */
export function registerRpcMappings(
  app: FastifyInstance,
  ctx: PlatformContext,
  served: { protos: LoadedProtos; rpcs: readonly RpcMethod[] },
): void {
  registerRpcRoutes(app, {
    protos: served.protos,
    rpcs: served.rpcs,
    auth: ctx.auth,
    maxDeadlineMs: ctx.config.grpc.PLATFORM_RPC_DEADLINE_MS,
  });
}

/**
 * The REST listener (`PLATFORM_HTTP_PORT`): health and sessions always; the admin API, the member plane, the admin
 * console (`/console/`) and the OpenAPI document with `admin`; the gRPC services' HTTP mappings with `grpc`. Each service registers its own
 * routes here.
 */
export async function buildRestApp(ctx: PlatformContext, services: PlatformServices): Promise<FastifyInstance> {
  const core = ctx.config.core;
  const https =
    core.PLATFORM_TLS_CERT && core.PLATFORM_TLS_KEY
      ? { cert: readFileSync(core.PLATFORM_TLS_CERT), key: readFileSync(core.PLATFORM_TLS_KEY) }
      : undefined;
  const app = createHttpApp({
    log: ctx.log,
    trustProxy: core.TRUST_PROXY,
    bodyLimit: core.PLATFORM_BODY_LIMIT_BYTES,
    ...(https ? { https } : {}),
  });
  // Opt-in per route (`config.rateLimit`), so only the routes that need a limit pay for one.
  await app.register(rateLimit, { global: false });
  registerHealthRoutes(app, () => isDatabaseReachable(ctx.database));
  registerSessionRoutes(app, { identity: ctx.identity, auth: ctx.auth, sessionTtlMs: core.PLATFORM_SESSION_TTL_HOURS * 3_600_000 });
  if (services.admin) {
    registerModelPlaneRoutes(app, { plane: services.admin, auth: ctx.auth });
    registerMemberRoutes(app, { plane: services.admin, auth: ctx.auth });
    // The console is the admin API's face (issue 19): served wherever that API is, calling only its public routes.
    registerConsoleRoutes(app);
  }
  if (services.rpc) registerRpcMappings(app, ctx, services.rpc);
  return app;
}
