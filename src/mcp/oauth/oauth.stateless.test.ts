/**
 * Stateless mode (spec "Stateless mode"): several replicas sharing only the secret, behind a round-robin proxy so
 * every step of a flow lands on another replica; sealed values refused when tampered or foreign; replays refused
 * per replica, and across replicas with the Redis replay cache. (The three-process version with the SDK client
 * and Chromium is in test/mcp.)
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeClock } from '../../core/clock.ts';
import { freePort } from '../../core/http/free-port.ts';
import { silentLogger } from '../../core/logger.ts';
import { createForgeBrowser } from '../../devforge/index.ts';
import {
  approveConsent,
  authorizeUrl,
  callTool,
  CLIENT_CALLBACK,
  completeFlow,
  consentFields,
  pkce,
  REDIS_URL,
  redisAvailable,
  register,
  registerClient,
  startRoundRobinProxy,
  startStack,
  startTestForge,
  token,
  toolJson,
  walkSignIn,
  type RoundRobinProxy,
  type Stack,
  type TestForge,
} from '../mcp.testkit.ts';
import { createRedisReplayCache } from './oauth.replay.ts';

const hasRedis = await redisAvailable();

/** Three stateless replicas sharing a secret behind one round-robin proxy (the public URL). */
async function startReplicas(
  options: { secret?: Buffer; replay?: 'memory' | 'redis' } = {},
): Promise<{ proxy: RoundRobinProxy; replicas: Stack[]; forge: TestForge; close(): Promise<void> }> {
  const proxy = await startRoundRobinProxy();
  const forge = await startTestForge([`${proxy.url}/callback`]);
  const clock = fakeClock(Date.now());
  const prefix = `test:mcp:${randomUUID()}:`;
  const replicas: Stack[] = [];
  for (let i = 0; i < 3; i += 1) {
    replicas.push(
      await startStack({
        mode: 'callback_proxy',
        forge,
        serverUrl: proxy.url,
        port: await freePort(),
        clock,
        stateless: { ...(options.secret ? { secret: options.secret } : {}) },
        ...(options.replay === 'redis'
          ? { replay: createRedisReplayCache({ url: REDIS_URL, clock, log: silentLogger(), keyPrefix: prefix }) }
          : {}),
      }),
    );
  }
  proxy.setTargets(replicas.map((r) => r.url));
  return {
    proxy,
    replicas,
    forge,
    async close() {
      for (const r of replicas) await r.close();
      await proxy.close();
      await forge.forge.close();
    },
  };
}

describe('stateless callback proxy across replicas', () => {
  let env: Awaited<ReturnType<typeof startReplicas>>;
  beforeAll(async () => {
    env = await startReplicas();
  });
  afterAll(async () => {
    await env.close();
  });

  it('[STATELESS-REPLICAS] [REG-VIRTUAL-ID] completes a flow with every step on another replica', async () => {
    const start = env.proxy.served.length;
    const stack = { serverUrl: env.proxy.url, url: env.proxy.url, forge: env.forge };
    const { tokens, clientId } = await completeFlow(stack);
    expect(clientId).toMatch(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const me = toolJson(await callTool(env.proxy.url, String(tokens.access_token), 'get_current_user'));
    expect(me).toMatchObject({ username: env.forge.user.username });
    const steps = env.proxy.served.slice(start).filter((s) => ['/register', '/authorize', '/callback', '/token'].includes(s.path));
    expect(steps.map((s) => `${s.method} ${s.path}`)).toEqual([
      'POST /register',
      'GET /authorize',
      'POST /authorize',
      'GET /callback',
      'POST /token',
    ]);
    for (let i = 1; i < steps.length; i += 1) expect(steps[i]?.target).not.toBe(steps[i - 1]?.target);
    expect(new Set(steps.map((s) => s.target)).size).toBe(3);
  });

  it('[CONSENT-MEMORY] remembers consent on every replica (sealed cookie)', async () => {
    const stack = { serverUrl: env.proxy.url, url: env.proxy.url, forge: env.forge };
    const browser = createForgeBrowser();
    const clientId = await registerClient(env.proxy.url);
    expect((await completeFlow(stack, { browser, clientId })).walk.consentHtml).toBeDefined();
    for (let i = 0; i < 3; i += 1) expect((await completeFlow(stack, { browser, clientId })).walk.consentHtml).toBeUndefined();
  });

  it('[STATE-REPLAY] [REPLAY-LOCAL] a sealed state or code replayed on the same replica is refused', async () => {
    const [a] = env.replicas as [Stack];
    const clientId = await registerClient(a.url);
    const { verifier, challenge } = pkce();
    const browser = createForgeBrowser();
    const forgeAuthorize = await approveConsent(browser, a.url, {
      client_id: clientId,
      redirect_uri: CLIENT_CALLBACK,
      code_challenge: challenge,
    });
    const callback = new URL(await browser.authorize(forgeAuthorize.href, env.forge.user));
    const first = await fetch(`${a.url}/callback${callback.search}`, { redirect: 'manual' });
    expect(first.status).toBe(302);
    const replayed = await fetch(`${a.url}/callback${callback.search}`, { redirect: 'manual' });
    expect(replayed.status).toBe(400);
    const code = new URL(first.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const form = { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: CLIENT_CALLBACK };
    expect((await token(a.url, form)).status).toBe(200);
    const again = await token(a.url, form);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
  });

  it('[STATELESS-SEALED] refuses tampered sealed values and values sealed with another secret', async () => {
    const [a] = env.replicas as [Stack];
    const clientId = await registerClient(a.url);
    const flip = (sealed: string) => {
      const parts = sealed.split('.');
      const body = Buffer.from(parts[3] ?? '', 'base64url');
      body[2] = (body[2] ?? 0) ^ 0x20;
      parts[3] = body.toString('base64url');
      return parts.join('.');
    };
    // A tampered client id.
    const tamperedClient = await fetch(
      authorizeUrl(a.url, { client_id: flip(clientId), redirect_uri: CLIENT_CALLBACK, code_challenge: pkce().challenge }),
      { redirect: 'manual' },
    );
    expect(tamperedClient.status).toBe(400);
    // A tampered proxy state at the callback.
    const browser = createForgeBrowser();
    const proxyState =
      (
        await approveConsent(browser, a.url, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: pkce().challenge })
      ).searchParams.get('state') ?? '';
    expect((await fetch(`${a.url}/callback?code=x&state=${encodeURIComponent(flip(proxyState))}`, { redirect: 'manual' })).status).toBe(
      400,
    );
    // A tampered or foreign-secret proxy code at /token.
    const { verifier, challenge } = pkce();
    const walk = await walkSignIn(
      authorizeUrl(a.url, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: challenge }),
      env.forge.user,
      { browser, serverOrigin: env.proxy.url },
    );
    const code = walk.clientRedirect.searchParams.get('code') ?? '';
    const tampered = await token(a.url, {
      grant_type: 'authorization_code',
      code: flip(code),
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: CLIENT_CALLBACK,
    });
    expect(tampered.body.error).toBe('invalid_grant');
    const foreign = await startStack({ mode: 'callback_proxy', forge: env.forge, stateless: { secret: randomBytes(32) } });
    try {
      const foreignClient = await registerClient(foreign.url);
      expect(
        (
          await fetch(authorizeUrl(a.url, { client_id: foreignClient, redirect_uri: CLIENT_CALLBACK, code_challenge: challenge }), {
            redirect: 'manual',
          })
        ).status,
      ).toBe(400);
      const answer = await token(foreign.url, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: CLIENT_CALLBACK,
      });
      expect(answer.body.error).toBe('invalid_grant');
      expect(foreign.logs.text()).toMatch(/unknown_key/);
    } finally {
      await foreign.close();
    }
    // The untouched code still works on the replica set.
    expect(
      (
        await token(a.url, {
          grant_type: 'authorization_code',
          code,
          code_verifier: verifier,
          client_id: clientId,
          redirect_uri: CLIENT_CALLBACK,
        })
      ).status,
    ).toBe(200);
  });

  it('[AUTHZ-ALLOWLIST] a callback registered before the allowlist was narrowed is refused at /authorize', async () => {
    const wide = await startStack({ mode: 'callback_proxy', forge: env.forge, stateless: {}, allowlist: '*' });
    try {
      const clientId = await registerClient(wide.url, ['https://attacker.example/cb']);
      const [a] = env.replicas as [Stack];
      const refused = await fetch(
        authorizeUrl(a.url, { client_id: clientId, redirect_uri: 'https://attacker.example/cb', code_challenge: pkce().challenge }),
        { redirect: 'manual' },
      );
      expect(refused.status).toBe(400);
      expect(refused.headers.get('location')).toBeNull();
      expect(await refused.text()).toContain('invalid_redirect_uri');
      expect(a.logs.text()).toContain('https://attacker.example/cb');
    } finally {
      await wide.close();
    }
  });

  it('[REG-SEALED-SIZE] regression: /register sealed up to 20 kB of redirect URIs into client ids that /authorize could not take', async () => {
    const [a, b] = env.replicas as [Stack, Stack];
    const long = (i: number) => `http://127.0.0.1:${40000 + i}/${'a'.repeat(1900)}`;
    const tooBig = await register(a.url, { redirect_uris: Array.from({ length: 10 }, (_, i) => long(i)) });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error).toBe('invalid_client_metadata');
    expect(tooBig.headers.get('cache-control')).toBe('no-store');
    // Just over the bound (2048 bytes in total) is refused too; at the bound the id works everywhere.
    const callback = `${CLIENT_CALLBACK}/${'x'.repeat(2000 - CLIENT_CALLBACK.length - 1)}`;
    const filler = (n: number) => `http://localhost/${'y'.repeat(n - 'http://localhost/'.length)}`;
    const over = await register(a.url, { redirect_uris: [callback, filler(2048 - callback.length + 1)] });
    expect(over.body.error).toBe('invalid_client_metadata');
    const atBound = await register(a.url, { redirect_uris: [callback, filler(2048 - callback.length)], client_name: 'n'.repeat(200) });
    expect(atBound.status).toBe(201);
    const clientId = String(atBound.body.client_id);
    expect(clientId.length).toBeLessThan(4000);
    // The /authorize URL with this id, the long callback and a long state is served (no 431, no "malformed").
    const page = await fetch(
      authorizeUrl(b.url, { client_id: clientId, redirect_uri: callback, code_challenge: pkce().challenge, state: 's'.repeat(1024) }),
    );
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Allow access');
  });
});

describe('secret rotation', () => {
  it('[CONFIG-ROTATION] a flow started before a rotation finishes after it', async () => {
    const port = await freePort();
    const serverUrl = `http://127.0.0.1:${port}`;
    const forge = await startTestForge([`${serverUrl}/callback`]);
    const oldSecret = randomBytes(32);
    const newSecret = randomBytes(32);
    const before = await startStack({ mode: 'callback_proxy', forge, port, serverUrl, stateless: { secret: oldSecret } });
    const clientId = await registerClient(serverUrl);
    const { verifier, challenge } = pkce();
    const browser = createForgeBrowser();
    const forgeAuthorize = await approveConsent(browser, serverUrl, {
      client_id: clientId,
      redirect_uri: CLIENT_CALLBACK,
      code_challenge: challenge,
    });
    const callback = await browser.authorize(forgeAuthorize.href, forge.user);
    await before.close();
    // Let the client side notice the closed keep-alive connections before the new server takes the port.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = await startStack({
      mode: 'callback_proxy',
      forge,
      port,
      serverUrl,
      stateless: { secret: newSecret, previous: oldSecret },
    });
    try {
      const back = await fetch(callback, { redirect: 'manual' });
      expect(back.status).toBe(302);
      const code = new URL(back.headers.get('location') ?? '').searchParams.get('code') ?? '';
      expect(
        (
          await token(serverUrl, {
            grant_type: 'authorization_code',
            code,
            code_verifier: verifier,
            client_id: clientId,
            redirect_uri: CLIENT_CALLBACK,
          })
        ).status,
      ).toBe(200);
    } finally {
      await after.close();
      await forge.forge.close();
    }
  });
});

describe('consent across a secret rotation', () => {
  /** A consent page from `from`, posted with its CSRF cookie to `to` (replicas at different rotation phases). */
  async function consentAcross(from: Stack, to: Stack, clientId: string): Promise<Response> {
    const page = await fetch(
      authorizeUrl(from.url, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: pkce().challenge }),
    );
    expect(page.status).toBe(200);
    const cookie = page.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    return fetch(`${to.url}/authorize`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...consentFields(await page.text()), decision: 'approve' }),
      redirect: 'manual',
    });
  }

  it('[ROTATION-CONSENT] regression: a rotation broke consent pages in progress (CSRF key of one secret only); the two-phase rotation keeps them working', async () => {
    const forge = await startTestForge([]);
    const oldSecret = randomBytes(32);
    const newSecret = randomBytes(32);
    const stacks: Stack[] = [];
    const start = async (secret: Buffer, previous?: Buffer) => {
      const stack = await startStack({ mode: 'callback_proxy', forge, stateless: { secret, ...(previous ? { previous } : {}) } });
      stacks.push(stack);
      return stack;
    };
    try {
      const before = await start(oldSecret); // not rotated yet
      const phase1 = await start(oldSecret, newSecret); // both secrets known, the old one still seals
      const phase2 = await start(newSecret, oldSecret); // both secrets known, the new one seals
      const clientId = await registerClient(before.url);
      const toForge = (response: Response) => {
        expect(response.status).toBe(302);
        expect(response.headers.get('location')).toContain('/oauth/authorize');
      };
      // A page rendered before the switch is accepted after it (the CSRF token of the previous secret counts).
      toForge(await consentAcross(before, phase2, clientId));
      toForge(await consentAcross(phase1, phase2, clientId));
      // During phase 2 some replicas may still be in phase 1: pages sealed with the new secret work there too.
      toForge(await consentAcross(phase2, phase1, clientId));
      const newClient = await registerClient(phase2.url);
      toForge(await consentAcross(phase1, phase2, newClient));
      toForge(await consentAcross(phase2, phase1, newClient));
      // Skipping phase 1 is what breaks: a replica that knows only the old secret refuses the new one's pages.
      expect((await consentAcross(phase2, before, clientId)).status).toBe(403);
    } finally {
      for (const stack of stacks) await stack.close();
      await forge.forge.close();
    }
  });
});

describe.skipIf(!hasRedis)('stateless replay across replicas with Redis', () => {
  it('[REPLAY-REDIS] a proxy code or state used on one replica is refused on every other', async () => {
    const env = await startReplicas({ replay: 'redis' });
    try {
      const [a, b, c] = env.replicas as [Stack, Stack, Stack];
      const clientId = await registerClient(a.url);
      const { verifier, challenge } = pkce();
      const browser = createForgeBrowser();
      const forgeAuthorize = await approveConsent(browser, a.url, {
        client_id: clientId,
        redirect_uri: CLIENT_CALLBACK,
        code_challenge: challenge,
      });
      const callback = new URL(await browser.authorize(forgeAuthorize.href, env.forge.user));
      const first = await fetch(`${b.url}/callback${callback.search}`, { redirect: 'manual' });
      expect(first.status).toBe(302);
      expect((await fetch(`${c.url}/callback${callback.search}`, { redirect: 'manual' })).status).toBe(400);
      const code = new URL(first.headers.get('location') ?? '').searchParams.get('code') ?? '';
      const form = { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: CLIENT_CALLBACK };
      expect((await token(c.url, form)).status).toBe(200);
      expect((await token(a.url, form)).body.error).toBe('invalid_grant');
      expect((await token(b.url, form)).body.error).toBe('invalid_grant');
    } finally {
      for (const r of env.replicas) await r.mcp.close();
      await env.close();
    }
  });
});
