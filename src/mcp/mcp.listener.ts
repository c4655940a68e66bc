/**
 * Starting the MCP listener (service `mcp`, `MCP_PORT`) and, when no `FORGE_URL` is configured, the dev forge
 * (service `devforge`, `DEV_FORGE_PORT`) seeded with one user and one application whose only redirect URI is
 * `{MCP_SERVER_URL}/callback`, with the MCP server in callback proxy mode against it, so `npm start` gives a
 * newcomer a complete sign-in to try.
 */
import { readFileSync } from 'node:fs';
import type { Clock } from '../core/clock.ts';
import type { CoreConfig } from '../core/config.core.ts';
import { freePort } from '../core/http/free-port.ts';
import { closeGracefully } from '../core/http/server.ts';
import type { Logger } from '../core/logger.ts';
import { devForgeSeed, devForgeSeedFromState, startDevForge } from '../devforge/index.ts';
import { buildMcpApp, mcpSettingsFromConfig, type McpSettings } from './mcp.app.ts';
import type { McpConfig } from './mcp.config.ts';
import { createForgeHttp } from './tools/forge.http.ts';

/** A started listener, in the shape of `RunningListener` (src/app/serve.ts). */
export interface StartedListener {
  name: string;
  url: string;
  /** Extra lines to print under the URL (the dev forge's sign-in details). */
  details?: string[];
  close(): Promise<void>;
}

export interface McpServiceDeps {
  config: { core: CoreConfig; mcp: McpConfig };
  log: Logger;
  clock: Clock;
  fetch: typeof fetch;
  /** The platform secret key; consent forms and cookies are sealed with a key derived from it (stateful mode). */
  localSecret: Buffer;
  /** The dev forge's state file (`platform serve` passes `$PLATFORM_DATA_DIR/devforge.json`); absent: in memory. */
  devForgeStateFile?: string;
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Starts the dev forge and/or the MCP listener. Fails with a one-line error when the MCP server has no forge
 * (no `FORGE_URL` and the dev forge not selected).
 */
export async function startMcpServices(deps: McpServiceDeps, select: { mcp: boolean; devforge: boolean }): Promise<StartedListener[]> {
  const { core, mcp } = deps.config;
  const started: StartedListener[] = [];
  const host = core.PLATFORM_HOST;
  try {
    for (const notice of mcp.notices) deps.log.warn(notice);
    let forgeOverride: { forgeUrl: string; appId: string; serverUrl: string } | undefined;
    let mcpPort = core.MCP_PORT;

    if (mcp.FORGE_URL === undefined) {
      if (!select.devforge) {
        if (select.mcp) throw new Error('the MCP server needs a forge: set FORGE_URL, or run the dev forge too (--only mcp,devforge)');
        return started;
      }
      if (select.mcp && mcpPort === 0 && mcp.MCP_SERVER_URL === undefined) mcpPort = await freePort(host);
      const serverUrl = mcp.MCP_SERVER_URL ?? `http://${hostForUrl(host)}:${mcpPort}`;
      const stateFile = deps.devForgeStateFile;
      const seed = stateFile ? devForgeSeedFromState(stateFile, [`${serverUrl}/callback`]) : devForgeSeed([`${serverUrl}/callback`]);
      const forge = await startDevForge({
        ...seed,
        host,
        port: core.DEV_FORGE_PORT,
        logger: deps.log.child({ service: 'devforge' }),
        ...(stateFile ? { stateFile } : {}),
      });
      const user = seed.users[0];
      const application = seed.applications[0];
      if (!user || !application) throw new Error('dev forge seed without a user or an application');
      started.push({
        name: 'devforge',
        url: forge.url,
        details: [
          `  sign in as:      ${user.username} / ${user.password}`,
          `  application id:  ${application.uid} (redirect URI ${serverUrl}/callback)`,
        ],
        close: () => closeGracefully(forge.app),
      });
      forgeOverride = { forgeUrl: forge.url, appId: application.uid, serverUrl };
    }
    if (!select.mcp) return started;

    const settings: McpSettings = mcpSettingsFromConfig(mcp, core, deps.localSecret, forgeOverride);
    const https =
      core.PLATFORM_TLS_CERT && core.PLATFORM_TLS_KEY
        ? { cert: readFileSync(core.PLATFORM_TLS_CERT), key: readFileSync(core.PLATFORM_TLS_KEY) }
        : undefined;
    // A real forge gets the production client: one keep-alive pool, the custom CA, the proxy variables. The dev
    // forge (and tests) keep the injected fetch.
    const forgeHttp = mcp.FORGE_URL !== undefined ? createForgeHttp({ caCertPath: mcp.FORGE_CA_CERT_PATH }) : undefined;
    const built = await buildMcpApp({
      settings,
      log: deps.log.child({ service: 'mcp' }),
      clock: deps.clock,
      fetch: forgeHttp?.fetch ?? deps.fetch,
      ...(forgeHttp ? { forgeSend: forgeHttp.send } : {}),
      ...(https ? { https } : {}),
    });
    const closeBuilt = async () => {
      await built.close();
      await forgeHttp?.close();
    };
    try {
      await built.app.listen({ host, port: mcpPort });
    } catch (error) {
      await closeBuilt();
      throw error;
    }
    const address = built.app.server.address();
    const port = typeof address === 'object' && address ? address.port : mcpPort;
    const url = `${https ? 'https' : 'http'}://${hostForUrl(host)}:${port}`;
    const details =
      settings.mode === 'none'
        ? ['  remote OAuth off: /mcp takes a forge token as bearer']
        : [
            `  ${settings.mode === 'callback_proxy' ? 'callback proxy' : 'passthrough'} OAuth${settings.stateless ? ', stateless' : ''}; public URL ${settings.serverUrl}/mcp`,
          ];
    started.push({
      name: 'mcp',
      url,
      details,
      close: closeBuilt,
    });
    return started;
  } catch (error) {
    for (const listener of started.reverse()) await listener.close().catch(() => undefined);
    throw error;
  }
}
