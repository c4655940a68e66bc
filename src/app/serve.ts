import { resolve } from 'node:path';
import { CONSOLE_PATH } from '../console/index.ts';
import { closeGracefully } from '../core/http/server.ts';
import { devForgeStateFile } from '../devforge/index.ts';
import { startMcpServices } from '../mcp/mcp.listener.ts';
import { composeServices, SERVICE_BUILDERS, SERVICES, type ServiceBuilders, type ServiceName } from './compose.ts';
import type { PlatformContext } from './context.ts';
import { startGrpcListener } from './grpc-listener.ts';
import { buildRestApp } from './rest-app.ts';

/** A running listener: what it serves, where, and how to stop it gracefully. */
interface RunningListener {
  name: string;
  url: string;
  /** Extra lines printed under the URL (for example the dev forge's sign-in details). */
  details?: string[];
  close(): Promise<void>;
}

export interface RunningPlatform {
  listeners: RunningListener[];
  /** Stops accepting, lets in-flight requests finish, then returns (the caller closes the database). */
  close(): Promise<void>;
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Builds the selected services (src/app/compose.ts) and starts their listeners: the REST listener for `admin` or
 * `grpc` (each mounting only its own routes), the gRPC listener for `grpc`, the MCP server and the dev forge. A
 * listener that fails to start closes the ones already started, so a failed start leaves nothing half-running.
 */
export async function startPlatform(
  ctx: PlatformContext,
  only: ReadonlySet<ServiceName> = new Set(SERVICES),
  builders: ServiceBuilders = SERVICE_BUILDERS,
): Promise<RunningPlatform> {
  const core = ctx.config.core;
  const listeners: RunningListener[] = [];
  // Listeners close together, so the shutdown takes one grace period rather than one per listener.
  const closeAll = async () => {
    await Promise.all(
      [...listeners].reverse().map(async (listener) => {
        try {
          await listener.close();
        } catch (error) {
          ctx.log.error({ err: error, listener: listener.name }, 'listener did not close cleanly');
        }
      }),
    );
  };
  try {
    const services = composeServices(ctx, only, builders);
    if (only.has('admin') || only.has('grpc')) {
      const rest = await buildRestApp(ctx, services);
      await rest.listen({ host: core.PLATFORM_HOST, port: core.PLATFORM_HTTP_PORT });
      const address = rest.server.address();
      const port = typeof address === 'object' && address ? address.port : core.PLATFORM_HTTP_PORT;
      const scheme = core.PLATFORM_TLS_CERT ? 'https' : 'http';
      const url = `${scheme}://${hostForUrl(core.PLATFORM_HOST)}:${port}`;
      // The admin console rides on the admin API (issue 19): its URL is printed wherever that API is served.
      const details = services.admin ? [`console   ${url}${CONSOLE_PATH}`] : [];
      listeners.push({ name: 'rest', url, details, close: () => closeGracefully(rest) });
    }
    if (services.rpc) listeners.push(await startGrpcListener(ctx, services.rpc));
    if (only.has('mcp') || only.has('devforge')) {
      const mcpDeps = {
        config: ctx.config,
        log: ctx.log,
        clock: ctx.clock,
        fetch: ctx.fetch,
        localSecret: ctx.secretKeys.current.key,
        // The dev forge keeps its user, application and tokens beside the database, so a restart signs nobody out.
        devForgeStateFile: devForgeStateFile(resolve(core.PLATFORM_DATA_DIR)),
      };
      listeners.push(...(await startMcpServices(mcpDeps, { mcp: only.has('mcp'), devforge: only.has('devforge') })));
    }
  } catch (error) {
    await closeAll();
    throw error;
  }
  return { listeners, close: closeAll };
}
