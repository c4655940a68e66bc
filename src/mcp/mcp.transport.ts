/**
 * Both protocol eras on one stateless `/mcp` (issue 17 item 1), with the SDK v2 server:
 *
 * - 2026-07-28 requests (they carry the `_meta` envelope) go to `createMcpHandler` in modern-only posture. The SDK
 *   answers `server/discover`, checks `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` against the body (400 with
 *   -32020 on a mismatch or a missing header, 400 with -32022 for an unknown version, 404 with -32601 for an unknown
 *   method), adds `resultType`, and `ttlMs`/`cacheScope` on the cacheable results. It answers JSON, and upgrades
 *   the response to an SSE stream only when the handler sends a notification (progress) before its result.
 * - 2025-era requests (`initialize`, then plain JSON-RPC) are answered here by a fresh server on a stateless
 *   web-standard transport. The SDK's own stateless fallback always streams SSE; this leg answers JSON and
 *   streams only a tool call that asked for progress (`_meta.progressToken`), so both eras behave alike.
 *
 * Every request gets its own server instance built by `factory`, and nothing outlives the exchange: no session id
 * is issued or read, so any replica answers any request.
 */
import {
  createMcpHandler,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpServer,
} from '@modelcontextprotocol/server';
import type { Logger } from '../core/logger.ts';

/** A response, and what to call once its body has been written (or the client went away). */
export interface ServedMcp {
  response: Response;
  finish(): Promise<void>;
}

export interface McpServing<S> {
  /** Serves one request with a server built for `surface` (what the request may see: the tool surface). */
  serve(request: Request, authInfo: AuthInfo, body: unknown, surface: S): Promise<ServedMcp>;
  close(): Promise<void>;
}

/** Whether a 2025-era message is a tool call that asked for progress notifications. */
function asksForProgress(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const message = body as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } };
  return message.method === 'tools/call' && message.params?._meta?.progressToken !== undefined;
}

export function createMcpServing<S>(deps: { factory: (surface: S) => McpServer; fallback: S; log: Logger }): McpServing<S> {
  const onerror = (error: Error) => deps.log.debug({ reason: error.message }, 'MCP request refused or failed');
  // The modern handler is built once and calls the factory with the request it serves: each request's surface
  // is found by that request object. The fallback is never expected (the SDK passes the request it was given).
  const surfaces = new WeakMap<Request, S>();
  const modern = createMcpHandler((ctx) => deps.factory((ctx.requestInfo && surfaces.get(ctx.requestInfo)) ?? deps.fallback), {
    legacy: 'reject',
    responseMode: 'auto',
    onerror,
  });

  const legacy = async (request: Request, authInfo: AuthInfo, body: unknown, surface: S): Promise<ServedMcp> => {
    const server = deps.factory(surface);
    // No sessionIdGenerator: that is what makes the transport stateless (no Mcp-Session-Id issued or required).
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: !asksForProgress(body) });
    transport.onerror = onerror;
    await server.connect(transport);
    const response = await transport.handleRequest(request, { authInfo, parsedBody: body });
    return { response, finish: () => server.close() };
  };

  return {
    async serve(request, authInfo, body, surface) {
      if (await isLegacyRequest(request, body)) return legacy(request, authInfo, body, surface);
      surfaces.set(request, surface);
      const response = await modern.fetch(request, { authInfo, parsedBody: body });
      return { response, finish: async () => undefined };
    },
    close: () => modern.close(),
  };
}
