/**
 * The stdio MCP server of the local flow (issue 3 item 11): the forge MCP server's tools over
 * StdioServerTransport, with the forge token taken from local OAuth (browser sign-in, token file, refresh) or a
 * personal access token. Standard output is the MCP channel: everything for the user goes to `notify`/`log`,
 * which must write to standard error.
 */
import type { Readable, Writable } from 'node:stream';
import type { McpServer } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import type { ForgeSend } from '../tools/forge.client.ts';
import type { ForgeMcpServerDeps } from '../tools/forge.tools.ts';
import type { BrowserOpener } from './mcp-local.browser.ts';
import { createForgeOAuthClient } from './mcp-local.forge-client.ts';
import type { LocalMcpSettings, LocalOAuthSettings } from './mcp-local.settings.ts';
import { signInWithBrowser } from './mcp-local.sign-in.ts';
import { createTokenFile } from './mcp-local.token-file.ts';
import { createOAuthTokenProvider, staticTokenProvider, type ForgeTokenProvider } from './mcp-local.token-provider.ts';

/** The factory contract of the forge MCP server (src/mcp/tools/forge.tools.ts). */
export type CreateForgeMcpServer = (deps: ForgeMcpServerDeps) => McpServer;

/** What the local OAuth pieces need besides their settings. */
export interface LocalOAuthDeps {
  fetch: typeof fetch;
  clock: Clock;
  log: Logger;
  openBrowser: BrowserOpener;
  /** Lines for the user, on stderr. */
  notify: (line: string) => void;
  /** How long a browser sign-in may take; default 5 minutes. */
  signInTimeoutMs?: number | undefined;
  /** Aborts a sign-in in progress (the server is shutting down). */
  signal?: AbortSignal;
}

/** The browser sign-in for `settings`, as a function returning the new (not yet stored) token set. */
export function browserSignIn(settings: LocalOAuthSettings, deps: LocalOAuthDeps) {
  const forge = createForgeOAuthClient({ forgeUrl: settings.forgeUrl, clientId: settings.clientId, fetch: deps.fetch, clock: deps.clock });
  return {
    forge,
    signIn: () =>
      signInWithBrowser({
        forgeUrl: settings.forgeUrl,
        clientId: settings.clientId,
        scopes: settings.scopes,
        redirect: settings.redirect,
        forge,
        openBrowser: deps.openBrowser,
        notify: deps.notify,
        log: deps.log,
        timeoutMs: deps.signInTimeoutMs,
        signal: deps.signal,
      }),
  };
}

/** The token provider for the configured mode. */
export function localTokenProvider(
  settings: LocalOAuthSettings | { mode: 'personal-access-token'; token: string },
  deps: LocalOAuthDeps,
): ForgeTokenProvider {
  if (settings.mode === 'personal-access-token') return staticTokenProvider(settings.token);
  const { forge, signIn } = browserSignIn(settings, deps);
  return createOAuthTokenProvider({
    forgeUrl: settings.forgeUrl,
    clientId: settings.clientId,
    tokenFile: createTokenFile({ path: settings.tokenPath, log: deps.log }),
    forge,
    signIn,
    clock: deps.clock,
    log: deps.log,
  });
}

/** A running stdio server. */
export interface RunningStdioServer {
  /** Resolves when the client goes away (stdin ends) or `close` is called. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the stdio server. The MCP handshake is answered at once; with local OAuth the sign-in (or refresh) starts
 * in the background right away, so it is usually done by the first tool call, which waits for it otherwise.
 */
export async function startStdioServer(
  deps: LocalOAuthDeps & {
    settings: Exclude<LocalMcpSettings, { mode: 'none' }>;
    createServer: CreateForgeMcpServer;
    /** `FORGE_ALLOW_QUICK_ACTIONS`, `FORGE_TIMEOUT_MS` and the tools the operator's surface selects, as /mcp reads them. */
    toolOptions?: Pick<ForgeMcpServerDeps, 'allowQuickActions' | 'forgeTimeoutMs' | 'tools'>;
    /** The tools' REST transport on the production forge client's pool (forge.http.ts), beside its `fetch`. */
    forgeSend?: ForgeSend | undefined;
    stdin?: Readable | undefined;
    stdout?: Writable | undefined;
  },
): Promise<RunningStdioServer> {
  const { settings, log } = deps;
  const abort = new AbortController();
  const provider = localTokenProvider(settings, { ...deps, signal: abort.signal });
  // serveStdio builds a server from this factory for the era the client opens with (a 2025 `initialize` or a
  // 2026-07-28 request), so stdio serves the same tools under both revisions, as `/mcp` does.
  const factory = () =>
    deps.createServer({
      ...deps.toolOptions,
      forgeUrl: settings.forgeUrl,
      fetch: deps.fetch,
      ...(deps.forgeSend ? { forgeSend: deps.forgeSend } : {}),
      log,
      getToken: () => provider.getToken(),
      // A 401 (e.g. the user revoked the application at the forge) makes the next call refresh or sign in again
      // instead of reusing the dead token until it expires.
      onForgeUnauthorized: (token) => provider.invalidate(token),
    });
  const stdin = deps.stdin ?? process.stdin;
  const transport = new StdioServerTransport(stdin, deps.stdout ?? process.stdout);

  let resolveClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      abort.abort();
      await handle.close().catch((error: unknown) => log.warn({ err: error }, 'closing the MCP server failed'));
      resolveClosed();
    })();
    return closing;
  };

  const handle = serveStdio(factory, {
    transport,
    onerror: (error) => log.debug({ reason: error.message }, 'stdio MCP error'),
  });
  // The MCP stdio transport ends a session when stdin ends.
  stdin.once('end', () => void close());
  log.info({ forge: settings.forgeUrl, auth: settings.mode }, 'forge MCP server on stdio');

  if (settings.mode === 'oauth') {
    provider.getToken().catch((error: unknown) => {
      if (!abort.signal.aborted)
        log.warn(
          { reason: error instanceof Error ? error.message : String(error) },
          'forge sign-in did not complete; the next tool call retries',
        );
    });
  }
  return { closed, close };
}
