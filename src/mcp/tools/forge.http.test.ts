/**
 * The production forge client (issue 17 item 5) against a self-hosted-looking forge: the dev forge behind an HTTPS
 * reverse proxy that serves it under `/gitlab` with a certificate from a test CA. The tools reach it only when
 * `FORGE_CA_CERT_PATH` names that CA; web URLs under the prefix name the project.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type Server as HttpServer } from 'node:http';
import { connect as netConnect } from 'node:net';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevForge, type StartedDevForge } from '../../devforge/index.ts';
import { selfSignedCertificate } from '../../../test/support/tls.ts';
import { captureLogger, toolJson } from '../mcp.testkit.ts';
import { createForgeApi } from './forge.client.ts';
import { createForgeHttp, type ForgeHttp } from './forge.http.ts';
import { createForgeMcpServer } from './forge.tools.ts';

describe('a forge behind a path prefix and a custom CA', () => {
  let forge: StartedDevForge;
  let proxy: Server;
  let forgeUrl = '';
  let certPath = '';
  let pat = '';
  const opened: ForgeHttp[] = [];

  beforeAll(async () => {
    forge = await startDevForge({
      users: [{ id: 1, username: 'sam', name: 'Sam Self', email: 'sam@example.test', password: 'pw-selfhosted-1' }],
      applications: [],
    });
    pat = forge.createPersonalAccessToken('sam', ['api']);
    const tls = selfSignedCertificate('Forge Test CA');
    certPath = tls.certPath;
    const target = new URL(forge.url);
    // `/gitlab/...` → the dev forge's `/...`, as a reverse proxy in front of a relative-URL GitLab does.
    proxy = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      if (!req.url?.startsWith('/gitlab/')) {
        res.writeHead(404).end();
        return;
      }
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url.slice('/gitlab'.length), headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.writeHead(502).end());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const address = proxy.address();
    forgeUrl = `https://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/gitlab`;
  });
  afterAll(async () => {
    for (const http of opened) await http.close();
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
    await forge.close();
  });

  async function connect(http: ForgeHttp) {
    opened.push(http);
    const server = createForgeMcpServer({ forgeUrl, fetch: http.fetch, log: captureLogger().logger, getToken: async () => pat });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 't', version: '1' });
    await client.connect(clientSide);
    return client;
  }

  it('[FORGE-SELF-HOSTED] tools reach the forge under its prefix with FORGE_CA_CERT_PATH; web URLs under the prefix work', async () => {
    const client = await connect(createForgeHttp({ caCertPath: certPath, env: {} }));
    try {
      expect(toolJson(await client.callTool({ name: 'get_current_user', arguments: {} }))).toMatchObject({ username: 'sam' });
      const byUrl = await client.callTool({ name: 'get_project', arguments: { project_id: `${forgeUrl}/sam/hello-forge/-/issues/1` } });
      expect(toolJson(byUrl)).toMatchObject({ path_with_namespace: 'sam/hello-forge' });
      const issues = toolJson(await client.callTool({ name: 'list_issues', arguments: { project_id: 'sam/hello-forge' } })) as {
        items: unknown[];
      };
      expect(issues.items.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it('[FORGE-SELF-HOSTED] the REST client on the production transport: prefix, CA, pages, errors, HTML, 429 and timeout', async () => {
    const http = createForgeHttp({ caCertPath: certPath, env: {} });
    opened.push(http);
    const api = createForgeApi({ forgeUrl, fetch: http.fetch, send: http.send });
    expect(await api.get('/user', pat)).toMatchObject({ username: 'sam' });
    const page = await api.page<{ iid: number }>('/projects/sam%2Fhello-forge/issues', pat, { per_page: 1, page: 1 });
    expect(page.items).toHaveLength(1);
    expect(page.total).toBeGreaterThan(0);
    await expect(api.get('/projects/404404', pat)).rejects.toMatchObject({ type: 'not_found', status: 404 });
    await expect(api.get('/user', 'glpat-not-a-real-token')).rejects.toMatchObject({ type: 'forbidden', status: 401 });
    forge.faults.add({ kind: 'html' });
    await expect(api.get('/user', pat)).rejects.toMatchObject({ type: 'upstream' });
    forge.faults.add({ kind: 'rate_limit_throttle', retryAfterSeconds: 7 });
    await expect(api.get('/user', pat)).rejects.toMatchObject({ type: 'rate_limited', retryAfterSeconds: 7 });
    forge.faults.add({ kind: 'hang', delayMs: 1000 });
    const impatient = createForgeApi({ forgeUrl, fetch: http.fetch, send: http.send, timeoutMs: 100 });
    await expect(impatient.get('/user', pat)).rejects.toMatchObject({ type: 'timeout' });
    const untrusted = createForgeHttp({ env: {} });
    opened.push(untrusted);
    await expect(createForgeApi({ forgeUrl, fetch: untrusted.fetch, send: untrusted.send }).get('/user', pat)).rejects.toMatchObject({
      type: 'upstream',
      status: 0,
    });
  });

  it('[FORGE-SELF-HOSTED] without the CA the certificate is refused: an upstream tool error, not a crash', async () => {
    const client = await connect(createForgeHttp({ env: {} }));
    try {
      const refused = await client.callTool({ name: 'get_current_user', arguments: {} });
      expect(refused.isError).toBe(true);
      expect(toolJson(refused)).toMatchObject({ error: { type: 'upstream', status: 0 } });
    } finally {
      await client.close();
    }
  });

  it('[FORGE-SELF-HOSTED] HTTPS_PROXY: the forge is reached through a CONNECT tunnel; NO_PROXY bypasses it', async () => {
    // A real forward proxy: it answers CONNECT by opening a tunnel to the named host and port, and records them.
    const tunnels: string[] = [];
    // Tunnelled sockets leave the HTTP server's bookkeeping: they are closed here at the end.
    const sockets: { destroy(): void }[] = [];
    const forward: HttpServer = createHttpServer((_req, res) => res.writeHead(405).end());
    forward.on('connect', (req, socket, head) => {
      tunnels.push(req.url ?? '');
      const [host, port] = (req.url ?? '').split(':');
      sockets.push(socket);
      const upstream = netConnect(Number(port), host ?? '', () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      sockets.push(upstream);
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => forward.listen(0, '127.0.0.1', resolve));
    const address = forward.address();
    const proxyUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const forgeHost = new URL(forgeUrl).host;
    try {
      const proxied = await connect(createForgeHttp({ caCertPath: certPath, env: { HTTPS_PROXY: proxyUrl } }));
      try {
        expect(toolJson(await proxied.callTool({ name: 'get_current_user', arguments: {} }))).toMatchObject({ username: 'sam' });
      } finally {
        await proxied.close();
      }
      expect(tunnels).toContain(forgeHost);
      // The REST client's own transport (undici's request API on the same pool) takes the same tunnel.
      tunnels.length = 0;
      const viaSend = createForgeHttp({ caCertPath: certPath, env: { HTTPS_PROXY: proxyUrl } });
      opened.push(viaSend);
      const api = createForgeApi({ forgeUrl, fetch: viaSend.fetch, send: viaSend.send });
      expect(await api.get('/user', pat)).toMatchObject({ username: 'sam' });
      expect(tunnels).toContain(forgeHost);

      tunnels.length = 0;
      const direct = await connect(
        createForgeHttp({ caCertPath: certPath, env: { HTTPS_PROXY: proxyUrl, NO_PROXY: 'example.test,127.0.0.1' } }),
      );
      try {
        expect(toolJson(await direct.callTool({ name: 'get_current_user', arguments: {} }))).toMatchObject({ username: 'sam' });
      } finally {
        await direct.close();
      }
      expect(tunnels).toEqual([]);
    } finally {
      for (const socket of sockets) socket.destroy();
      forward.closeAllConnections();
      await new Promise((resolve) => forward.close(resolve));
    }
  });

  it('[FORGE-SELF-HOSTED] a proxy that cannot be reached is an upstream tool error', async () => {
    const client = await connect(createForgeHttp({ caCertPath: certPath, env: { HTTPS_PROXY: 'http://127.0.0.1:9' } }));
    try {
      expect(toolJson(await client.callTool({ name: 'get_current_user', arguments: {} }))).toMatchObject({ error: { type: 'upstream' } });
    } finally {
      await client.close();
    }
  });

  it('[FORGE-SELF-HOSTED] a CA file that is not PEM stops the start with one clear line', () => {
    const bad = join(mkdtempSync(join(tmpdir(), 'forge-ca-')), 'ca.pem');
    writeFileSync(bad, 'not a certificate');
    expect(() => createForgeHttp({ caCertPath: bad })).toThrow(/FORGE_CA_CERT_PATH: .* holds no PEM certificate/);
    expect(() => createForgeHttp({ caCertPath: '/nonexistent/ca.pem' })).toThrow(/FORGE_CA_CERT_PATH: cannot read/);
  });
});
