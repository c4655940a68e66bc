/**
 * Regression tests for the problems a review found in callback proxy mode, each named after its bug: sign-ins in
 * progress evicted by a flood of new ones, replayable consent forms, forge tokens left alive behind burnt or expired
 * proxy codes, dead ends at /callback, and unverified client names on the consent page.
 */
import { fakeClock } from '../../core/clock.ts';
import { silentLogger } from '../../core/logger.ts';
import { createForgeBrowser } from '../../devforge/index.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  approveConsent,
  authorizeUrl,
  CLIENT_CALLBACK,
  completeFlow,
  consentFields,
  pkce,
  registerClient,
  startStack,
  token,
  walkSignIn,
  type Stack,
} from '../mcp.testkit.ts';
import { createMemoryReplayCache, createRedisReplayCache, type ReplayCache } from './oauth.replay.ts';
import { createMemoryFlowStore, PROXY_CODE_TTL_MS, type ProxyCodeRecord } from './oauth.stores.ts';

/** The LRU of pending sign-ins of a stateful stack. */
function pendingSize(stack: Stack): number {
  return (stack.mcp.flows as ReturnType<typeof createMemoryFlowStore>).pending.size;
}

/** The consent page's fields and the browser holding its CSRF cookie, for a new sign-in of `clientId`. */
async function openConsent(stack: Stack, clientId: string, headers: Record<string, string> = {}) {
  const browser = createForgeBrowser();
  const page = await browser.request(
    authorizeUrl(stack.serverUrl, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: pkce().challenge, state: 'st' }),
    { headers },
  );
  expect(page.status).toBe(200);
  return { browser, fields: consentFields(await page.text()) };
}

describe('sign-ins in progress cannot be evicted by a flood of new ones', () => {
  it('[SIGNIN-RATE] regression: anyone could evict every sign-in in progress; a client address now starts at most 30 per 10 minutes (429 page)', async () => {
    const stack = await startStack({ mode: 'callback_proxy', signinLimitPer10Min: 30, trustProxy: true });
    try {
      // A victim starts a sign-in and is at the forge's sign-in page (its pending transaction is in the LRU).
      const victimClient = await registerClient(stack.serverUrl);
      const { verifier, challenge } = pkce();
      const victim = createForgeBrowser();
      // approveConsent fails unless the consent answers 302.
      const forgeAuthorize = (
        await approveConsent(victim, stack.serverUrl, {
          client_id: victimClient,
          redirect_uri: CLIENT_CALLBACK,
          code_challenge: challenge,
          state: 'victim',
        })
      ).href;

      // The attacker approves its own client once, so its consent is remembered, then replays GET /authorize
      // more often than the LRU holds entries (1000), from one address behind the trusted proxy.
      const as = { 'x-forwarded-for': '203.0.113.66' };
      const attackerClient = await registerClient(stack.serverUrl);
      const { browser: attacker, fields } = await openConsent(stack, attackerClient, as);
      expect(
        (await attacker.request(`${stack.serverUrl}/authorize`, { form: { ...fields, decision: 'approve' }, headers: as })).status,
      ).toBe(302);
      const flood = authorizeUrl(stack.serverUrl, {
        client_id: attackerClient,
        redirect_uri: CLIENT_CALLBACK,
        code_challenge: pkce().challenge,
      });
      const statuses: number[] = [];
      for (let i = 0; i < 1001; i += 1) {
        const response = await attacker.request(flood, { headers: as });
        statuses.push(response.status);
        if (response.status === 429 && i === 1000) {
          expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
          expect(response.headers.get('location')).toBeNull();
          expect(response.headers.get('content-type')).toContain('text/html');
          expect(await response.text()).toContain('Too many sign-ins');
        } else {
          await response.body?.cancel();
        }
      }
      expect(statuses.filter((s) => s === 302)).toHaveLength(29);
      expect(statuses.filter((s) => s === 429)).toHaveLength(972);
      expect(pendingSize(stack)).toBe(31);

      // The victim's sign-in was not evicted: it completes.
      const callback = new URL(await victim.authorize(forgeAuthorize, stack.forge.user));
      const back = await victim.request(callback.href);
      expect(back.status).toBe(302);
      const landed = new URL(back.headers.get('location') ?? '');
      expect(landed.searchParams.get('state')).toBe('victim');
      const answer = await token(stack.serverUrl, {
        grant_type: 'authorization_code',
        code: landed.searchParams.get('code') ?? '',
        code_verifier: verifier,
        client_id: victimClient,
        redirect_uri: CLIENT_CALLBACK,
      });
      expect(answer.status).toBe(200);

      // The limit is per address and per 10 minutes.
      expect((await completeFlow(stack)).tokens.access_token).toBeDefined();
      stack.clock.advance(10 * 60_000);
      expect((await attacker.request(flood, { headers: as })).status).toBe(302);
      expect(stack.logs.text()).toContain('limit of sign-ins started per client address reached');
    } finally {
      await stack.close();
    }
  });

  it('[CONSENT-ONCE] regression: one sealed consent form could be posted again and again, each time creating a pending sign-in', async () => {
    const stack = await startStack({ mode: 'callback_proxy' });
    try {
      const clientId = await registerClient(stack.serverUrl);
      const { browser, fields } = await openConsent(stack, clientId);
      const before = pendingSize(stack);
      const first = await browser.request(`${stack.serverUrl}/authorize`, { form: { ...fields, decision: 'approve' } });
      expect(first.status).toBe(302);
      for (let i = 0; i < 3; i += 1) {
        const replay = await browser.request(`${stack.serverUrl}/authorize`, { form: { ...fields, decision: 'approve' } });
        expect(replay.status).toBe(400);
        expect(replay.headers.get('location')).toBeNull();
        expect(await replay.text()).toContain('already used');
      }
      expect(pendingSize(stack)).toBe(before + 1);
      // A denied form cannot be turned into an approval afterwards either.
      const second = await openConsent(stack, clientId);
      expect((await second.browser.request(`${stack.serverUrl}/authorize`, { form: { ...second.fields, decision: 'deny' } })).status).toBe(
        302,
      );
      expect(
        (await second.browser.request(`${stack.serverUrl}/authorize`, { form: { ...second.fields, decision: 'approve' } })).status,
      ).toBe(400);
      expect(pendingSize(stack)).toBe(before + 1);
    } finally {
      await stack.close();
    }
  });

  it('[CONSENT-ONCE] a sealed consent form is single-use in stateless mode too', async () => {
    const stack = await startStack({ mode: 'callback_proxy', stateless: {} });
    try {
      const clientId = await registerClient(stack.serverUrl);
      const { browser, fields } = await openConsent(stack, clientId);
      expect((await browser.request(`${stack.serverUrl}/authorize`, { form: { ...fields, decision: 'approve' } })).status).toBe(302);
      expect((await browser.request(`${stack.serverUrl}/authorize`, { form: { ...fields, decision: 'approve' } })).status).toBe(400);
    } finally {
      await stack.close();
    }
  });
});

describe('forge tokens behind proxy codes that are never redeemed', () => {
  let stack: Stack;
  /** The forge's token responses as the server received them (in callback proxy mode the client never sees them). */
  const issued: { access_token: string; refresh_token: string }[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (url.endsWith('/oauth/token') && response.ok)
      issued.push((await response.clone().json()) as { access_token: string; refresh_token: string });
    return response;
  };
  beforeAll(async () => {
    stack = await startStack({ mode: 'callback_proxy', fetch: recordingFetch });
  });
  afterAll(async () => {
    await stack.close();
  });

  const forgeAccepts = async (accessToken: string): Promise<boolean> =>
    (await fetch(`${stack.forge.forge.url}/oauth/token/info`, { headers: { authorization: `Bearer ${accessToken}` } })).status === 200;

  /** Signs in up to the client's callback; returns the proxy code and the forge tokens stored under it. */
  const signIn = async () => {
    const clientId = await registerClient(stack.serverUrl);
    const { verifier, challenge } = pkce();
    const walk = await walkSignIn(
      authorizeUrl(stack.serverUrl, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: challenge }),
      stack.forge.user,
    );
    const forgeTokens = issued.at(-1);
    if (!forgeTokens) throw new Error('no forge tokens recorded');
    expect(await forgeAccepts(forgeTokens.access_token)).toBe(true);
    const form = {
      grant_type: 'authorization_code',
      code: walk.clientRedirect.searchParams.get('code') ?? '',
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: CLIENT_CALLBACK,
    };
    return { form, forgeTokens };
  };

  it('[TOKEN-FAIL-REVOKE] regression: a failed /token burnt the proxy code but left the forge tokens alive; now they are revoked', async () => {
    const otherClient = await registerClient(stack.serverUrl);
    for (const change of [
      { code_verifier: pkce().verifier },
      { code_verifier: undefined },
      { client_id: otherClient },
      { redirect_uri: 'http://127.0.0.1:45679/callback' },
    ]) {
      const { form, forgeTokens } = await signIn();
      const failed = await token(stack.serverUrl, { ...form, ...change });
      expect(failed.status, JSON.stringify(change)).toBe(400);
      // Best effort, in the background: the access token stops working at the forge, and the refresh token with it.
      await vi.waitFor(async () => expect(await forgeAccepts(forgeTokens.access_token)).toBe(false), { timeout: 3000 });
      const refresh = await fetch(`${stack.forge.forge.url}/oauth/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: forgeTokens.refresh_token,
          client_id: stack.forge.app.uid,
        }),
      });
      expect(refresh.status).toBe(400);
      // The burnt code stays burnt.
      expect((await token(stack.serverUrl, form)).body.error).toBe('invalid_grant');
    }
    expect(stack.logs.text()).toContain('revoking forge tokens of a proxy code that will not be redeemed');
    // A successful redemption revokes nothing.
    const { form, forgeTokens } = await signIn();
    expect((await token(stack.serverUrl, form)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await forgeAccepts(forgeTokens.access_token)).toBe(true);
  });

  it('[TOKEN-FAIL-REVOKE] regression: a proxy code that expired unredeemed left the forge tokens alive; now they are revoked', async () => {
    const unused = await signIn();
    const late = await signIn();
    stack.clock.advance(PROXY_CODE_TTL_MS + 1);
    // The store's periodic sweep finds the expired code that nobody presents...
    (stack.mcp.flows as ReturnType<typeof createMemoryFlowStore>).sweep();
    await vi.waitFor(async () => expect(await forgeAccepts(unused.forgeTokens.access_token)).toBe(false), { timeout: 3000 });
    // ...and one presented too late is revoked as well (whichever comes first).
    expect((await token(stack.serverUrl, late.form)).body.error).toBe('invalid_grant');
    await vi.waitFor(async () => expect(await forgeAccepts(late.forgeTokens.access_token)).toBe(false), { timeout: 3000 });
    expect(stack.logs.text()).toContain('revoking forge tokens of a proxy code that expired or was evicted unredeemed');
  });

  it('[TOKEN-FAIL-REVOKE] the store reports codes evicted or expired unredeemed, not codes redeemed', async () => {
    const clock = fakeClock(Date.now());
    const discarded: string[] = [];
    const store = createMemoryFlowStore({ clock, max: 2, onCodeDiscarded: (record) => discarded.push(record.tokens.access_token) });
    const record = (name: string): ProxyCodeRecord => ({
      clientId: 'c',
      redirectUri: CLIENT_CALLBACK,
      codeChallenge: 'x'.repeat(43),
      tokens: { access_token: name, token_type: 'Bearer' },
      expiresAt: clock.now() + PROXY_CODE_TTL_MS,
    });
    const a = await store.saveCode(record('a'));
    await store.saveCode(record('b'));
    expect((await store.takeCode(a)).ok).toBe(true);
    await store.saveCode(record('c'));
    await store.saveCode(record('d'));
    expect(discarded).toEqual(['b']);
    clock.advance(PROXY_CODE_TTL_MS + 1);
    store.sweep();
    expect(discarded.sort()).toEqual(['b', 'c', 'd']);
  });
});

describe('/callback never ends in a JSON error', () => {
  it('[CALLBACK-NO-DEAD-END] regression: with the replay cache (Redis) unreachable /callback answered JSON 500; now the client gets server_error', async () => {
    const clock = fakeClock(Date.now());
    const memory = createMemoryReplayCache({ clock });
    // The real Redis client against a port where nothing listens: its commands fail as with Redis down.
    const unreachable = createRedisReplayCache({ url: 'redis://127.0.0.1:1', clock, log: silentLogger() });
    let down = false;
    const replay: ReplayCache = {
      consume: (id, expiresAt) => (down ? unreachable : memory).consume(id, expiresAt),
      async close() {
        await memory.close();
        await unreachable.close();
      },
    };
    const stack = await startStack({ mode: 'callback_proxy', stateless: {}, replay, clock });
    try {
      const clientId = await registerClient(stack.serverUrl);
      const browser = createForgeBrowser();
      const page = await browser.request(
        authorizeUrl(stack.serverUrl, {
          client_id: clientId,
          redirect_uri: CLIENT_CALLBACK,
          code_challenge: pkce().challenge,
          state: 'st-down',
        }),
      );
      const fields = consentFields(await page.text());
      const approved = await browser.request(`${stack.serverUrl}/authorize`, { form: { ...fields, decision: 'approve' } });
      const callback = await browser.authorize(approved.headers.get('location') ?? '', stack.forge.user);
      down = true;
      const back = await fetch(callback, { redirect: 'manual' });
      expect(back.status).toBe(302);
      const location = new URL(back.headers.get('location') ?? '');
      expect(location.origin + location.pathname).toBe(CLIENT_CALLBACK);
      expect(location.searchParams.get('error')).toBe('server_error');
      expect(location.searchParams.get('state')).toBe('st-down');
      expect(location.searchParams.get('iss')).toBe(stack.serverUrl);
      // A state we cannot open (the client is unknown): an HTML page, not JSON.
      const unknown = await fetch(`${stack.serverUrl}/callback?code=x&state=garbage`, { redirect: 'manual' });
      expect(unknown.status).toBe(400);
      expect(unknown.headers.get('content-type')).toContain('text/html');
      // The consent form with the replay cache down: an HTML page as well.
      const other = await openConsent(stack, clientId);
      const consent = await other.browser.request(`${stack.serverUrl}/authorize`, { form: { ...other.fields, decision: 'approve' } });
      expect(consent.status).toBe(503);
      expect(consent.headers.get('content-type')).toContain('text/html');
      expect(await consent.text()).toContain('Try again in a few minutes');
    } finally {
      await stack.close();
      await replay.close();
    }
  });

  it('[CALLBACK-NO-DEAD-END] an expired or evicted pending sign-in gets a clear HTML page', async () => {
    const stack = await startStack({ mode: 'callback_proxy' });
    try {
      const clientId = await registerClient(stack.serverUrl);
      const browser = createForgeBrowser();
      const page = await browser.request(
        authorizeUrl(stack.serverUrl, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: pkce().challenge }),
      );
      const fields = consentFields(await page.text());
      const approved = await browser.request(`${stack.serverUrl}/authorize`, { form: { ...fields, decision: 'approve' } });
      const callback = await browser.authorize(approved.headers.get('location') ?? '', stack.forge.user);
      stack.clock.advance(10 * 60_000 + 1);
      const late = await fetch(callback, { redirect: 'manual' });
      expect(late.status).toBe(400);
      expect(late.headers.get('content-type')).toContain('text/html');
      expect(await late.text()).toContain('Start the connection again from your application');
    } finally {
      await stack.close();
    }
  });
});

describe('consent page', () => {
  it('[CONSENT-UNVERIFIED] regression: a dynamically registered client chose its own name and the page showed it as fact; now it says "not verified"', async () => {
    const stack = await startStack({ mode: 'callback_proxy' });
    try {
      const clientId = await registerClient(stack.serverUrl, [CLIENT_CALLBACK], 'Claude');
      const html = await (
        await fetch(authorizeUrl(stack.serverUrl, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: pkce().challenge }))
      ).text();
      expect(html).toMatch(
        /data-testid="client-name">Claude<\/strong> <span class="tag" data-testid="name-unverified">not verified<\/span>/,
      );
      expect(html).toContain('the application chose this name itself; it is not verified');
      // Without a name there is nothing to verify.
      const unnamed = await registerClient(stack.serverUrl, [CLIENT_CALLBACK], '');
      const plain = await (
        await fetch(authorizeUrl(stack.serverUrl, { client_id: unnamed, redirect_uri: CLIENT_CALLBACK, code_challenge: pkce().challenge }))
      ).text();
      expect(plain).toContain('An application');
      expect(plain).not.toContain('name-unverified');
    } finally {
      await stack.close();
    }
  });
});
