import type { LookupAddress } from 'node:dns';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { UpstreamRequest } from '../wires/wire.types.ts';
import { createUpstreamClient, UpstreamFailure, type UpstreamClient, type UpstreamFailureKind } from './upstream-client.ts';

/** A real HTTP server on 127.0.0.1:0 that records what reached it. */
interface TestServer {
  port: number;
  origin: string;
  hits: IncomingMessage[];
  bodies: Buffer[];
  /** Sockets the server accepted. */
  connections: number;
}

const servers: Server[] = [];
const clients: UpstreamClient[] = [];

async function startServer(handler: (request: IncomingMessage, response: ServerResponse, body: Buffer) => void): Promise<TestServer> {
  const state = { hits: [] as IncomingMessage[], bodies: [] as Buffer[], connections: 0 };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      state.hits.push(request);
      state.bodies.push(body);
      handler(request, response, body);
    });
  });
  server.on('connection', () => (state.connections += 1));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, { port, origin: `http://127.0.0.1:${port}` });
}

function client(allowPrivate: boolean, lookup?: LookupFunction): UpstreamClient {
  const created = createUpstreamClient(lookup ? { allowPrivate, lookup } : { allowPrivate });
  clients.push(created);
  return created;
}

/** A resolver answering from a table, asynchronously like the system one; `calls` records every name asked. */
function tableLookup(table: Record<string, string[]>, calls: string[] = []): LookupFunction {
  return (hostname, options, callback) => {
    calls.push(hostname);
    setImmediate(() => {
      const addresses: LookupAddress[] = (table[hostname] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      const first = addresses[0];
      if (first === undefined) callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
      else if (options.all === true) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

function get(url: string, headers: Record<string, string> = {}): UpstreamRequest {
  return { method: 'GET', url, headers, body: null };
}

const LIMITS = { timeoutMs: 2000, maxBodyBytes: 1_000_000 };

async function failure(promise: Promise<unknown>): Promise<UpstreamFailure> {
  const error = await promise.then(
    () => new Error('expected the call to fail'),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UpstreamFailure);
  return error as UpstreamFailure;
}

async function expectFailure(promise: Promise<unknown>, kind: UpstreamFailureKind): Promise<UpstreamFailure> {
  const error = await failure(promise);
  expect(error.kind, error.message).toBe(kind);
  return error;
}

async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 2000) throw new Error('condition not reached within 2 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((each) => each.close()));
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const ok = (_request: IncomingMessage, response: ServerResponse): void => {
  response.writeHead(200, { 'content-type': 'text/plain' });
  response.end('hello');
};

describe('upstream client: where it may connect', () => {
  it('reaches a loopback server when private addresses are allowed', async () => {
    const server = await startServer(ok);
    const response = await client(true).send(get(`${server.origin}/v1/models?page=2`), LIMITS);
    expect(response.status).toBe(200);
    expect(response.body.toString()).toBe('hello');
    expect(response.headers['content-type']).toBe('text/plain');
    expect(server.hits[0]?.url).toBe('/v1/models?page=2');
  });

  it('refuses loopback when private addresses are not allowed, without connecting', async () => {
    const server = await startServer(ok);
    await expectFailure(client(false).send(get(`${server.origin}/`), LIMITS), 'address_refused');
    await expectFailure(client(false).send(get(`http://[::1]:${server.port}/`), LIMITS), 'address_refused');
    await expectFailure(client(false).send(get(`http://10.0.0.1:${server.port}/`), LIMITS), 'address_refused');
    expect(server.connections).toBe(0);
  });

  it('refuses 0.0.0.0, which Linux connects to the local host, even with private addresses allowed', async () => {
    const server = await startServer(ok);
    await expectFailure(client(true).send(get(`http://0.0.0.0:${server.port}/`), LIMITS), 'address_refused');
    // The URL parser reads "0" as 0.0.0.0: a short spelling is the same address.
    await expectFailure(client(true).send(get(`http://0:${server.port}/`), LIMITS), 'address_refused');
    expect(server.connections).toBe(0);
  });

  it('refuses the metadata address as a literal even with private addresses allowed', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/',
      'http://[fd00:ec2::254]/',
      'https://100.100.100.200/',
    ]) {
      const error = await expectFailure(client(true).send(get(url), LIMITS), 'address_refused');
      expect(error.message).not.toContain('meta-data');
    }
  });

  it('refuses a host name that resolves to the metadata address, in IPv4 and IPv4-mapped IPv6 form', async () => {
    const calls: string[] = [];
    const lookup = tableLookup({ 'rebind.example': ['169.254.169.254'], 'mapped.example': ['::ffff:169.254.169.254'] }, calls);
    for (const url of ['http://rebind.example/', 'https://rebind.example/', 'http://mapped.example:8080/']) {
      const error = await expectFailure(client(true, lookup).send(get(url), LIMITS), 'address_refused');
      expect(error.message).toMatch(/resolves to/);
    }
    expect(calls).toEqual(['rebind.example', 'rebind.example', 'mapped.example']);
  });

  it('refuses a host name when any one of its addresses is forbidden', async () => {
    const server = await startServer(ok);
    const lookup = tableLookup({ 'mixed.example': ['127.0.0.1', '169.254.169.254'] });
    await expectFailure(client(true, lookup).send(get(`http://mixed.example:${server.port}/`), LIMITS), 'address_refused');
    expect(server.connections).toBe(0);
  });

  it('connects to the address the checked lookup gave, so a private name works only when allowed', async () => {
    const server = await startServer(ok);
    const lookup = tableLookup({ 'models.internal': ['127.0.0.1'] });
    await expectFailure(client(false, lookup).send(get(`http://models.internal:${server.port}/`), LIMITS), 'address_refused');
    expect(server.connections).toBe(0);
    const response = await client(true, lookup).send(get(`http://models.internal:${server.port}/`), LIMITS);
    expect(response.status).toBe(200);
    expect(server.hits[0]?.headers.host).toBe(`models.internal:${server.port}`);
  });

  it('refuses metadata service names before resolving them', async () => {
    const calls: string[] = [];
    const lookup = tableLookup({ 'metadata.google.internal': ['8.8.8.8'], metadata: ['8.8.8.8'] }, calls);
    for (const url of ['http://metadata.google.internal/computeMetadata/v1/', 'http://METADATA.google.internal./', 'http://metadata/']) {
      await expectFailure(client(true, lookup).send(get(url), LIMITS), 'address_refused');
    }
    expect(calls).toEqual([]);
  });

  it('refuses URLs that are not absolute http(s) or that carry user credentials', async () => {
    const server = await startServer(ok);
    const secret = 'hunter2-password';
    for (const url of [
      'ftp://127.0.0.1/',
      'file:///etc/passwd',
      `http://user:${secret}@127.0.0.1:${server.port}/`,
      '/v1/models',
      'not a url',
    ]) {
      const error = await expectFailure(client(true).send(get(url), LIMITS), 'url_refused');
      expect(error.message).not.toContain(secret);
    }
    expect(server.connections).toBe(0);
  });
});

describe('upstream client: what it returns', () => {
  it('never follows a redirect: the 3xx comes back and the target is never reached', async () => {
    const target = await startServer(ok);
    const redirecting = await startServer((_request, response) => {
      response.writeHead(302, { location: `${target.origin}/stolen` });
      response.end('moved');
    });
    const response = await client(true).send(get(`${redirecting.origin}/v1/models`), LIMITS);
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe(`${target.origin}/stolen`);
    expect(response.body.toString()).toBe('moved');
    expect(target.connections).toBe(0);
  });

  it('returns 4xx and 5xx status, headers and body intact', async () => {
    const payload = JSON.stringify({ error: { code: 'model_not_found', message: 'no such model' } });
    const server = await startServer((request, response) => {
      const status = request.url === '/missing' ? 404 : 503;
      response.writeHead(status, { 'content-type': 'application/json', 'retry-after': '7' });
      response.end(payload);
    });
    const upstream = client(true);
    const missing = await upstream.send(get(`${server.origin}/missing`), LIMITS);
    expect(missing.status).toBe(404);
    expect(missing.body.toString()).toBe(payload);
    const unavailable = await upstream.send(get(`${server.origin}/busy`), LIMITS);
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers['retry-after']).toBe('7');
    expect(JSON.parse(unavailable.body.toString())).toEqual(JSON.parse(payload));
  });

  it('sends the caller headers and a JSON body, and asks for no content coding', async () => {
    const server = await startServer(ok);
    await client(true).send(
      {
        method: 'POST',
        url: `${server.origin}/v1/chat/completions`,
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', 'Accept-Encoding': 'gzip, br' },
        body: '{"model":"m"}',
      },
      LIMITS,
    );
    const hit = server.hits[0];
    expect(hit?.method).toBe('POST');
    expect(hit?.headers.authorization).toBe('Bearer sk-test');
    expect(hit?.headers['content-type']).toBe('application/json');
    expect(hit?.headers['accept-encoding']).toBe('identity');
    expect(server.bodies[0]?.toString()).toBe('{"model":"m"}');
  });

  it('encodes a multipart body as multipart/form-data that a real parser reads back', async () => {
    const audio = Uint8Array.from([0, 1, 2, 0xff, 0xfe, 13, 10, 45, 45]);
    let parsed: FormData | undefined;
    const server = await startServer((request, response, body) => {
      // The platform's own fetch Response is a complete multipart parser.
      void new Response(body, { headers: { 'content-type': request.headers['content-type'] ?? '' } }).formData().then((form) => {
        parsed = form;
        response.end('{}');
      });
    });
    await client(true).send(
      {
        method: 'POST',
        url: `${server.origin}/v1/audio/transcriptions`,
        // A stale content type from the caller must not replace the one carrying the boundary.
        headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
        body: {
          kind: 'multipart',
          parts: [
            { name: 'model', value: 'whisper-1' },
            { name: 'file', filename: 'probe.wav', contentType: 'audio/wav', data: audio },
          ],
        },
      },
      LIMITS,
    );
    expect(server.hits[0]?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(parsed?.get('model')).toBe('whisper-1');
    const file = parsed?.get('file');
    expect(file).toBeInstanceOf(Blob);
    expect((file as File).name).toBe('probe.wav');
    expect((file as File).type).toBe('audio/wav');
    expect(new Uint8Array(await (file as File).arrayBuffer())).toEqual(audio);
  });

  it('reuses pooled connections for requests to the same origin', async () => {
    const server = await startServer(ok);
    const upstream = client(true);
    for (let i = 0; i < 10; i += 1) expect((await upstream.send(get(`${server.origin}/`), LIMITS)).status).toBe(200);
    // undici's pool opens a second connection when the next request is dispatched before the first connection has
    // finished its own bookkeeping of the previous response; after that the two are reused.
    expect(server.connections).toBeLessThanOrEqual(2);
  });
});

describe('upstream client: deadlines and caps', () => {
  it('times out when the headers never come, and closes the socket', async () => {
    const server = await startServer(() => {
      // Never answers.
    });
    const started = Date.now();
    await expectFailure(client(true).send(get(`${server.origin}/`), { ...LIMITS, timeoutMs: 200 }), 'timed_out');
    expect(Date.now() - started).toBeLessThan(1500);
    await until(() => server.hits[0]?.socket.closed === true);
  });

  it('counts the body against the same deadline', async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('first chunk');
      // The rest never comes.
    });
    await expectFailure(client(true).send(get(`${server.origin}/`), { ...LIMITS, timeoutMs: 300 }), 'timed_out');
    await until(() => server.hits[0]?.socket.closed === true);
  });

  it("ends the request on the caller's signal: timed_out for a timeout reason, connection_failed otherwise", async () => {
    const server = await startServer(() => {
      // Never answers.
    });
    const upstream = client(true);
    await expectFailure(upstream.send(get(`${server.origin}/`), { ...LIMITS, signal: AbortSignal.timeout(100) }), 'timed_out');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await expectFailure(upstream.send(get(`${server.origin}/`), { ...LIMITS, signal: controller.signal }), 'connection_failed');
    await expectFailure(upstream.send(get(`${server.origin}/`), { ...LIMITS, signal: AbortSignal.abort() }), 'connection_failed');
  });

  it('refuses a body whose Content-Length is over the cap, and closes the socket', async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-length': '2000' });
      response.write('x'.repeat(100));
      // Holds the rest back: the client must decide from the header alone.
    });
    await expectFailure(client(true).send(get(`${server.origin}/`), { ...LIMITS, maxBodyBytes: 1000 }), 'body_too_large');
    await until(() => server.hits[0]?.socket.closed === true);
  });

  it('refuses a chunked body once more bytes than the cap arrive, and closes the socket', async () => {
    let written = 0;
    const server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      // An endless stream: only the cap can end the read.
      const timer = setInterval(() => {
        if (response.destroyed) clearInterval(timer);
        else {
          response.write('x'.repeat(512));
          written += 512;
        }
      }, 1);
    });
    await expectFailure(client(true).send(get(`${server.origin}/`), { ...LIMITS, maxBodyBytes: 4096 }), 'body_too_large');
    await until(() => server.hits[0]?.socket.closed === true);
    expect(written).toBeGreaterThan(4096);
  });

  it('accepts a body of exactly the cap, chunked or with a length', async () => {
    const body = 'y'.repeat(1000);
    const server = await startServer((request, response) => {
      if (request.url === '/length') response.writeHead(200, { 'content-length': String(body.length) });
      response.write(body.slice(0, 400));
      response.end(body.slice(400));
    });
    const upstream = client(true);
    expect((await upstream.send(get(`${server.origin}/length`), { ...LIMITS, maxBodyBytes: 1000 })).body.toString()).toBe(body);
    expect((await upstream.send(get(`${server.origin}/chunked`), { ...LIMITS, maxBodyBytes: 1000 })).body.toString()).toBe(body);
  });
});

describe('upstream client: failures', () => {
  it('reports a refused connection as connection_failed, without retrying', async () => {
    const server = await startServer(ok);
    const { port } = server;
    const closed = servers.pop();
    await new Promise((resolve) => closed?.close(resolve));
    const error = await expectFailure(client(true).send(get(`http://127.0.0.1:${port}/`), LIMITS), 'connection_failed');
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('reports a name that does not resolve as connection_failed', async () => {
    const error = await expectFailure(client(true, tableLookup({})).send(get('http://nowhere.example/'), LIMITS), 'connection_failed');
    expect(error.message).toContain('ENOTFOUND');
  });

  it('reports a failed TLS handshake as connection_failed', async () => {
    const server = await startServer(ok);
    // A plain HTTP server answers the TLS hello with an HTTP 400: the handshake fails.
    await expectFailure(client(true).send(get(`https://127.0.0.1:${server.port}/`), LIMITS), 'connection_failed');
  });

  it('reports a connection reset before the answer as connection_failed', async () => {
    const server = await startServer((request) => request.socket.destroy());
    await expectFailure(client(true).send(get(`${server.origin}/`), LIMITS), 'connection_failed');
    expect(server.hits).toHaveLength(1);
  });

  it('never puts a header value, the URL query or the response body in a failure message', async () => {
    const secret = 'sk-live-0123456789abcdef';
    const server = await startServer((request, response) => {
      if (request.url?.startsWith('/big') === true) {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end(`${secret} `.repeat(100));
      }
      // Any other path never answers.
    });
    const upstream = client(true, tableLookup({ 'meta.example': ['169.254.169.254'] }));
    const request = (url: string): UpstreamRequest =>
      get(`${url}?key=${secret}`, { authorization: `Bearer ${secret}`, 'x-api-key': secret });
    const closed = await startServer(ok);
    const closedPort = closed.port;
    const closedServer = servers.pop();
    await new Promise((resolve) => closedServer?.close(resolve));

    const failures = await Promise.all([
      expectFailure(upstream.send(request(`${server.origin}/big`), { ...LIMITS, maxBodyBytes: 100 }), 'body_too_large'),
      expectFailure(upstream.send(request(`${server.origin}/slow`), { ...LIMITS, timeoutMs: 200 }), 'timed_out'),
      expectFailure(upstream.send(request('http://meta.example/'), LIMITS), 'address_refused'),
      expectFailure(upstream.send(request(`http://127.0.0.1:${closedPort}/`), LIMITS), 'connection_failed'),
      // A header value undici refuses to send (a line break) names the header, not the value.
      expectFailure(upstream.send(get(`${server.origin}/big`, { authorization: `Bearer ${secret}\r\nx: y` }), LIMITS), 'connection_failed'),
    ]);
    for (const error of failures) {
      expect(error.message).not.toContain(secret);
      expect(String(error)).not.toContain(secret);
      const cause: unknown = error.cause;
      if (cause instanceof Error) expect(cause.message).not.toContain(secret);
    }
  });
});
