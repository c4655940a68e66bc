/**
 * The forge MCP server: the server that carries the tools (declared per toolset, listed in toolsets.ts, on the
 * contract of tool.contract.ts).
 * Used by the remote server (`/mcp`, a server per request, the bearer in `ctx.http.authInfo`) and by the local
 * stdio server (src/mcp/local, which passes `getToken`).
 */
import { randomBytes } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/server';
import type { Logger } from '../../core/logger.ts';
import { createForgeApi, type ForgeApi, type ForgeSend } from './forge.client.ts';
import { createMemoryReplayCache } from '../oauth/oauth.replay.ts';
import { registerForgePrompts } from './prompts.ts';
import { registerForgeResources } from './resources.ts';
import { SERVER_INFO } from './server.info.ts';
import { createConfirmer, type Confirmer } from './tool.confirm.ts';
import { registerForgeTool, type AnyForgeTool } from './tool.contract.ts';
import { defaultToolsetNames, toolsetsOf, toolsetTools } from './toolsets.ts';

export interface ForgeMcpServerDeps {
  /** Base URL of the forge; the REST API is at `{forgeUrl}/api/v4`. */
  forgeUrl: string;
  fetch: typeof fetch;
  /** The REST transport of the production forge client (forge.http.ts `send`); default: `fetch`. */
  forgeSend?: ForgeSend;
  log: Logger;
  /** Where the token comes from when the request carries none (stdio). Remote requests use `ctx.http.authInfo.token`. */
  getToken?: () => Promise<string>;
  /** Told when the forge rejects a token, so a validation cache can forget it (issue 3 item 9). */
  onForgeUnauthorized?: (token: string) => void;
  /** `FORGE_ALLOW_QUICK_ACTIONS`: bodies may hold lines starting with `/` (default false). */
  allowQuickActions?: boolean;
  /** `FORGE_TIMEOUT_MS`: the deadline of one forge request (default 15 s). */
  forgeTimeoutMs?: number;
  /** A forge client to share (the remote server builds one per process, not one per request). */
  api?: ForgeApi;
  /**
   * Confirmations of high-impact writes (tool.confirm.ts). Replicas must share its secret and replay cache; the
   * default is one per process (a random key, an in-memory replay record), right for stdio and one replica.
   */
  confirmer?: Confirmer;
  /** The tools to carry, in order (tool.surface.ts selects them); default: the default toolsets' tools. */
  tools?: readonly AnyForgeTool[];
}

/** Every declared tool, in the order `tools/list` shows them (toolsets.ts lists the toolsets). */
export function forgeTools(): AnyForgeTool[] {
  return toolsetTools();
}

/** Built once: the declarations do not change while the process runs, and servers are built per request. */
let declared: AnyForgeTool[] | undefined;

/** The declared tools, built once per process. */
export function declaredTools(): readonly AnyForgeTool[] {
  declared ??= forgeTools();
  return declared;
}

let processConfirmer: Confirmer | undefined;

/** The per-process confirmer (see {@link ForgeMcpServerDeps.confirmer}). */
function defaultConfirmer(): Confirmer {
  processConfirmer ??= createConfirmer({
    secret: randomBytes(32),
    replay: createMemoryReplayCache({ clock: { now: () => Date.now() } }),
  });
  return processConfirmer;
}

/** The tools of the default toolsets (what a server carries when nobody narrowed or widened it). */
export function defaultTools(): AnyForgeTool[] {
  const defaults = new Set(defaultToolsetNames());
  return declaredTools().filter((t) => defaults.has(t.toolset));
}

/** Builds an MCP server carrying the forge tools (`deps.tools`, default: the default toolsets). */
export function createForgeMcpServer(deps: ForgeMcpServerDeps): McpServer {
  const tools = deps.tools ?? defaultTools();
  const api =
    deps.api ??
    createForgeApi({
      forgeUrl: deps.forgeUrl,
      fetch: deps.fetch,
      send: deps.forgeSend,
      ...(deps.forgeTimeoutMs ? { timeoutMs: deps.forgeTimeoutMs } : {}),
    });
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {} },
    // 2026-07-28 cache fields. Private: the list may differ by the caller's authorization (issue 18 narrows it by
    // token and headers), so no shared cache may answer it for someone else.
    cacheHints: {
      'server/discover': { ttlMs: 300_000, cacheScope: 'private' },
      'tools/list': { ttlMs: 300_000, cacheScope: 'private' },
      'prompts/list': { ttlMs: 300_000, cacheScope: 'private' },
      'resources/templates/list': { ttlMs: 300_000, cacheScope: 'private' },
      'resources/list': { ttlMs: 300_000, cacheScope: 'private' },
      // A file at a branch changes with the branch: no caching of reads.
      'resources/read': { ttlMs: 0, cacheScope: 'private' },
    },
  });
  const toolsets = toolsetsOf(tools);
  const confirmer = deps.confirmer ?? defaultConfirmer();
  for (const tool of tools)
    registerForgeTool(server, tool, {
      api,
      confirmer,
      toolsets,
      forgeUrl: deps.forgeUrl,
      log: deps.log,
      allowQuickActions: deps.allowQuickActions ?? false,
      ...(deps.getToken ? { getToken: deps.getToken } : {}),
      ...(deps.onForgeUnauthorized ? { onForgeUnauthorized: deps.onForgeUnauthorized } : {}),
    });
  // Resources (files at a ref, job logs), completions of projects and refs, and the prompts (issue 18 item 3).
  registerForgeResources(server, { api, forgeUrl: deps.forgeUrl, ...(deps.getToken ? { getToken: deps.getToken } : {}) });
  registerForgePrompts(server);
  return server;
}
