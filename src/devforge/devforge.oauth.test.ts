import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAUTH_ERROR_DESCRIPTIONS } from './devforge.errors.ts';
import { createForgeBrowser } from './devforge.browser.ts';
import {
  authorizeUrl,
  LOOPBACK_REDIRECT_URI,
  obtainCode,
  obtainTokens,
  pkcePair,
  postToken,
  REDIRECT_URI,
  startFixture,
} from './devforge.testkit.ts';
import type { ForgeFixture, TokenBody } from './devforge.testkit.ts';

let fx: ForgeFixture;
beforeAll(async () => {
  fx = await startFixture();
});
afterAll(async () => {
  await fx.forge.close();
});

const INVALID_GRANT = {
  error: 'invalid_grant',
  error_description: OAUTH_ERROR_DESCRIPTIONS.invalid_grant,
};

async function expectInvalidGrant(response: Response): Promise<void> {
  expect(response.status).toBe(400);
  expect(await response.json()).toEqual(INVALID_GRANT);
  expect(response.headers.get('www-authenticate')).toBe(
    `Bearer realm="Doorkeeper", error="invalid_grant", error_description="${OAUTH_ERROR_DESCRIPTIONS.invalid_grant}"`,
  );
  expect(response.headers.get('cache-control')).toBe('no-store');
}

/** A signed-in browser (sign-in through the pages, following the redirect to `/`). */
async function signedInBrowser(username: string, password: string) {
  const browser = createForgeBrowser();
  const page = await browser.request(`${fx.forge.url}/users/sign_in`);
  const token = /name="authenticity_token" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  const res = await browser.request(`${fx.forge.url}/users/sign_in`, {
    form: { authenticity_token: token, 'user[login]': username, 'user[password]': password },
  });
  expect(res.status).toBe(302);
  return browser;
}

describe('GET /oauth/authorize: client and redirect URI are checked first and never redirected to', () => {
  it.each([
    ['an unknown client', { client_id: 'nope', redirect_uri: REDIRECT_URI }, OAUTH_ERROR_DESCRIPTIONS.invalid_client],
    ['a missing client_id', { client_id: undefined, redirect_uri: REDIRECT_URI }, 'Missing required parameter: client_id.'],
    ['an unregistered redirect URI', { redirect_uri: 'https://attacker.example/cb' }, OAUTH_ERROR_DESCRIPTIONS.invalid_redirect_uri],
    [
      'a registered URI with another path',
      { redirect_uri: 'https://client.example/oauth/callback/extra' },
      OAUTH_ERROR_DESCRIPTIONS.invalid_redirect_uri,
    ],
    [
      'a registered URI with an added query',
      { redirect_uri: `${REDIRECT_URI}?next=https://attacker.example` },
      OAUTH_ERROR_DESCRIPTIONS.invalid_redirect_uri,
    ],
    ['a registered URI with a fragment', { redirect_uri: `${REDIRECT_URI}#x` }, OAUTH_ERROR_DESCRIPTIONS.invalid_redirect_uri],
    [
      'a non-loopback URI on another port',
      { redirect_uri: 'https://client.example:8443/oauth/callback' },
      OAUTH_ERROR_DESCRIPTIONS.invalid_redirect_uri,
    ],
    [
      'localhost on another port (only IP literals may vary)',
      { redirect_uri: 'http://localhost:9999/oauth/callback' },
      OAUTH_ERROR_DESCRIPTIONS.invalid_redirect_uri,
    ],
    ['a missing redirect URI', {}, OAUTH_ERROR_DESCRIPTIONS.invalid_redirect_uri],
  ])('%s gives a 400 error page without Location', async (_name, params, description) => {
    const query: Record<string, string | undefined> = { client_id: fx.publicApp.uid, response_type: 'code', state: 's', ...params };
    for (const signedIn of [false, true]) {
      const browser = signedIn ? await signedInBrowser(fx.alice.username, fx.alice.password) : createForgeBrowser();
      const res = await browser.request(authorizeUrl(fx.forge.url, query));
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toContain('text/html');
      const html = await res.text();
      expect(html).toContain('An error has occurred');
      expect(html).toContain(description.replaceAll("'", '&#39;'));
    }
  });

  it('not signed in: redirects to the sign-in page and comes back to the same authorize URL', async () => {
    const browser = createForgeBrowser();
    const url = authorizeUrl(fx.forge.url, {
      client_id: fx.publicApp.uid,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      state: 'st',
      scope: 'api',
    });
    const first = await browser.request(url);
    expect(first.status).toBe(302);
    expect(first.headers.get('location')).toBe('/users/sign_in');
    const page = await browser.request(`${fx.forge.url}/users/sign_in`);
    const token = /name="authenticity_token" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
    const signedIn = await browser.request(`${fx.forge.url}/users/sign_in`, {
      form: { authenticity_token: token, 'user[login]': 'alice', 'user[password]': fx.alice.password },
    });
    expect(signedIn.status).toBe(302);
    expect(new URL(signedIn.headers.get('location') ?? '', fx.forge.url).href).toBe(url);
  });
});

describe('GET /oauth/authorize: errors after the client check go back to the client', () => {
  const query = (extra: Record<string, string | undefined>) =>
    authorizeUrl(fx.forge.url, { client_id: fx.publicApp.uid, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'st-9', ...extra });

  it.each([
    ['an unknown scope', { scope: 'api sudo' }, 'invalid_scope', OAUTH_ERROR_DESCRIPTIONS.invalid_scope],
    ['a scope the application lacks', { scope: 'write_repository' }, 'invalid_scope', OAUTH_ERROR_DESCRIPTIONS.invalid_scope],
    [
      'an unsupported response type',
      { response_type: 'token' },
      'unsupported_response_type',
      OAUTH_ERROR_DESCRIPTIONS.unsupported_response_type,
    ],
    ['a missing response type', { response_type: undefined }, 'invalid_request', 'Missing required parameter: response_type.'],
    [
      'a challenge without method',
      { code_challenge: 'abc' },
      'invalid_code_challenge_method',
      OAUTH_ERROR_DESCRIPTIONS.invalid_code_challenge_method,
    ],
    [
      'an unknown challenge method',
      { code_challenge: 'abc', code_challenge_method: 'S512' },
      'invalid_code_challenge_method',
      OAUTH_ERROR_DESCRIPTIONS.invalid_code_challenge_method,
    ],
  ])('%s redirects with error, description and state', async (_name, extra, error, description) => {
    const browser = await signedInBrowser(fx.alice.username, fx.alice.password);
    const res = await browser.request(query(extra));
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(Object.fromEntries(location.searchParams)).toEqual({ error, error_description: description, state: 'st-9' });
  });

  it('with no scope uses GitLab default scope api', async () => {
    const browser = await signedInBrowser(fx.alice.username, fx.alice.password);
    const res = await browser.request(query({}));
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('name="scope" value="api"');
  });
});

describe('POST /oauth/authorize: Authorize, Deny and CSRF', () => {
  async function authorizePageFields(browser: ReturnType<typeof createForgeBrowser>, extra: Record<string, string> = {}) {
    const res = await browser.request(
      authorizeUrl(fx.forge.url, {
        client_id: fx.publicApp.uid,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        state: 'keep-me',
        scope: 'api read_user',
        ...extra,
      }),
    );
    expect(res.status).toBe(200);
    const html = await res.text();
    const fields: Record<string, string> = {};
    const approveForm =
      /<form action="\/oauth\/authorize" method="post">\n(?!<input type="hidden" name="_method")[\s\S]*?<\/form>/.exec(html)?.[0] ?? '';
    for (const m of approveForm.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[m[1] ?? ''] = m[2] ?? '';
    return fields;
  }

  it('Authorize redirects with a code and the state', async () => {
    const browser = await signedInBrowser('alice', fx.alice.password);
    const fields = await authorizePageFields(browser);
    expect(fields.authenticity_token).toBeTruthy();
    const res = await browser.request(`${fx.forge.url}/oauth/authorize`, { form: fields });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location') ?? '');
    expect(location.searchParams.get('state')).toBe('keep-me');
    expect(location.searchParams.get('code')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('Deny (Rails _method=delete, and a real DELETE) redirects with access_denied and the state', async () => {
    const browser = await signedInBrowser('alice', fx.alice.password);
    const fields = await authorizePageFields(browser);
    for (const request of [
      () => browser.request(`${fx.forge.url}/oauth/authorize`, { form: { ...fields, _method: 'delete' } }),
      () =>
        browser.request(`${fx.forge.url}/oauth/authorize`, {
          method: 'DELETE',
          form: fields,
        }),
    ]) {
      const res = await request();
      expect(res.status).toBe(302);
      const location = new URL(res.headers.get('location') ?? '');
      expect(Object.fromEntries(location.searchParams)).toEqual({
        error: 'access_denied',
        error_description: OAUTH_ERROR_DESCRIPTIONS.access_denied,
        state: 'keep-me',
      });
    }
  });

  it('a missing or foreign authenticity token is refused with 422 and no redirect', async () => {
    const browser = await signedInBrowser('alice', fx.alice.password);
    const fields = await authorizePageFields(browser);
    const other = await signedInBrowser('alice', fx.alice.password);
    const otherFields = await authorizePageFields(other);
    for (const form of [
      { ...fields, authenticity_token: '' },
      { ...fields, authenticity_token: 'forged' },
      { ...fields, authenticity_token: otherFields.authenticity_token ?? '' },
    ]) {
      const res = await browser.request(`${fx.forge.url}/oauth/authorize`, { form });
      expect(res.status).toBe(422);
      expect(res.headers.get('location')).toBeNull();
    }
    const anonymous = await createForgeBrowser().request(`${fx.forge.url}/oauth/authorize`, { form: fields });
    expect(anonymous.status).toBe(422);
  });

  it('a posted form with a swapped, unregistered redirect URI is answered as JSON, never redirected', async () => {
    const browser = await signedInBrowser('alice', fx.alice.password);
    const fields = await authorizePageFields(browser);
    for (const form of [
      { ...fields, redirect_uri: 'https://attacker.example/cb' },
      { ...fields, redirect_uri: 'https://attacker.example/cb', _method: 'delete' },
    ]) {
      const res = await browser.request(`${fx.forge.url}/oauth/authorize`, { form });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.json()).toMatchObject({ error: 'invalid_redirect_uri' });
    }
  });
});

describe('redirect URI matching: the port varies only for loopback IP literals', () => {
  it.each([
    ['127.0.0.1 on another port', 'http://127.0.0.1:51234/callback'],
    ['127.0.0.1 on the registered port', LOOPBACK_REDIRECT_URI],
    ['[::1] on another port', 'http://[::1]:40000/cb'],
  ])('%s gets a code, and the token exchange accepts it', async (_name, redirectUri) => {
    const { verifier, challenge } = pkcePair();
    const code = await obtainCode(fx, { redirectUri, challenge });
    const res = await postToken(fx, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: fx.publicApp.uid,
      code_verifier: verifier,
    });
    expect(res.status).toBe(200);
  });

  it('localhost (a name, not a literal) must match its registered port exactly', async () => {
    await expect(obtainCode(fx, { redirectUri: 'http://localhost:6274/oauth/callback' })).resolves.toMatch(/^[0-9a-f]{64}$/);
    await expect(obtainCode(fx, { redirectUri: 'http://localhost:6275/oauth/callback' })).rejects.toThrow(/status 400/);
  });
});

describe('POST /oauth/token: authorization code', () => {
  it('exchanges a code (S256) for GitLab token body with Cache-Control no-store', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await obtainCode(fx, { challenge });
    const res = await postToken(fx, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: fx.publicApp.uid,
      code_verifier: verifier,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
    const body = (await res.json()) as TokenBody;
    expect(body).toEqual({
      access_token: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown,
      token_type: 'Bearer',
      expires_in: 7200,
      refresh_token: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown,
      scope: 'api read_user',
      created_at: Math.floor(fx.now() / 1000),
    });
    expect(Object.keys(body)).toEqual(['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope', 'created_at']);
  });

  it('accepts a JSON body and a plain PKCE challenge', async () => {
    const code = await obtainCode(fx, { challenge: 'plain-verifier-0123456789-0123456789-0123456789', method: 'plain' });
    const res = await fetch(`${fx.forge.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        client_id: fx.publicApp.uid,
        code_verifier: 'plain-verifier-0123456789-0123456789-0123456789',
      }),
    });
    expect(res.status).toBe(200);
  });

  it('refuses a replayed code with invalid_grant', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await obtainCode(fx, { challenge });
    const form = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: fx.publicApp.uid,
      code_verifier: verifier,
    };
    expect((await postToken(fx, form)).status).toBe(200);
    await expectInvalidGrant(await postToken(fx, form));
  });

  it('refuses a wrong verifier (S256 and plain) with invalid_grant, and the code stays usable with the right one', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await obtainCode(fx, { challenge });
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: fx.publicApp.uid };
    await expectInvalidGrant(await postToken(fx, { ...form, code_verifier: `${verifier}x` }));
    // An S256 challenge is not accepted as a plain verifier (no downgrade).
    await expectInvalidGrant(await postToken(fx, { ...form, code_verifier: challenge }));
    expect((await postToken(fx, { ...form, code_verifier: verifier })).status).toBe(200);

    const plainCode = await obtainCode(fx, { challenge: 'the-plain-verifier', method: 'plain' });
    await expectInvalidGrant(await postToken(fx, { ...form, code: plainCode, code_verifier: 'another-verifier' }));
  });

  it('a missing verifier for a PKCE code is invalid_request', async () => {
    const { challenge } = pkcePair();
    const code = await obtainCode(fx, { challenge });
    const res = await postToken(fx, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: fx.publicApp.uid });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid_request', error_description: 'Missing required parameter: code_verifier.' });
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_request"');
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('a verifier for a code issued without a challenge is invalid_grant', async () => {
    const code = await obtainCode(fx);
    await expectInvalidGrant(
      await postToken(fx, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        client_id: fx.publicApp.uid,
        code_verifier: 'x',
      }),
    );
  });

  it('refuses a redirect URI that differs from the authorization request', async () => {
    const code = await obtainCode(fx);
    await expectInvalidGrant(
      await postToken(fx, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'http://localhost:6274/oauth/callback',
        client_id: fx.publicApp.uid,
      }),
    );
  });

  it('refuses a code issued to another client', async () => {
    const code = await obtainCode(fx);
    await expectInvalidGrant(
      await postToken(fx, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        client_id: fx.confidentialApp.uid,
        client_secret: fx.confidentialApp.secret ?? '',
      }),
    );
  });

  it('a code expires after 10 minutes (fake clock)', async () => {
    const fresh = await obtainCode(fx);
    const form = { grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, client_id: fx.publicApp.uid };
    fx.advance(600_000);
    expect((await postToken(fx, { ...form, code: fresh })).status).toBe(200);
    const stale = await obtainCode(fx);
    fx.advance(600_001);
    await expectInvalidGrant(await postToken(fx, { ...form, code: stale }));
  });

  it('an unknown client is 401 invalid_client with the Doorkeeper challenge', async () => {
    const code = await obtainCode(fx);
    const res = await postToken(fx, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: 'unknown' });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'invalid_client', error_description: OAUTH_ERROR_DESCRIPTIONS.invalid_client });
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer realm="Doorkeeper", error="invalid_client", error_description="${OAUTH_ERROR_DESCRIPTIONS.invalid_client}"`,
    );
  });

  it('a confidential application needs its secret (params or HTTP Basic), else 401 invalid_client', async () => {
    const app = fx.confidentialApp;
    const secret = app.secret ?? '';
    const base = { grant_type: 'authorization_code', redirect_uri: REDIRECT_URI };

    const withoutSecret = await postToken(fx, { ...base, code: await obtainCode(fx, { app }), client_id: app.uid });
    expect(withoutSecret.status).toBe(401);
    expect(((await withoutSecret.json()) as { error: string }).error).toBe('invalid_client');

    const wrongSecret = await postToken(fx, { ...base, code: await obtainCode(fx, { app }), client_id: app.uid, client_secret: 'wrong' });
    expect(wrongSecret.status).toBe(401);

    const inParams = await postToken(fx, { ...base, code: await obtainCode(fx, { app }), client_id: app.uid, client_secret: secret });
    expect(inParams.status).toBe(200);

    const basic = Buffer.from(`${app.uid}:${secret}`).toString('base64');
    const inBasic = await postToken(fx, { ...base, code: await obtainCode(fx, { app }) }, { authorization: `Basic ${basic}` });
    expect(inBasic.status).toBe(200);
  });

  it('missing or unknown grant types follow Doorkeeper, and every answer carries no-store', async () => {
    const missing = await postToken(fx, {});
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ error: 'invalid_request', error_description: 'Missing required parameter: grant_type.' });
    expect(missing.headers.get('cache-control')).toBe('no-store');

    const password = await postToken(fx, { grant_type: 'password', username: 'alice', password: fx.alice.password });
    expect(password.status).toBe(400);
    expect(await password.json()).toEqual({
      error: 'unsupported_grant_type',
      error_description: OAUTH_ERROR_DESCRIPTIONS.unsupported_grant_type,
    });

    const garbage = await fetch(`${fx.forge.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(garbage.status).toBe(400);
    expect(garbage.headers.get('cache-control')).toBe('no-store');
    expect(((await garbage.json()) as { error: string }).error).toBe('invalid_request');
  });
});

describe('POST /oauth/token: refresh with rotation', () => {
  const info = (token: string) => fetch(`${fx.forge.url}/oauth/token/info`, { headers: { authorization: `Bearer ${token}` } });

  it('returns a new pair and invalidates both old tokens; the old refresh token is invalid_grant', async () => {
    const first = await obtainTokens(fx);
    fx.advance(1000);
    const res = await postToken(fx, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: fx.publicApp.uid });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const second = (await res.json()) as TokenBody;
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.scope).toBe(first.scope);
    expect(second.created_at).toBe(Math.floor(fx.now() / 1000));

    expect((await info(second.access_token)).status).toBe(200);
    expect((await info(first.access_token)).status).toBe(401);
    const api = await fetch(`${fx.forge.url}/api/v4/user`, { headers: { authorization: `Bearer ${first.access_token}` } });
    expect(api.status).toBe(401);

    await expectInvalidGrant(
      await postToken(fx, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: fx.publicApp.uid }),
    );
    // The new pair is still good after the replay attempt.
    const third = await postToken(fx, { grant_type: 'refresh_token', refresh_token: second.refresh_token, client_id: fx.publicApp.uid });
    expect(third.status).toBe(200);
  });

  it('works after the access token expired, and can narrow the scope but not widen it', async () => {
    const pair = await obtainTokens(fx);
    fx.advance(7201_000);
    expect((await info(pair.access_token)).status).toBe(401);
    const widen = await postToken(fx, {
      grant_type: 'refresh_token',
      refresh_token: pair.refresh_token,
      client_id: fx.publicApp.uid,
      scope: 'api read_api',
    });
    expect(widen.status).toBe(400);
    expect(((await widen.json()) as { error: string }).error).toBe('invalid_scope');
    const narrow = await postToken(fx, {
      grant_type: 'refresh_token',
      refresh_token: pair.refresh_token,
      client_id: fx.publicApp.uid,
      scope: 'read_user',
    });
    expect(narrow.status).toBe(200);
    expect(((await narrow.json()) as TokenBody).scope).toBe('read_user');
  });

  it('needs the owning client: none is invalid_grant, an unknown one invalid_client, another one invalid_grant', async () => {
    const pair = await obtainTokens(fx);
    await expectInvalidGrant(await postToken(fx, { grant_type: 'refresh_token', refresh_token: pair.refresh_token }));
    const unknown = await postToken(fx, { grant_type: 'refresh_token', refresh_token: pair.refresh_token, client_id: 'nope' });
    expect(unknown.status).toBe(401);
    await expectInvalidGrant(
      await postToken(fx, { grant_type: 'refresh_token', refresh_token: pair.refresh_token, client_id: fx.trustedApp.uid }),
    );
    const missing = await postToken(fx, { grant_type: 'refresh_token', client_id: fx.publicApp.uid });
    expect(await missing.json()).toEqual({ error: 'invalid_request', error_description: 'Missing required parameter: refresh_token.' });
    // None of the refused attempts used the token up.
    expect(
      (await postToken(fx, { grant_type: 'refresh_token', refresh_token: pair.refresh_token, client_id: fx.publicApp.uid })).status,
    ).toBe(200);
  });
});

describe('GET /oauth/token/info', () => {
  const invalidBody = { error: 'invalid_token', error_description: 'The access token is invalid', state: 'unauthorized' };

  it('returns GitLab body with the deprecated aliases, counting down with the clock', async () => {
    const pair = await obtainTokens(fx);
    fx.advance(100_000);
    const res = await fetch(`${fx.forge.url}/oauth/token/info`, { headers: { authorization: `Bearer ${pair.access_token}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      resource_owner_id: fx.alice.id,
      scope: ['api', 'read_user'],
      expires_in: 7100,
      application: { uid: fx.publicApp.uid },
      created_at: pair.created_at,
      scopes: ['api', 'read_user'],
      expires_in_seconds: 7100,
    });
    const viaParam = await fetch(`${fx.forge.url}/oauth/token/info?access_token=${pair.access_token}`);
    expect(viaParam.status).toBe(200);
  });

  it('an unknown, expired (7200 s) or revoked token is 401 with GitLab body and headers', async () => {
    const check = async (token: string | undefined) => {
      const res = await fetch(`${fx.forge.url}/oauth/token/info`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual(invalidBody);
      expect(res.headers.get('www-authenticate')).toBe(
        'Bearer realm="Doorkeeper", error="invalid_token", error_description="The access token is invalid"',
      );
      expect(res.headers.get('cache-control')).toBe('no-store');
    };
    await check('0'.repeat(64));
    await check(undefined);

    const expiring = await obtainTokens(fx);
    fx.advance(7200_000);
    const stillValid = await fetch(`${fx.forge.url}/oauth/token/info`, { headers: { authorization: `Bearer ${expiring.access_token}` } });
    expect(stillValid.status).toBe(200);
    expect(((await stillValid.json()) as { expires_in: number }).expires_in).toBe(0);
    fx.advance(1);
    await check(expiring.access_token);

    const revoked = await obtainTokens(fx);
    const r = await fetch(`${fx.forge.url}/oauth/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ client_id: fx.publicApp.uid, token: revoked.access_token }),
    });
    expect(r.status).toBe(200);
    await check(revoked.access_token);
  });
});

describe('POST /oauth/revoke', () => {
  const revoke = (form: Record<string, string>) =>
    fetch(`${fx.forge.url}/oauth/revoke`, { method: 'POST', body: new URLSearchParams(form) });

  it('answers 200 {} for unknown tokens and for a missing token', async () => {
    for (const form of [{ client_id: fx.publicApp.uid, token: 'f'.repeat(64) }, { client_id: fx.publicApp.uid }] as Record<
      string,
      string
    >[]) {
      const res = await revoke(form);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({});
    }
  });

  it('revoking the refresh token (with hint) kills the pair', async () => {
    const pair = await obtainTokens(fx);
    const res = await revoke({ client_id: fx.publicApp.uid, token: pair.refresh_token, token_type_hint: 'refresh_token' });
    expect(res.status).toBe(200);
    const info = await fetch(`${fx.forge.url}/oauth/token/info`, { headers: { authorization: `Bearer ${pair.access_token}` } });
    expect(info.status).toBe(401);
    await expectInvalidGrant(
      await postToken(fx, { grant_type: 'refresh_token', refresh_token: pair.refresh_token, client_id: fx.publicApp.uid }),
    );
  });

  it('refuses (403 unauthorized_client) without a client or for a token of another client', async () => {
    const pair = await obtainTokens(fx);
    for (const form of [{ token: pair.access_token }, { client_id: fx.trustedApp.uid, token: pair.access_token }] as Record<
      string,
      string
    >[]) {
      const res = await revoke(form);
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ error: 'unauthorized_client', error_description: 'You are not authorized to revoke this token' });
    }
    const info = await fetch(`${fx.forge.url}/oauth/token/info`, { headers: { authorization: `Bearer ${pair.access_token}` } });
    expect(info.status).toBe(200);
  });

  it('revokeAllTokensOf invalidates a user tokens and outstanding codes', async () => {
    const pair = await obtainTokens(fx, { user: fx.bob });
    const code = await obtainCode(fx, { user: fx.bob });
    fx.forge.revokeAllTokensOf('bob');
    const info = await fetch(`${fx.forge.url}/oauth/token/info`, { headers: { authorization: `Bearer ${pair.access_token}` } });
    expect(info.status).toBe(401);
    await expectInvalidGrant(
      await postToken(fx, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: fx.publicApp.uid }),
    );
    expect(() => fx.forge.revokeAllTokensOf('nobody')).toThrow(/no dev forge user/);
  });
});

describe('skipping the authorize page (GitLab rules)', () => {
  it('a public application shows the page every time, even when already approved', async () => {
    await obtainTokens(fx);
    const browser = await signedInBrowser('alice', fx.alice.password);
    const res = await browser.request(
      authorizeUrl(fx.forge.url, {
        client_id: fx.publicApp.uid,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        scope: 'api read_user',
      }),
    );
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('data-testid="authorization-button"');
  });

  it('a confidential application already approved with the same scopes skips to a redirect page', async () => {
    const app = fx.confidentialApp;
    const url = (scope: string) =>
      authorizeUrl(fx.forge.url, { client_id: app.uid, redirect_uri: REDIRECT_URI, response_type: 'code', scope, state: 'again' });
    const browser = await signedInBrowser('alice', fx.alice.password);
    // Not approved yet for these exact scopes: the page is shown.
    expect(await (await browser.request(url('read_user'))).text()).toContain('data-testid="authorization-button"');
    const code = await obtainCode(fx, { app, scope: 'read_user' });
    const token = await postToken(fx, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: app.uid,
      client_secret: app.secret ?? '',
    });
    expect(token.status).toBe(200);
    const before = fx.forge.counters.authorize;
    const res = await browser.request(url('read_user'));
    expect(fx.forge.counters.authorize).toBe(before + 1);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).not.toContain('data-testid="authorization-button"');
    const href = /<a id="redirect-link" href="([^"]*)"/.exec(html)?.[1]?.replaceAll('&amp;', '&') ?? '';
    expect(new URL(href).searchParams.get('code')).toMatch(/^[0-9a-f]{64}$/);
    expect(new URL(href).searchParams.get('state')).toBe('again');
    // Different scopes: asked again.
    expect(await (await browser.request(url('api'))).text()).toContain('data-testid="authorization-button"');
  });

  it('a trusted application never shows the page', async () => {
    const location = await createForgeBrowser().authorize(
      authorizeUrl(fx.forge.url, { client_id: fx.trustedApp.uid, redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'api' }),
      { username: 'alice', password: fx.alice.password },
    );
    expect(new URL(location).searchParams.get('code')).toBeTruthy();
  });
});

describe('counters', () => {
  it('count each endpoint once per request', async () => {
    const c0 = { ...fx.forge.counters };
    const pair = await obtainTokens(fx);
    const c1 = { ...fx.forge.counters };
    expect(c1.token - c0.token).toBe(1);
    expect(c1.authorize - c0.authorize).toBe(3); // the GET before sign-in, the GET after it, then the POST
    await fetch(`${fx.forge.url}/oauth/token/info`, { headers: { authorization: `Bearer ${pair.access_token}` } });
    await fetch(`${fx.forge.url}/api/v4/user`, { headers: { authorization: `Bearer ${pair.access_token}` } });
    await fetch(`${fx.forge.url}/api/v4/projects`, { headers: { authorization: `Bearer ${pair.access_token}` } });
    await fetch(`${fx.forge.url}/oauth/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ client_id: fx.publicApp.uid, token: pair.access_token }),
    });
    expect(fx.forge.counters.tokenInfo - c1.tokenInfo).toBe(1);
    expect(fx.forge.counters.user - c1.user).toBe(1);
    expect(fx.forge.counters.api - c1.api).toBe(1);
    expect(fx.forge.counters.revoke - c1.revoke).toBe(1);
  });
});
