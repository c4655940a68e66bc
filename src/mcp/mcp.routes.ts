/**
 * `/mcp` (spec "Endpoints" POST /mcp): bearer validation against the forge, then both protocol eras on the one
 * URL with no session (mcp.transport.ts). GET (the 2025 standalone stream) and DELETE (session end) are 405.
 *
 * Without a valid bearer: 401 with the challenge real clients follow (forge-facts.md); an expired token is 401
 * too, never 400 (some clients loop on 400).
 */
import { performance } from 'node:perf_hooks';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../core/logger.ts';
import { createForgeMcpServer } from './tools/forge.tools.ts';
import type { BearerValidator } from './mcp.auth.ts';
import { sendWebResponse, toWebRequest } from './mcp.http-bridge.ts';
import { createMcpServing } from './mcp.transport.ts';
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

function methodNotAllowed(reply: FastifyReply): FastifyReply {
  void reply.header('allow', 'POST');
  return jsonRpcError(reply, 405, -32000, 'Method not allowed.');
}

export function registerMcpRoutes(app: FastifyInstance, deps: McpRouteDeps): void {
  // One handler for the process; it builds a server per request. Servers hold no per-user state: the token
  // arrives with each request as `authInfo` and reaches the tools as `ctx.http.authInfo`.
  const serving = createMcpServing({
    factory: () =>
      createForgeMcpServer({
        forgeUrl: deps.forgeUrl,
        fetch: deps.fetch,
        log: deps.log,
        onForgeUnauthorized: (token) => deps.validator.forget(token),
      }),
    log: deps.log,
  });
  app.addHook('onClose', async () => serving.close());

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

  const post = async (request: FastifyRequest, reply: FastifyReply) => {
    applyCors(reply);
    const authInfo = await authenticate(request, reply);
    if (!authInfo) return reply;
    const startedAt = performance.now();
    const webRequest = toWebRequest('POST', `http://localhost${request.url}`, request.headers);
    let served: Awaited<ReturnType<typeof serving.serve>>;
    try {
      served = await serving.serve(webRequest, authInfo, request.body);
    } catch (error) {
      request.log.error({ err: error }, 'MCP request failed');
      return jsonRpcError(reply, 500, -32603, 'Internal error');
    }
    // The body may be an SSE stream that outlives this handler: the reply is written by hand from here on.
    reply.hijack();
    const extra: Record<string, string> = {};
    for (const [name, value] of Object.entries(reply.getHeaders())) if (typeof value === 'string') extra[name] = value;
    const { response } = served;
    await sendWebResponse(reply.raw, response, extra);
    await served.finish().catch((error: unknown) => request.log.warn({ err: error }, 'closing an MCP exchange failed'));
    // Hijacked replies skip Fastify's completion hook; the same line (path only, no query) is written here.
    request.log.info(
      { method: 'POST', path: request.url.split('?')[0], status: response.status, ms: Math.round(performance.now() - startedAt) },
      'request completed',
    );
    return reply;
  };

  for (const base of deps.bases) {
    app.post(`${base}/mcp`, post);
    app.route({
      method: ['GET', 'DELETE'],
      url: `${base}/mcp`,
      handler: async (_request, reply) => {
        applyCors(reply);
        return methodNotAllowed(reply);
      },
    });
    app.options(`${base}/mcp`, async (_request, reply) => {
      applyCors(reply);
      return reply.status(204).send();
    });
  }
}
