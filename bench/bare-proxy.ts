import Fastify, { type FastifyInstance } from 'fastify';
import { Agent } from 'undici';

/** A listening bare proxy: where it listens, and how to stop it. */
export interface BareProxy {
  port: number;
  close(): Promise<void>;
}

/** Starts `app` on a free loopback port; closing it closes `agent` too. */
async function listen(app: FastifyInstance, agent: Agent): Promise<BareProxy> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    async close() {
      await app.close();
      await agent.close();
    },
  };
}

/**
 * The floor under any gateway built like this one, for bench:inference's throughput section: a Fastify server whose
 * one route parses the JSON body, sends it on to `upstreamPort` with an undici pool (keep-alive, as the gateway's
 * outbound client), reads the whole answer and returns it. No authentication, database, catalog, translation or
 * usage row: the HTTP server and HTTP client work every proxied request costs, measured on the same machine and load
 * generator as the gateway.
 */
export async function startBareProxy(upstreamPort: number, path: string): Promise<BareProxy> {
  const agent = new Agent();
  const app = Fastify({ logger: false });
  app.post(path, async (req, reply) => {
    const answer = await agent.request({
      origin: `http://127.0.0.1:${upstreamPort}`,
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
      body: JSON.stringify(req.body),
    });
    const body = Buffer.from(await answer.body.arrayBuffer());
    return reply.code(answer.statusCode).header('content-type', 'application/json').send(body);
  });
  return listen(app, agent);
}

/**
 * The floor under an MCP server answering one tool call, for bench:mcp: a Fastify server whose `/mcp` route parses
 * the JSON-RPC body, makes `paths`' GETs to the forge at once with an undici pool (keep-alive, as the server's forge
 * client), parses each answer and returns them as a tool result: the JSON as text and as `structuredContent`, as
 * every read tool does. No authentication, rate limit, log line, MCP SDK, argument validation, untrusted-text
 * handling or slimming: the HTTP and JSON work every such call costs, on the same machine and load generator.
 */
export async function startBareMcpProxy(
  forgeOrigin: string,
  headers: Record<string, string>,
  paths: readonly string[],
): Promise<BareProxy> {
  const agent = new Agent();
  const app = Fastify({ logger: false });
  const get = async (path: string): Promise<unknown> => {
    const answer = await agent.request({ origin: forgeOrigin, path, method: 'GET', headers });
    return answer.body.json();
  };
  app.post('/mcp', async (req, reply) => {
    const { id } = req.body as { id: unknown };
    const parts = await Promise.all(paths.map(get));
    const value = parts.length === 1 && !Array.isArray(parts[0]) ? parts[0] : { parts };
    const result = { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
    return reply.header('content-type', 'application/json').send(JSON.stringify({ jsonrpc: '2.0', id, result }));
  });
  return listen(app, agent);
}
