/**
 * Transport safety of `/mcp` (issue 17 item 2): Origin allowlist, Host check on loopback binds, body limit, and
 * the per-token and per-address rate limits — in one process and shared by two replicas through real Redis.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeClock, systemClock } from '../core/clock.ts';
import { createLogger } from '../core/logger.ts';
import { createMcpGuard, parseAllowedOrigins } from './mcp.guard.ts';
import { createMemoryMcpLimiter, createRedisMcpLimiter, MCP_RATE_WINDOW_MS, type McpRequestLimiter } from './mcp.limits.ts';
import { INITIALIZE, REDIS_URL, redisAvailable, startStack, startTokenStack, startTestForge, type Stack } from './mcp.testkit.ts';

/** POST /mcp with `initialize` and the given headers. */
async function post(url: string, headers: Record<string, string>, body: string = JSON.stringify(INITIALIZE)): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
}

/** A raw request with a Host header of our choosing (fetch does not let a caller set Host). */
async function withHost(url: string, host: string, bearer: string): Promise<number> {
  const target = new URL(`${url}/mcp`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: {
          host,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${bearer}`,
        },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(INITIALIZE));
  });
}

describe('Origin and Host', () => {
  let stack: Stack;
  let pat = '';
  beforeAll(async () => {
    ({ stack, pat } = await startTokenStack({ allowedOrigins: ['https://app.example'], bindHost: '127.0.0.1' }));
  });
  afterAll(async () => {
    await stack.close();
  });

  it('[MCP-ORIGIN] refuses a foreign or null Origin with 403 before the bearer is looked at; allowed and absent origins pass', async () => {
    const checks = stack.forge.forge.counters.user;
    for (const origin of ['https://evil.example', 'null', 'https://app.example.evil', 'http://app.example', 'not a url']) {
      const refused = await post(stack.url, { origin, authorization: `Bearer ${pat}` });
      expect(refused.status, origin).toBe(403);
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
      expect(((await refused.json()) as { error: { code: number } }).error.code).toBe(-32000);
    }
    // Preflights and GET are guarded the same way.
    const preflight = await fetch(`${stack.url}/mcp`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(403);
    expect((await fetch(`${stack.url}/mcp`, { headers: { origin: 'null' } })).status).toBe(403);
    expect(stack.forge.forge.counters.user).toBe(checks);

    const allowed = await post(stack.url, { origin: 'https://app.example', authorization: `Bearer ${pat}` });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const own = await post(stack.url, { origin: new URL(stack.serverUrl).origin, authorization: `Bearer ${pat}` });
    expect(own.status).toBe(200);
    expect((await post(stack.url, { authorization: `Bearer ${pat}` })).status).toBe(200);
    // An allowed origin without a token meets the bearer challenge, not the origin check.
    expect((await post(stack.url, { origin: 'https://app.example' })).status).toBe(401);
  });

  it('[MCP-HOST] bound to loopback, a Host other than the public host or a loopback name is 403 (DNS rebinding)', async () => {
    const port = new URL(stack.url).port;
    expect(await withHost(stack.url, 'rebind.attacker.example', pat)).toBe(403);
    expect(await withHost(stack.url, `rebind.attacker.example:${port}`, pat)).toBe(403);
    expect(await withHost(stack.url, `127.0.0.1:${port}`, pat)).toBe(200);
    expect(await withHost(stack.url, `localhost:${port}`, pat)).toBe(200);
    expect(await withHost(stack.url, `[::1]:${port}`, pat)).toBe(200);
  });

  it('[MCP-HOST] bound to all interfaces, the Host check is left to the reverse proxy', () => {
    const open = createMcpGuard({ serverUrl: 'https://mcp.example.com', allowedOrigins: [], bindHost: '0.0.0.0' });
    expect(open.host('anything.example')).toBe(true);
    const local = createMcpGuard({ serverUrl: 'https://mcp.example.com', allowedOrigins: [], bindHost: '127.0.0.1' });
    expect(local.host('mcp.example.com')).toBe(true);
    expect(local.host('MCP.example.com:8443')).toBe(true);
    expect(local.host('mcp.example.com.evil')).toBe(false);
    expect(local.host(undefined)).toBe(false);
  });

  it('[MCP-ORIGIN] MCP_ALLOWED_ORIGINS takes origins only', () => {
    expect(parseAllowedOrigins('https://a.example, http://localhost:6274')).toEqual(['https://a.example', 'http://localhost:6274']);
    expect(parseAllowedOrigins(undefined)).toEqual([]);
    for (const bad of ['https://a.example/path', 'a.example', 'ftp://a.example', 'null'])
      expect(() => parseAllowedOrigins(bad), bad).toThrow(/not an origin/);
  });

  it('[MCP-BODY-LIMIT] a body over the limit is 413 and a body that is not JSON is 400 (-32700), as JSON-RPC errors', async () => {
    const big = JSON.stringify({ ...INITIALIZE, params: { ...INITIALIZE.params, padding: 'x'.repeat(1024 * 1024) } });
    const tooLarge = await post(stack.url, { authorization: `Bearer ${pat}` }, big);
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    const garbled = await post(stack.url, { authorization: `Bearer ${pat}` }, '{"jsonrpc":');
    expect(garbled.status).toBe(400);
    expect(await garbled.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });
});

describe('rate limits', () => {
  it('[MCP-RATE] per token: past the limit 429 with Retry-After; another token is unaffected', async () => {
    const stack = await startStack({ mode: 'none', rateLimits: { perTokenPerMinute: 3, perAddressPerMinute: 0 } });
    try {
      const a = stack.forge.forge.createPersonalAccessToken(stack.forge.user.username, ['api']);
      const b = stack.forge.forge.createPersonalAccessToken(stack.forge.user.username, ['api']);
      for (let i = 0; i < 3; i += 1) expect((await post(stack.url, { authorization: `Bearer ${a}` })).status).toBe(200);
      const refused = await post(stack.url, { authorization: `Bearer ${a}` });
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect((await post(stack.url, { authorization: `Bearer ${b}` })).status).toBe(200);
      // The next window lets the token in again.
      stack.clock.advance(60_000);
      expect((await post(stack.url, { authorization: `Bearer ${a}` })).status).toBe(200);
    } finally {
      await stack.close();
    }
  });

  it('[MCP-RATE] per address: refused before the bearer costs a forge check', async () => {
    const stack = await startStack({ mode: 'none', rateLimits: { perTokenPerMinute: 0, perAddressPerMinute: 2 } });
    try {
      for (let i = 0; i < 2; i += 1) expect((await post(stack.url, { authorization: `Bearer made-up-${i}` })).status).toBe(401);
      const checks = stack.forge.forge.counters.user;
      const refused = await post(stack.url, { authorization: 'Bearer made-up-3' });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(stack.forge.forge.counters.user).toBe(checks);
    } finally {
      await stack.close();
    }
  });

  /** Both limits of a known caller at once: the token is counted only when the address is within its limit. */
  async function countsInOrder(limiter: McpRequestLimiter): Promise<void> {
    expect(await limiter.hitRequest('a', 't1')).toBeUndefined();
    expect(await limiter.hitRequest('a', 't1')).toBeUndefined();
    const byAddress = await limiter.hitRequest('a', 't1');
    expect(byAddress).toMatchObject({ kind: 'address' });
    expect(byAddress?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(byAddress?.retryAfterSeconds).toBeLessThanOrEqual(60);
    // t1 was counted twice, not three times: its third hit is still within the limit of 3.
    expect(await limiter.hitRequest('b', 't1')).toBeUndefined();
    expect(await limiter.hitRequest('c', 't1')).toMatchObject({ kind: 'token' });
    // The same counters as the one-limit call.
    expect((await limiter.hit('address', 'a')).allowed).toBe(false);
    expect((await limiter.hit('token', 't2')).allowed).toBe(true);
  }
  // Mid-window, so no window turns during the test.
  const settings = { perAddressPerMinute: 2, perTokenPerMinute: 3 };
  const midWindow = () => fakeClock(Math.floor(Date.now() / MCP_RATE_WINDOW_MS) * MCP_RATE_WINDOW_MS + 30_000);

  it('[MCP-RATE] both limits in one call count address, then token, as two calls would (in process)', async () => {
    await countsInOrder(createMemoryMcpLimiter({ clock: midWindow(), settings }));
  });

  it('[MCP-RATE-SHARED] both limits in one Redis exchange count address, then token, as two calls would', async () => {
    if (!(await redisAvailable())) return;
    const limiter = createRedisMcpLimiter({
      url: REDIS_URL,
      clock: midWindow(),
      log: createLogger({ level: 'silent' }),
      settings,
      keyPrefix: `test:mcp:rate:${randomBytes(6).toString('hex')}:`,
    });
    try {
      await countsInOrder(limiter);
    } finally {
      await limiter.close();
    }
  });

  it('[MCP-RATE-SHARED] two replicas on one Redis share the per-token window', async () => {
    if (!(await redisAvailable())) return;
    const forge = await startTestForge([]);
    const keyPrefix = `test:mcp:rate:${randomBytes(6).toString('hex')}:`;
    const log = createLogger({ level: 'silent' });
    const replicas: Stack[] = [];
    const limiters: ReturnType<typeof createRedisMcpLimiter>[] = [];
    try {
      for (let i = 0; i < 2; i += 1) {
        const limiter = createRedisMcpLimiter({
          url: REDIS_URL,
          clock: systemClock,
          log,
          settings: { perTokenPerMinute: 3, perAddressPerMinute: 0 },
          keyPrefix,
        });
        limiters.push(limiter);
        replicas.push(await startStack({ mode: 'none', forge, limiter }));
      }
      const [one, two] = replicas as [Stack, Stack];
      const pat = forge.forge.createPersonalAccessToken(forge.user.username, ['api']);
      // Stay inside one window: if the minute is about to turn, wait for the next one.
      const intoMinute = Date.now() % 60_000;
      if (intoMinute > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
      expect((await post(one.url, { authorization: `Bearer ${pat}` })).status).toBe(200);
      expect((await post(two.url, { authorization: `Bearer ${pat}` })).status).toBe(200);
      expect((await post(one.url, { authorization: `Bearer ${pat}` })).status).toBe(200);
      const refused = await post(two.url, { authorization: `Bearer ${pat}` });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await post(one.url, { authorization: `Bearer ${pat}` })).status).toBe(429);
    } finally {
      for (const replica of replicas) await replica.close();
      for (const limiter of limiters) await limiter.close();
      await forge.forge.close();
    }
  }, 90_000);
});
