/**
 * The local OAuth flow against the real dev forge on 127.0.0.1:0 (issue 3 item 11): browser sign-in with PKCE,
 * the 0600 token file, refresh before expiry with rotation, and a new sign-in when the refresh is refused.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeClock } from '../../core/clock.ts';
import { devForgeSeed, startDevForge, type StartedDevForge } from '../../devforge/index.ts';
import type { LocalOAuthSettings } from './mcp-local.settings.ts';
import { parseLoopbackRedirect } from './mcp-local.redirect-uri.ts';
import { browserSignIn, localTokenProvider } from './mcp-local.stdio.ts';
import { createTokenFile } from './mcp-local.token-file.ts';
import { capturedLogger, chromiumOpener, fetchOpener, launchChromium, tempDir } from './mcp-local.test-support.ts';

const HOUR = 3_600_000;

async function forgeUser(forge: StartedDevForge, token: string): Promise<{ status: number; username?: string | undefined }> {
  const response = await fetch(`${forge.url}/api/v4/user`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await response.json()) as { username?: string };
  return { status: response.status, username: body.username };
}

async function refreshAtForge(forge: StartedDevForge, clientId: string, refreshToken: string) {
  const response = await fetch(`${forge.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId }).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('local OAuth flow against the dev forge', () => {
  const seed = devForgeSeed(['http://127.0.0.1/callback']);
  const user = { username: seed.users[0]!.username, password: seed.users[0]!.password };
  const app = seed.applications[0]!;
  let clock: ReturnType<typeof fakeClock>;
  let forge: StartedDevForge;
  let tmp: Awaited<ReturnType<typeof tempDir>>;

  beforeEach(async () => {
    clock = fakeClock(Date.now());
    forge = await startDevForge({ ...seed, clock: () => clock.now() });
    tmp = await tempDir();
  });
  afterEach(async () => {
    await forge.close();
    await tmp.remove();
  });

  function settings(): LocalOAuthSettings {
    // Port 0: the listener takes a free port; the dev forge, like GitLab, lets loopback ports vary (RFC 8252 §7.3).
    const redirect = parseLoopbackRedirect('http://127.0.0.1:0/callback');
    if (typeof redirect === 'string') throw new Error(redirect);
    return {
      mode: 'oauth',
      forgeUrl: forge.url,
      clientId: app.uid,
      scopes: ['api', 'read_user'],
      redirect,
      tokenPath: join(tmp.dir, 'cfg', 'forge-token.json'),
    };
  }

  function deps(open: (url: string) => Promise<boolean>, log = capturedLogger().log) {
    const notes: string[] = [];
    return {
      notes,
      deps: { fetch, clock, log, openBrowser: open, notify: (line: string) => void notes.push(line), signInTimeoutMs: 20_000 },
    };
  }

  it('signs in with a fetch-driven user agent: PKCE S256, state, the code exchanged, a working token', async () => {
    const opener = fetchOpener(user);
    const { deps: d, notes } = deps(opener.open);
    const set = await browserSignIn(settings(), d).signIn();
    await opener.visits[0]!.done;
    const url = new URL(opener.visits[0]!.url);
    expect(url.origin + url.pathname).toBe(`${forge.url}/oauth/authorize`);
    expect(url.searchParams.get('client_id')).toBe(app.uid);
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('state')?.length).toBeGreaterThanOrEqual(32);
    expect(url.searchParams.get('scope')).toBe('api read_user');
    expect(url.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(notes.join('\n')).toContain(opener.visits[0]!.url);
    expect(set).toMatchObject({ forge_url: forge.url, client_id: app.uid, scope: 'api read_user' });
    expect(set.expires_at).toBe(clock.now() + 7200 * 1000);
    expect(await forgeUser(forge, set.access_token)).toEqual({ status: 200, username: 'dev' });
  });

  it('reports a refusal at the forge (Deny) as access_denied and stores nothing', async () => {
    const opener = fetchOpener(user, 'deny');
    const { deps: d } = deps(opener.open);
    const provider = localTokenProvider(settings(), d);
    await expect(provider.getToken()).rejects.toThrow(/access_denied/);
    expect(await createTokenFile({ path: settings().tokenPath, log: d.log }).read()).toBeUndefined();
    expect(forge.counters.token).toBe(0);
  });

  it('refreshes five minutes before expiry with a fake clock; the old pair is invalid afterwards', async () => {
    const opener = fetchOpener(user);
    const { deps: d } = deps(opener.open);
    const s = settings();
    const provider = localTokenProvider(s, d);
    const first = await provider.getToken();
    const stored = await createTokenFile({ path: s.tokenPath, log: d.log }).read();
    expect(stored?.access_token).toBe(first);

    clock.advance(2 * HOUR - 6 * 60_000);
    expect(await provider.getToken()).toBe(first);
    expect(forge.counters.token).toBe(1);

    clock.advance(60_000);
    const second = await provider.getToken();
    expect(second).not.toBe(first);
    expect(forge.counters.token).toBe(2);
    expect(opener.visits).toHaveLength(1);

    const renewed = await createTokenFile({ path: s.tokenPath, log: d.log }).read();
    expect(renewed?.access_token).toBe(second);
    expect(renewed?.refresh_token).not.toBe(stored?.refresh_token);
    expect(renewed?.expires_at).toBe(clock.now() + 7200 * 1000);
    // GitLab's rotation: the old access token and the old refresh token are both dead.
    expect((await forgeUser(forge, first)).status).toBe(401);
    expect((await refreshAtForge(forge, app.uid, stored!.refresh_token)).body.error).toBe('invalid_grant');
    expect(await forgeUser(forge, second)).toEqual({ status: 200, username: 'dev' });
  });

  it('starts a new browser sign-in when the forge refuses the refresh', async () => {
    const opener = fetchOpener(user);
    const { deps: d } = deps(opener.open);
    const s = settings();
    const first = await localTokenProvider(s, d).getToken();
    forge.revokeAllTokensOf('dev');
    clock.advance(2 * HOUR);
    // A new process (as after a restart) finds the expired pair in the file.
    const provider = localTokenProvider(s, d);
    const second = await provider.getToken();
    expect(opener.visits).toHaveLength(2);
    expect(second).not.toBe(first);
    expect(await forgeUser(forge, second)).toEqual({ status: 200, username: 'dev' });
    expect((await createTokenFile({ path: s.tokenPath, log: d.log }).read())?.access_token).toBe(second);
  });

  it('never logs a token, code, verifier or password', async () => {
    const opener = fetchOpener(user);
    const { log, text } = capturedLogger();
    const { deps: d } = deps(opener.open, log);
    const s = settings();
    const provider = localTokenProvider(s, d);
    const token = await provider.getToken();
    clock.advance(2 * HOUR);
    await provider.getToken();
    const file = await readFile(s.tokenPath, 'utf8');
    const parsed = JSON.parse(file) as Record<string, string>;
    expect(text()).not.toContain(token);
    expect(text()).not.toContain(parsed.access_token);
    expect(text()).not.toContain(parsed.refresh_token);
    expect(text()).not.toContain(user.password);
    const authorize = new URL(opener.visits[0]!.url);
    expect(text()).not.toContain(authorize.searchParams.get('state'));
  });

  describe('with headless Chromium as the browser', () => {
    let browser: Browser | undefined;
    beforeAll(async () => {
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
    });

    it('signs in at the forge, presses Authorize and stores the token in a 0600 file holding only what is needed', async (ctx) => {
      if (!browser) return ctx.skip();
      const opener = chromiumOpener(browser, user);
      const { deps: d } = deps(opener.open);
      const s = settings();
      const token = await localTokenProvider(s, d).getToken();
      await opener.visits[0]!.done;
      expect(await forgeUser(forge, token)).toEqual({ status: 200, username: 'dev' });
      if (process.platform !== 'win32') {
        expect((await stat(s.tokenPath)).mode & 0o777).toBe(0o600);
        expect((await stat(join(tmp.dir, 'cfg'))).mode & 0o777).toBe(0o700);
      }
      const stored = JSON.parse(await readFile(s.tokenPath, 'utf8')) as Record<string, unknown>;
      expect(Object.keys(stored).sort()).toEqual([
        'access_token',
        'client_id',
        'expires_at',
        'forge_url',
        'refresh_token',
        'scope',
        'version',
      ]);
      expect(stored).toMatchObject({ version: 1, forge_url: forge.url, client_id: app.uid, access_token: token });
      expect(JSON.stringify(stored)).not.toContain(user.password);
    });

    it('a Deny in Chromium ends the sign-in with access_denied', async (ctx) => {
      if (!browser) return ctx.skip();
      const opener = chromiumOpener(browser, user, 'Deny');
      const { deps: d } = deps(opener.open);
      await expect(browserSignIn(settings(), d).signIn()).rejects.toThrow(/access_denied/);
      await opener.visits[0]!.done;
    });
  });
});
