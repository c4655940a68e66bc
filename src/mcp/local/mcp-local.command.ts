/**
 * `platform mcp --stdio`, `platform mcp login` and `platform mcp logout`: the local (stdio) forge MCP server and
 * its browser sign-in (spec mcp-oauth.md point 4, issue 3 item 11). Usage: docs/mcp-local.md.
 */
import type { Readable, Writable } from 'node:stream';
import type { Command } from 'commander';
import { CliError, commandLogger, type CliIo } from '../../core/cli-io.ts';
import { systemClock, type Clock } from '../../core/clock.ts';
import type { CoreConfig } from '../../core/config.core.ts';
import type { Env } from '../../core/config.ts';
import { createLogger, stderrDestination } from '../../core/logger.ts';
import type { McpConfig } from '../mcp.config.ts';
import { createForgeHttp, type ForgeHttp } from '../tools/forge.http.ts';
import { createForgeMcpServer, declaredTools } from '../tools/forge.tools.ts';
import { selectTools } from '../tools/tool.surface.ts';
import { systemBrowserOpener, type BrowserOpener } from './mcp-local.browser.ts';
import { createForgeOAuthClient } from './mcp-local.forge-client.ts';
import { homeDirectory, localTokenPath, resolveLocalSettings } from './mcp-local.settings.ts';
import { browserSignIn, startStdioServer, type CreateForgeMcpServer } from './mcp-local.stdio.ts';
import { createTokenFile } from './mcp-local.token-file.ts';

/** Replaceable parts, for tests: no real browser, a fake clock, in-memory stdio. Defaults are the real ones. */
export interface McpLocalCommandDeps {
  openBrowser?: BrowserOpener;
  clock?: Clock;
  /** Replaces the production forge client (forge.http.ts) for every forge call of the commands. */
  fetch?: typeof fetch;
  createServer?: CreateForgeMcpServer;
  stdin?: Readable;
  stdout?: Writable;
  signInTimeoutMs?: number;
}

/**
 * Reads the configuration the commands use. The entry point passes the whole platform's parser, so a bad variable of
 * any service is reported here as it is by every other command.
 */
export type McpLocalConfigLoader = (env: Env) => { core: Pick<CoreConfig, 'LOG_LEVEL'>; mcp: McpConfig };

/** Adds `platform mcp` (with `--stdio`) and its `login` and `logout` subcommands. */
export function registerMcpLocalCommands(
  program: Command,
  io: CliIo,
  loadConfig: McpLocalConfigLoader,
  deps: McpLocalCommandDeps = {},
): void {
  const clock = deps.clock ?? systemClock;
  const openBrowser = deps.openBrowser ?? systemBrowserOpener({ env: io.env });
  const notify = (line: string) => io.err(line);

  /**
   * The forge client of one command: the production one that /mcp uses (mcp.listener.ts), built from the same
   * variables — one keep-alive pool, the CA of FORGE_CA_CERT_PATH, HTTPS_PROXY/HTTP_PROXY except NO_PROXY hosts —
   * for the tools, the sign-in, the refresh and the revocation alike. The caller closes it.
   */
  const forgeClient = (mcp: McpConfig): Pick<ForgeHttp, 'fetch' | 'close'> & { send?: ForgeHttp['send'] } => {
    if (deps.fetch) return { fetch: deps.fetch, close: async () => undefined };
    try {
      return createForgeHttp({ caCertPath: mcp.FORGE_CA_CERT_PATH, env: io.env });
    } catch (error) {
      // An unreadable or non-PEM CA file: one line naming the variable, as at the HTTP listener's start.
      throw new CliError((error as Error).message);
    }
  };

  const mcp = program
    .command('mcp')
    .description('the forge MCP server for MCP clients on this machine (stdio), and its forge sign-in')
    .option('--stdio', 'serve MCP on standard input/output (the MCP client starts this command)')
    .action(async (opts: { stdio?: boolean }) => {
      if (opts.stdio !== true) throw new CliError('choose --stdio, or a subcommand: login, logout (see platform mcp --help)', 2);
      const config = loadConfig(io.env);
      const settings = resolveLocalSettings(config.mcp, io.env);
      if (settings.mode === 'none') {
        throw new CliError(
          'no forge credentials: set FORGE_USE_OAUTH=true (browser sign-in) or FORGE_PERSONAL_ACCESS_TOKEN, with FORGE_URL',
        );
      }
      // Standard output carries MCP messages only: logs go to stderr at the configured level.
      const log = createLogger({ level: config.core.LOG_LEVEL, destination: stderrDestination(), name: 'mcp-stdio' });
      const forge = forgeClient(config.mcp);
      try {
        const running = await startStdioServer({
          settings,
          createServer: deps.createServer ?? createForgeMcpServer,
          // The same tool contract as /mcp: quick actions, the forge deadline and the operator's tool surface
          // (FORGE_TOOLSETS, FORGE_TOOLS, FORGE_DENIED_TOOLS, FORGE_READ_ONLY) follow the same variables. Stdio has no
          // request headers, so the operator's bound is the surface.
          toolOptions: {
            allowQuickActions: config.mcp.FORGE_ALLOW_QUICK_ACTIONS,
            forgeTimeoutMs: config.mcp.FORGE_TIMEOUT_MS,
            tools: selectTools(declaredTools(), config.mcp.toolSurface),
          },
          fetch: forge.fetch,
          forgeSend: forge.send,
          clock,
          log,
          openBrowser,
          notify,
          signInTimeoutMs: deps.signInTimeoutMs,
          stdin: deps.stdin,
          stdout: deps.stdout,
        });
        await running.closed;
      } finally {
        await forge.close();
      }
    });

  mcp
    .command('login')
    .description('sign in to the forge in the browser and store the token for the stdio server (FORGE_USE_OAUTH=true)')
    .action(async () => {
      const config = loadConfig(io.env);
      const settings = resolveLocalSettings(config.mcp, io.env);
      if (settings.mode !== 'oauth') {
        throw new CliError(
          'FORGE_USE_OAUTH is not true: the stdio server would not use a signed-in token (set FORGE_USE_OAUTH=true, FORGE_URL and FORGE_OAUTH_APP_ID)',
        );
      }
      const log = commandLogger(config.core);
      const http = forgeClient(config.mcp);
      let username: string | undefined;
      try {
        const { forge, signIn } = browserSignIn(settings, {
          fetch: http.fetch,
          clock,
          log,
          openBrowser,
          notify,
          signInTimeoutMs: deps.signInTimeoutMs,
        });
        const tokens = await signIn();
        await createTokenFile({ path: settings.tokenPath, log }).write(tokens);
        username = await forge.username(tokens.access_token).catch(() => undefined);
      } finally {
        await http.close();
      }
      io.out(
        `Signed in to ${settings.forgeUrl}${username === undefined ? '' : ` as @${username}`}; the token is stored in ${settings.tokenPath}`,
      );
    });

  mcp
    .command('logout')
    .description('revoke the stored forge token at the forge and delete the token file')
    .action(async () => {
      const config = loadConfig(io.env);
      const path = localTokenPath(config.mcp.FORGE_OAUTH_TOKEN_PATH, homeDirectory(io.env));
      const file = createTokenFile({ path, log: commandLogger(config.core) });
      const stored = await file.read();
      if (stored === undefined) {
        io.out((await file.remove()) ? `Deleted an unreadable token file at ${path}` : `Not signed in (no token file at ${path})`);
        return;
      }
      // Revoke where the token was issued, as recorded in the file: the configuration may point elsewhere by now.
      const http = forgeClient(config.mcp);
      const forge = createForgeOAuthClient({ forgeUrl: stored.forge_url, clientId: stored.client_id, fetch: http.fetch, clock });
      let failure: string | undefined;
      try {
        await forge.revoke(stored.access_token, 'access_token');
        await forge.revoke(stored.refresh_token, 'refresh_token');
      } catch (error) {
        failure = error instanceof Error ? error.message : String(error);
      } finally {
        await http.close();
      }
      await file.remove();
      if (failure !== undefined) {
        throw new CliError(
          `deleted ${path}, but the token could not be revoked at ${stored.forge_url} (${failure}); revoke the application's access in the forge's settings`,
        );
      }
      io.out(`Signed out of ${stored.forge_url}: the token was revoked and ${path} deleted`);
    });
}
