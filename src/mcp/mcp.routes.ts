/**
 * `/mcp` (spec "Endpoints" POST /mcp): bearer validation against the forge, then the SDK's Streamable HTTP
 * transport in stateless form (a transport per request, servers reused from an idle pool, JSON responses), so any
 * replica answers any request. Without a valid bearer: 401 with the challenge real clients follow (forge-facts.md);
 * an expired token is 401 too, never 400 (some clients loop on 400).
 */
import { performance } from 'node:perf_hooks';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../core/logger.ts';
import { createForgeMcpServer } from './tools/forge.tools.ts';
import type { BearerValidator } from './mcp.auth.ts';
import { bearerChallenge } from './oauth/oauth.metadata.ts';
import { applyCors } from './oauth/oauth.routes.ts';

export interface McpRouteDeps {
  validator: BearerValidator;
  forgeUrl: string;
  fetch: typeof fetch;
  log: Logger;
  /** Public base URL for the challenge; undefined when remote OAuth is off (no discovery to point to). */
  serverUrl: string | undefined;
  scopes: string;
  bases: readonly string[];
}

function bearerOf(header: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header ?? '');
  return match?.[1];
}

function jsonRpcError(reply: FastifyReply, status: number, code: number, message: string): FastifyReply {
  return reply.status(status).type('application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** Idle servers kept for reuse: building one (tools and schemas) costs about a millisecond. */
const MAX_IDLE_SERVERS = 16;

export function registerMcpRoutes(app: FastifyInstance, deps: McpRouteDeps): void {
  // Servers hold no per-user state (the token arrives with each request as `extra.authInfo`), so a server whose
  // transport has closed serves the next request.
  const idle: McpServer[] = [];
  const acquire = (): McpServer =>
    idle.pop() ??
    createForgeMcpServer({
      forgeUrl: deps.forgeUrl,
      fetch: deps.fetch,
      log: deps.log,
      onForgeUnauthorized: (token) => deps.validator.forget(token),
    });

  const unauthorized = (reply: FastifyReply, error?: 'invalid_token'): FastifyReply => {
    void reply.header('www-authenticate', bearerChallenge(deps.serverUrl, deps.scopes, error));
    return jsonRpcError(reply, 401, -32001, error ? 'The access token is invalid or expired.' : 'Authorization required.');
  };

  /** Validates the bearer; answers and returns undefined when the request must stop here. */
  const authenticate = async (request: FastifyRequest, reply: FastifyReply): Promise<AuthInfo | undefined> => {
    const token = bearerOf(request.headers.authorization);
    if (token === undefined) {
      unauthorized(reply);
      return undefined;
    }
    const result = await deps.validator.validate(token);
    if (result.ok) return result.authInfo;
    if (result.reason === 'unavailable') {
      // Not the client's fault: a 401 would send it into a new sign-in.
      jsonRpcError(reply, 503, -32002, 'The forge is unavailable; try again later.');
      return undefined;
    }
    request.log.info({ reason: result.reason }, 'bearer refused');
    unauthorized(reply, 'invalid_token');
    return undefined;
  };

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    applyCors(reply);
    const authInfo = await authenticate(request, reply);
    if (!authInfo) return reply;
    if (request.method !== 'POST') {
      // Stateless server: no standalone SSE stream (GET) and no session to delete (DELETE).
      void reply.header('allow', 'POST');
      return jsonRpcError(reply, 405, -32000, 'Method not allowed.');
    }
    const server = acquire();
    let reusable = true;
    // No sessionIdGenerator: that is what puts the SDK transport in stateless mode.
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    // The reply is written by the transport from here on; headers set so far are copied to the raw response.
    reply.hijack();
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    const startedAt = performance.now();
    reply.raw.on('close', () => {
      // Hijacked replies skip Fastify's completion hook; the same line (path only, no query) is written here.
      request.log.info(
        {
          method: request.method,
          path: request.url.split('?')[0],
          status: reply.raw.statusCode,
          ms: Math.round(performance.now() - startedAt),
        },
        'request completed',
      );
      void transport.close().then(() => {
        if (reusable && idle.length < MAX_IDLE_SERVERS && !idle.includes(server)) idle.push(server);
      });
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(Object.assign(request.raw, { auth: authInfo }), reply.raw, request.body);
    } catch (error) {
      request.log.error({ err: error }, 'MCP request failed');
      // A server in an unknown state is not reused.
      reusable = false;
      void server.close();
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
      }
    }
    return reply;
  };

  for (const base of deps.bases) {
    app.route({ method: ['POST', 'GET', 'DELETE'], url: `${base}/mcp`, handler: handle });
    app.options(`${base}/mcp`, async (_request, reply) => {
      applyCors(reply);
      return reply.status(204).send();
    });
  }
}
