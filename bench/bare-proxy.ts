import Fastify from 'fastify';
import { Agent } from 'undici';

/** A listening bare proxy: where it listens, and how to stop it. */
export interface BareProxy {
  port: number;
  close(): Promise<void>;
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
