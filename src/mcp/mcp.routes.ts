/**
 * `/mcp` (spec "Endpoints" POST /mcp). In order, each step answering on its own when it refuses:
 *
 * 1. `Origin` and `Host` (mcp.guard.ts): 403, before anything else is looked at;
 * 2. the per-address rate limit (mcp.limits.ts): 429 with `Retry-After`, before the bearer costs a forge check;
 * 3. the bearer, validated against the forge: without a valid one 401 with the challenge real clients follow
 *    (forge-facts.md); an expired token is 401 too, never 400 (some clients loop on 400);
 * 4. the per-token rate limit: 429 with `Retry-After`;
 * 5. both protocol eras on the one URL with no session (mcp.transport.ts).
 *
 * GET (the 2025 standalone stream) and DELETE (session end) are 405. Errors of these steps, and bodies Fastify
 * refuses (too large, not JSON), are JSON-RPC error objects.
 */
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../core/logger.ts';
import { createForgeApi, type ForgeSend } from './tools/forge.client.ts';
import type { Confirmer } from './tools/tool.confirm.ts';
import type { AnyForgeTool } from './tools/tool.contract.ts';
import { createForgeMcpServer, declaredTools } from './tools/forge.tools.ts';
import { narrowTools, parseNameList, selectTools, type SurfaceRequest, type ToolSurface } from './tools/tool.surface.ts';
import type { BearerValidator } from './mcp.auth.ts';
import type { McpGuard } from './mcp.guard.ts';
import { sendWebResponse, toWebRequest } from './mcp.http-bridge.ts';
import type { LimitKind, McpRequestLimiter } from './mcp.limits.ts';
import { createPooledServing, type PooledAnswer } from './mcp.pooled.ts';
import { createMcpServing } from './mcp.transport.ts';
import { bearerChallenge } from './oauth/oauth.metadata.ts';
import { normalizeClientAddress } from './oauth/oauth.rate-limit.ts';

export interface McpRouteDeps {
  validator: BearerValidator;
  guard: McpGuard;
  limiter: McpRequestLimiter;
  forgeUrl: string;
  allowQuickActions: boolean;
  forgeTimeoutMs: number;
  /** The operator's bound on the tool surface. */
  toolSurface: ToolSurface;
  fetch: typeof fetch;
  /** The tools' REST transport (forge.http.ts `send`); default: `fetch`. */
  forgeSend?: ForgeSend;
  log: Logger;
  /** Public base URL for the challenge; undefined when remote OAuth is off (no discovery to point to). */
  serverUrl: string | undefined;
  scopes: string;
  bases: readonly string[];
  /** Confirmations of high-impact writes, shared by every request (default: one per process). */
  confirmer?: Confirmer;
}

/** Whether a tool result is the contract's error for a forge 401 (tool.contract.ts, forge.client.ts). */
function forgeRefusedToken(result: unknown): boolean {
  const error = (result as { isError?: unknown; structuredContent?: { error?: { status?: unknown } } } | undefined)?.structuredContent
    ?.error;
  return (result as { isError?: unknown } | undefined)?.isError === true && error?.status === 401;
}

/** A name for a tool surface: equal names, equal tools (the declared order is kept by every selection). */
function surfaceKey(tools: readonly AnyForgeTool[]): string {
  return tools.map((t) => t.name).join(',');
}

/**
 * A narrowing header's value, repeated ones joined with `,`. Module-level rather than a closure per request: under
 * tsx (bin/platform.js) each arrow function made per request is also named with an `Object.defineProperty`.
 */
function listHeader(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

function bearerOf(header: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header ?? '');
  return match?.[1];
}

function jsonRpcError(reply: FastifyReply, status: number, code: number, message: string): FastifyReply {
  return reply.status(status).type('application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * CORS for `/mcp`: only an allowed origin is echoed (never `*`: a foreign origin was refused already), with the
 * headers a browser-based client sends and reads in either protocol era.
 */
function applyMcpCors(reply: FastifyReply, origin: string | undefined): void {
  void reply.header('vary', 'origin');
  if (origin === undefined) return;
  void reply.header('access-control-allow-origin', origin);
  void reply.header('access-control-allow-methods', 'POST, OPTIONS');
  void reply.header(
    'access-control-allow-headers',
    'authorization, content-type, accept, mcp-protocol-version, mcp-method, mcp-name, mcp-session-id, last-event-id, x-mcp-toolsets, x-mcp-tools, x-mcp-exclude-tools, x-mcp-readonly',
  );
  void reply.header('access-control-expose-headers', 'www-authenticate, retry-after, mcp-protocol-version');
  void reply.header('access-control-max-age', '86400');
}

export function registerMcpRoutes(app: FastifyInstance, deps: McpRouteDeps): void {
  // One serving object for the process; it builds a server per request. Servers hold no per-user state: the token
  // arrives with each request as `authInfo` and reaches the tools as `ctx.http.authInfo`.
  // One forge client for the process; servers are built per request.
  const api = createForgeApi({ forgeUrl: deps.forgeUrl, fetch: deps.fetch, send: deps.forgeSend, timeoutMs: deps.forgeTimeoutMs });
  // The operator's tools, selected once; a request narrows this list (tools/tool.surface.ts).
  const bound = selectTools(declaredTools(), deps.toolSurface);
  const factory = (tools: readonly AnyForgeTool[]) =>
    createForgeMcpServer({
      tools,
      forgeUrl: deps.forgeUrl,
      fetch: deps.fetch,
      api,
      allowQuickActions: deps.allowQuickActions,
      log: deps.log,
      onForgeUnauthorized: (token) => deps.validator.forget(token),
      ...(deps.confirmer ? { confirmer: deps.confirmer } : {}),
    });
  const serving = createMcpServing<readonly AnyForgeTool[]>({ fallback: bound, factory, log: deps.log });
  // Plain 2025-era tools/list and tools/call skip the per-request server (mcp.pooled.ts).
  const pooled = createPooledServing<readonly AnyForgeTool[]>({ factory, log: deps.log });
  const boundKey = surfaceKey(bound);
  app.addHook('onClose', async () => {
    await pooled.close();
    await serving.close();
  });

  // Bodies Fastify refuses before the handler runs answer in JSON-RPC form too.
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'MCP request failed');
      return jsonRpcError(reply, 500, -32603, 'Internal error');
    }
    if (status === 413) return jsonRpcError(reply, 413, -32600, 'Request body too large.');
    if (status === 415) return jsonRpcError(reply, 415, -32600, 'Content-Type must be application/json.');
    return jsonRpcError(reply, 400, -32700, 'Parse error: the body is not valid JSON.');
  });

  const tooMany = (reply: FastifyReply, kind: LimitKind, retryAfterSeconds: number): FastifyReply => {
    void reply.header('retry-after', String(retryAfterSeconds));
    return jsonRpcError(reply, 429, -32000, `Too many requests for this ${kind}; retry after ${retryAfterSeconds} s.`);
  };

  const unauthorized = (reply: FastifyReply, error?: 'invalid_token'): FastifyReply => {
    void reply.header('www-authenticate', bearerChallenge(deps.serverUrl, deps.scopes, error));
    return jsonRpcError(reply, 401, -32001, error ? 'The access token is invalid or expired.' : 'Authorization required.');
  };

  /**
   * A tool call the forge answered 401 (the token was revoked or expired after the bearer check): the request is
   * answered as an invalid bearer, so the client signs in again or refreshes instead of showing a tool error. The
   * token is already forgotten by the validation cache (`onForgeUnauthorized`), so its next request is refused too.
   * An SSE answer has started before the tool ran: it keeps the tool's `forbidden` result with status 401.
   */
  const forgeUnauthorized = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    request.log.info('the forge refused the bearer on a tool call; answering 401');
    return unauthorized(reply, 'invalid_token');
  };

  /** Origin and Host; answers 403 and returns false when the request must stop here. */
  const guarded = (request: FastifyRequest, reply: FastifyReply): boolean => {
    const origin = deps.guard.origin(request.headers.origin);
    if (origin === false || !deps.guard.host(request.headers.host)) {
      request.log.info(
        { origin: request.headers.origin?.slice(0, 200), host: request.headers.host?.slice(0, 200) },
        'MCP request from a refused origin or host',
      );
      void reply.header('vary', 'origin');
      jsonRpcError(reply, 403, -32000, 'Forbidden: origin or host not allowed.');
      return false;
    }
    applyMcpCors(reply, origin);
    return true;
  };

  /** Validates the bearer; answers and returns undefined when the request must stop here. */
  const authenticate = async (
    request: FastifyRequest,
    reply: FastifyReply,
    token: string | undefined,
  ): Promise<{ authInfo: AuthInfo; key: string } | undefined> => {
    if (token === undefined) {
      unauthorized(reply);
      return undefined;
    }
    const result = await deps.validator.validate(token);
    if (result.ok) return result;
    if (result.reason === 'unavailable') {
      // Not the client's fault: a 401 would send it into a new sign-in.
      jsonRpcError(reply, 503, -32002, 'The forge is unavailable; try again later.');
      return undefined;
    }
    request.log.info({ reason: result.reason }, 'bearer refused');
    unauthorized(reply, 'invalid_token');
    return undefined;
  };

  /** The tools this request may see and call; answers 400 and returns undefined when its narrowing is refused. */
  const surfaceOf = (request: FastifyRequest, reply: FastifyReply): readonly AnyForgeTool[] | undefined => {
    const params = request.params as { toolsets?: string } | undefined;
    const readonlyHeader = listHeader(request, 'x-mcp-readonly')?.trim().toLowerCase();
    if (readonlyHeader !== undefined && !['true', 'false', '1', '0', ''].includes(readonlyHeader)) {
      jsonRpcError(reply, 400, -32602, 'X-MCP-Readonly must be true or false.');
      return undefined;
    }
    const fromUrl = params?.toolsets === undefined || params.toolsets === 'all' ? undefined : parseNameList(params.toolsets);
    const fromHeader = parseNameList(listHeader(request, 'x-mcp-toolsets'));
    // Both given: the request sees the toolsets named by both (each only narrows).
    const toolsets = fromUrl && fromHeader ? fromUrl.filter((s) => fromHeader.includes(s)) : (fromUrl ?? fromHeader);
    const tools = parseNameList(listHeader(request, 'x-mcp-tools'));
    const exclude = parseNameList(listHeader(request, 'x-mcp-exclude-tools'));
    const wanted: SurfaceRequest = {
      ...(toolsets !== undefined ? { toolsets } : {}),
      ...(tools !== undefined ? { tools } : {}),
      ...(exclude !== undefined ? { exclude } : {}),
      readOnly: readonlyHeader === 'true' || readonlyHeader === '1' || request.routeOptions.url?.endsWith('/readonly') === true,
    };
    if (fromUrl && fromHeader && toolsets?.length === 0) {
      jsonRpcError(reply, 400, -32602, 'The URL and X-MCP-Toolsets name no toolset in common.');
      return undefined;
    }
    if (wanted.toolsets === undefined && wanted.tools === undefined && wanted.exclude === undefined && !wanted.readOnly) return bound;
    const narrowed = narrowTools(bound, wanted);
    if ('error' in narrowed) {
      jsonRpcError(reply, 400, -32602, narrowed.error);
      return undefined;
    }
    return narrowed.tools;
  };

  const post = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!guarded(request, reply)) return reply;
    const address = normalizeClientAddress(request.ip);
    const token = bearerOf(request.headers.authorization);
    let bearer: { authInfo: AuthInfo; key: string } | undefined = token !== undefined ? deps.validator.cachedValid(token) : undefined;
    if (bearer) {
      // A caller the validation cache knows: no forge check is at stake, so both limits are counted in one exchange,
      // in the same order and with the same answers as below.
      const refused = await deps.limiter.hitRequest(address, bearer.key);
      if (refused) return tooMany(reply, refused.kind, refused.retryAfterSeconds);
    } else {
      const byAddress = await deps.limiter.hit('address', address);
      if (!byAddress.allowed) return tooMany(reply, 'address', byAddress.retryAfterSeconds);
      bearer = await authenticate(request, reply, token);
      if (!bearer) return reply;
      const byToken = await deps.limiter.hit('token', bearer.key);
      if (!byToken.allowed) return tooMany(reply, 'token', byToken.retryAfterSeconds);
    }
    const { authInfo } = bearer;
    const tools = surfaceOf(request, reply);
    if (!tools) return reply;

    const fast = pooled.serve(request.headers, request.body, authInfo, tools === bound ? boundKey : surfaceKey(tools), tools);
    if (fast) {
      let answer: PooledAnswer;
      try {
        answer = await fast;
      } catch (error) {
        request.log.error({ err: error }, 'MCP request failed');
        return jsonRpcError(reply, 500, -32603, 'Internal error');
      }
      if (forgeRefusedToken(answer.result)) return forgeUnauthorized(request, reply);
      // As bytes (mcp.pooled.ts encodes them): Fastify measures a string body with Buffer.byteLength and the socket
      // then encodes it again; a large answer (a diff window, ~190 KB) spent ~0.1 ms in that measuring pass alone.
      return reply.status(200).type('application/json').send(answer.body);
    }
    const webRequest = toWebRequest('POST', `http://localhost${request.url}`, request.headers);
    let served: Awaited<ReturnType<typeof serving.serve>>;
    try {
      served = await serving.serve(webRequest, authInfo, request.body, tools);
    } catch (error) {
      request.log.error({ err: error }, 'MCP request failed');
      return jsonRpcError(reply, 500, -32603, 'Internal error');
    }
    let { response } = served;
    if (response.headers.get('content-type')?.startsWith('application/json')) {
      // A JSON answer is complete: a tool call the forge refused the token for is answered as above.
      const text = await response.text();
      if (text.includes('"status":401') && forgeRefusedToken((JSON.parse(text) as { result?: unknown }).result)) {
        await served.finish().catch(() => undefined);
        return forgeUnauthorized(request, reply);
      }
      response = new Response(text, { status: response.status, headers: response.headers });
    }
    // The body may be an SSE stream that outlives this handler: the reply is written by hand from here on.
    reply.hijack();
    const extra: Record<string, string> = {};
    for (const [name, value] of Object.entries(reply.getHeaders())) if (typeof value === 'string') extra[name] = value;
    await sendWebResponse(reply.raw, response, extra);
    await served.finish().catch((error: unknown) => request.log.warn({ err: error }, 'closing an MCP exchange failed'));
    // The core's onResponse hook writes the completion line for this hijacked reply too (one line per request).
    return reply;
  };

  // `/mcp/x/{toolsets}[/readonly]`: the narrowing headers as a URL, for clients that cannot set headers. The same
  // guards, limits and bearer apply; its OAuth resource is still `{MCP_SERVER_URL}/mcp` (a path prefix of it).
  const paths = deps.bases.flatMap((base) => [`${base}/mcp`, `${base}/mcp/x/:toolsets`, `${base}/mcp/x/:toolsets/readonly`]);
  for (const path of paths) {
    app.post(path, post);
    app.route({
      method: ['GET', 'DELETE'],
      url: path,
      handler: async (request, reply) => {
        if (!guarded(request, reply)) return reply;
        void reply.header('allow', 'POST');
        return jsonRpcError(reply, 405, -32000, 'Method not allowed.');
      },
    });
    app.options(path, async (request, reply) => {
      if (!guarded(request, reply)) return reply;
      return reply.status(204).send();
    });
  }
}
