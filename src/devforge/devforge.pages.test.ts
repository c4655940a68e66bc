import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createForgeBrowser } from './devforge.browser.ts';
import { authorizeUrl, REDIRECT_URI, startFixture } from './devforge.testkit.ts';
import type { ForgeFixture } from './devforge.testkit.ts';

let fx: ForgeFixture;
beforeAll(async () => {
  fx = await startFixture();
});
afterAll(async () => {
  await fx.forge.close();
});

const tokenOf = (html: string): string => /name="authenticity_token" value="([^"]+)"/.exec(html)?.[1] ?? '';

/** Every page: strict CSP with a nonce, no third-party assets, not frameable. */
function expectSafePage(res: Response, html: string): void {
  const csp = res.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toMatch(/style-src 'nonce-[A-Za-z0-9+/=]+'/);
  expect(res.headers.get('x-frame-options')).toBe('DENY');
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
  // No external stylesheet, script, image or font.
  expect(html).not.toMatch(/<(script|link|img|iframe)[^>]+(src|href)="https?:/);
  expect(html).not.toMatch(/\sstyle="/);
}

describe('sign-in page', () => {
  it('has the GitLab form ids, a session cookie (HttpOnly, SameSite=Lax) and a safe CSP', async () => {
    const res = await fetch(`${fx.forge.url}/users/sign_in`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expectSafePage(res, html);
    expect(html).toContain('id="user_login"');
    expect(html).toContain('id="user_password"');
    expect(html).toContain('data-testid="sign-in-button"');
    // No form-action on the sign-in page: the post may end in a redirect to any client scheme.
    expect(res.headers.get('content-security-policy')).not.toContain('form-action');
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('_gitlab_session='));
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\//);
  });

  it('a wrong password shows the form again with an error, and does not sign in', async () => {
    const browser = createForgeBrowser();
    const page = await (await browser.request(`${fx.forge.url}/users/sign_in`)).text();
    const res = await browser.request(`${fx.forge.url}/users/sign_in`, {
      form: { authenticity_token: tokenOf(page), 'user[login]': 'alice', 'user[password]': 'wrong' },
    });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/users/sign_in');
    const again = await (await browser.request(`${fx.forge.url}/users/sign_in`)).text();
    expect(again).toContain('role="alert"');
    expect(again).toContain('Invalid login or password.');
    expect(again).toContain('id="user_login"');
    // The message is shown once.
    expect(await (await browser.request(`${fx.forge.url}/users/sign_in`)).text()).not.toContain('Invalid login or password.');
    // Unknown users get the same message.
    const unknown = await browser.request(`${fx.forge.url}/users/sign_in`, {
      form: { authenticity_token: tokenOf(again), 'user[login]': 'mallory', 'user[password]': 'x' },
    });
    expect(unknown.headers.get('location')).toBe('/users/sign_in');
    const home = await (await browser.request(`${fx.forge.url}/`)).text();
    expect(home).not.toContain('Welcome');
  });

  it('signs in by username or email, rotates the session id and refuses a missing authenticity token', async () => {
    const browser = createForgeBrowser();
    const page = await (await browser.request(`${fx.forge.url}/users/sign_in`)).text();
    const before = browser.cookiesFor(new URL(fx.forge.url).host).get('_gitlab_session');

    const noToken = await browser.request(`${fx.forge.url}/users/sign_in`, {
      form: { 'user[login]': 'alice', 'user[password]': fx.alice.password },
    });
    expect(noToken.status).toBe(422);

    const res = await browser.request(`${fx.forge.url}/users/sign_in`, {
      form: { authenticity_token: tokenOf(page), 'user[login]': 'ALICE@example.test', 'user[password]': fx.alice.password },
    });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/');
    const after = browser.cookiesFor(new URL(fx.forge.url).host).get('_gitlab_session');
    expect(after).toBeDefined();
    expect(after).not.toBe(before);
    expect(await (await browser.request(`${fx.forge.url}/`)).text()).toContain('Welcome, @alice');
    // The pre-sign-in session id is not signed in (no fixation).
    const stale = await fetch(`${fx.forge.url}/`, { headers: { cookie: `_gitlab_session=${before}` } });
    expect(await stale.text()).not.toContain('Welcome');
  });

  it('sign-out ends the session', async () => {
    const browser = createForgeBrowser();
    const page = await (await browser.request(`${fx.forge.url}/users/sign_in`)).text();
    await browser.request(`${fx.forge.url}/users/sign_in`, {
      form: { authenticity_token: tokenOf(page), 'user[login]': 'bob', 'user[password]': fx.bob.password },
    });
    const home = await (await browser.request(`${fx.forge.url}/`)).text();
    expect(home).toContain('Welcome, @bob');
    const out = await browser.request(`${fx.forge.url}/users/sign_out`, { form: { authenticity_token: tokenOf(home) } });
    expect(out.status).toBe(302);
    expect(await (await browser.request(`${fx.forge.url}/`)).text()).not.toContain('Welcome');
  });
});

describe('authorize page', () => {
  it('names the (escaped) application and the scopes, has Authorize and Deny, and allows the redirect scheme in form-action', async () => {
    const browser = createForgeBrowser();
    const url = authorizeUrl(fx.forge.url, {
      client_id: fx.publicApp.uid,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'api read_user',
      state: '"><script>alert(1)</script>',
    });
    await browser.request(url);
    const signIn = await (await browser.request(`${fx.forge.url}/users/sign_in`)).text();
    const back = await browser.request(`${fx.forge.url}/users/sign_in`, {
      form: { authenticity_token: tokenOf(signIn), 'user[login]': 'alice', 'user[password]': fx.alice.password },
    });
    const res = await browser.request(new URL(back.headers.get('location') ?? '', fx.forge.url).href);
    expect(res.status).toBe(200);
    const html = await res.text();
    expectSafePage(res, html);
    expect(res.headers.get('content-security-policy')).toContain("form-action 'self' https:");
    expect(html).toContain('Authorize Public &lt;b&gt;MCP&lt;/b&gt; client to use your account?');
    expect(html).not.toContain('<b>MCP</b>');
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('<strong>api</strong>');
    expect(html).toContain('<strong>read_user</strong>');
    expect(html).toContain('@alice');
    expect(html).toContain('client.example');
    expect(html).toMatch(/<button type="submit"[^>]*>Authorize<\/button>/);
    expect(html).toMatch(/<button type="submit"[^>]*>Deny<\/button>/);
    // Both forms post to /oauth/authorize with the session's authenticity token.
    expect(html.match(/<form action="\/oauth\/authorize" method="post">/g)).toHaveLength(2);
    expect(html.match(/name="authenticity_token" value="[^"]+"/g)).toHaveLength(2);
  });

  it('the whole flow works through the pages with fetch and cookies, and Deny returns access_denied', async () => {
    const url = authorizeUrl(fx.forge.url, {
      client_id: fx.publicApp.uid,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'api',
      state: 'abc',
    });
    const approved = new URL(await createForgeBrowser().authorize(url, { username: 'alice', password: fx.alice.password }));
    expect(approved.searchParams.get('code')).toMatch(/^[0-9a-f]{64}$/);
    expect(approved.searchParams.get('state')).toBe('abc');
    const denied = new URL(await createForgeBrowser().authorize(url, { username: 'alice', password: fx.alice.password, decision: 'deny' }));
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('state')).toBe('abc');
    await expect(createForgeBrowser().authorize(url, { username: 'alice', password: 'nope' })).rejects.toThrow(/sign-in refused/);
  });

  it('unknown pages are an HTML 404', async () => {
    const res = await fetch(`${fx.forge.url}/nowhere`);
    expect(res.status).toBe(404);
    expectSafePage(res, await res.text());
  });
});
