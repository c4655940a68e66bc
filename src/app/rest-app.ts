import { readFileSync } from 'node:fs';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { registerModelPlaneRoutes } from '../admin/admin.routes.ts';
import { isDatabaseReachable } from '../core/db/database.ts';
import { createHttpApp, registerHealthRoutes } from '../core/http/server.ts';
import { registerSessionRoutes } from '../core/identity/sessions.routes.ts';
import { registerPlatformRpcRoutes } from '../grpc/platform-rpcs.ts';
import type { PlatformContext } from './context.ts';

/**
 * The REST listener (`PLATFORM_HTTP_PORT`): health, sessions, the admin API, the member plane and the gRPC
 * services' HTTP mappings. Each service registers its own routes here.
 */
export async function buildRestApp(ctx: PlatformContext): Promise<FastifyInstance> {
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
  registerModelPlaneRoutes(app, ctx);
  registerPlatformRpcRoutes(app, ctx);
  return app;
}
