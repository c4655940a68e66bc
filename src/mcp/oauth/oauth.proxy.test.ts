/**
 * Callback proxy mode, stateful, against the dev forge: the spec's eight steps, consent, and the attacks the
 * issue lists. The fetch-driven browser walks the real pages; the Chromium end-to-end tests are in test/mcp.
 */
import { createForgeBrowser } from '../../devforge/index.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  approveConsent,
  authorizeUrl,
  callTool,
  CLIENT_CALLBACK,
  completeFlow,
  consentFields,
  INITIALIZE,
  pkce,
  postMcp,
  register,
  registerClient,
  startStack,
  token,
  toolJson,
  walkSignIn,
  type Stack,
} from '../mcp.testkit.ts';

describe('callback proxy mode (stateful)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ mode: 'callback_proxy' });
  });
  afterAll(async () => {
    await stack.close();
  });
  const user = () => stack.forge.user;

  it('[MODE-PROXY] [FLOW-3-FORGE-REDIRECT] [FLOW-5-EXCHANGE] [FLOW-6-CLIENT-REDIRECT] [FLOW-7-TOKEN] [AUTH-DUAL-PKCE] runs the eight steps', async () => {
    const clientId = await registerClient(stack.serverUrl);
    const { verifier, challenge } = pkce();
    const tokenCallsBefore = stack.forge.forge.counters.token;
    const walk = await walkSignIn(
      authorizeUrl(stack.serverUrl, {
        client_id: clientId,
        redirect_uri: CLIENT_CALLBACK,
        code_challenge: challenge,
        state: 'client-state-1',
        scope: 'api read_user',
      }),
      user(),
    );
    // Step 3: the forge sees the real application id, our callback, a proxy challenge and a proxy state.
    const toForge = new URL(walk.forgeAuthorize ?? '');
    expect(toForge.origin + toForge.pathname).toBe(`${stack.forge.forge.url}/oauth/authorize`);
    expect(toForge.searchParams.get('client_id')).toBe(stack.forge.app.uid);
    expect(toForge.searchParams.get('redirect_uri')).toBe(`${stack.serverUrl}/callback`);
    expect(toForge.searchParams.get('code_challenge_method')).toBe('S256');
    expect(toForge.searchParams.get('code_challenge')).not.toBe(challenge);
    expect(toForge.searchParams.get('state')).not.toBe('client-state-1');
    // Step 4-5: the forge came back to our callback, and we exchanged its code once.
    const atCallback = new URL(walk.callback ?? '');
    expect(atCallback.origin + atCallback.pathname).toBe(`${stack.serverUrl}/callback`);
    expect(stack.forge.forge.counters.token).toBe(tokenCallsBefore + 1);
    // Step 6: the client gets a proxy code (not the forge's), its own state and iss.
    const landed = walk.clientRedirect;
    expect(landed.origin + landed.pathname).toBe(CLIENT_CALLBACK);
    expect(landed.searchParams.get('state')).toBe('client-state-1');
    expect(landed.searchParams.get('iss')).toBe(stack.serverUrl);
    const proxyCode = landed.searchParams.get('code') ?? '';
    expect(proxyCode).not.toBe(atCallback.searchParams.get('code'));
    // Step 7.
    const answer = await token(stack.serverUrl, {
      grant_type: 'authorization_code',
      code: proxyCode,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: CLIENT_CALLBACK,
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body).toMatchObject({ token_type: 'Bearer', scope: 'api read_user' });
    expect(typeof answer.body.access_token).toBe('string');
    expect(typeof answer.body.refresh_token).toBe('string');
    expect(answer.body.expires_in).toBeGreaterThan(7000);
  });

  it('[FLOW-8-MCP] [VALIDATE-FORGE] [VALIDATE-CACHE] [MCP-TRANSPORT] a tool call reaches the forge with the user token; a burst costs one validation', async () => {
    const { tokens } = await completeFlow(stack);
    const bearer = String(tokens.access_token);
    const infoBefore = stack.forge.forge.counters.tokenInfo;
    const userBefore = stack.forge.forge.counters.user;
    const me = await callTool(stack.serverUrl, bearer, 'get_current_user');
    expect(me.isError).toBeFalsy();
    expect(toolJson(me)).toMatchObject({ username: user().username });
    expect(stack.forge.forge.counters.user).toBe(userBefore + 1);
    // List tools answer a page: {items, next_cursor, has_more, total}.
    const projects = (toolJson(await callTool(stack.serverUrl, bearer, 'list_projects')) as { items: { path_with_namespace: string }[] })
      .items;
    expect(projects.map((p) => p.path_with_namespace)).toContain(`${user().username}/hello-forge`);
    const issues = (
      toolJson(
        await callTool(stack.serverUrl, bearer, 'list_issues', { project_id: `${user().username}/hello-forge`, state: 'opened' }),
      ) as { items: { title: string }[] }
    ).items;
    expect(issues.length).toBeGreaterThan(0);
    const created = toolJson(
      await callTool(stack.serverUrl, bearer, 'create_issue', { project_id: `${user().username}/hello-forge`, title: 'Made over MCP' }),
    ) as { title: string; author: string };
    expect(created).toMatchObject({ title: 'Made over MCP', author: user().username });
    const mrs = (
      toolJson(await callTool(stack.serverUrl, bearer, 'list_merge_requests', { project_id: `${user().username}/hello-forge` })) as {
        items: unknown[];
      }
    ).items;
    expect(mrs.length).toBeGreaterThan(0);
    expect(
      toolJson(await callTool(stack.serverUrl, bearer, 'get_project', { project_id: `${user().username}/hello-forge` })),
    ).toMatchObject({ name: 'hello-forge' });
    // Each SDK session above is several HTTP requests; the forge validated the token once.
    expect(stack.forge.forge.counters.tokenInfo).toBe(infoBefore + 1);
  });

  it('[CONSENT-PAGE] [CONSENT-HEADERS] shows the client name and destination on a self-contained, unframeable page', async () => {
    const clientId = await registerClient(stack.serverUrl, [CLIENT_CALLBACK], 'Acme <Assistant>');
    const response = await fetch(
      authorizeUrl(stack.serverUrl, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: pkce().challenge, state: 's' }),
    );
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('Acme &lt;Assistant&gt;');
    expect(html).not.toContain('<Assistant>');
    expect(html).toMatch(/data-testid="destination">this device</);
    expect(html).toContain('value="approve"');
    expect(html).toContain('value="deny"');
    expect(html).toContain('name="viewport" content="width=device-width, initial-scale=1"');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('cache-control')).toBe('no-store');
    // No third-party assets: nothing is loaded from anywhere (no src, no stylesheet links, no scripts).
    expect(html).not.toMatch(/<script|<link|<img|src=|url\(/i);
    expect(response.headers.getSetCookie().join()).toMatch(/mcp_csrf=[^;]+;.*HttpOnly/);
  });

  it('[CONSENT-PAGE] names the host of a non-loopback callback', async () => {
    const clientId = await registerClient(stack.serverUrl, ['https://claude.ai/api/mcp/auth_callback'], 'Claude');
    const html = await (
      await fetch(
        authorizeUrl(stack.serverUrl, {
          client_id: clientId,
          redirect_uri: 'https://claude.ai/api/mcp/auth_callback',
          code_challenge: pkce().challenge,
        }),
      )
    ).text();
    expect(html).toMatch(/data-testid="destination">claude.ai</);
  });

  it('[CONSENT-MEMORY] [AUTHZ-CONSENT-FIRST] remembers approval for 30 days per client and callback', async () => {
    const browser = createForgeBrowser();
    const clientId = await registerClient(stack.serverUrl);
    const first = await completeFlow(stack, { browser, clientId });
    expect(first.walk.consentHtml).toBeDefined();
    const again = await completeFlow(stack, { browser, clientId });
    expect(again.walk.consentHtml).toBeUndefined();
    // Another client on the same callback must be approved on its own.
    const other = await completeFlow(stack, { browser });
    expect(other.walk.consentHtml).toBeDefined();
    const consentCookie = [...browser.cookiesFor(new URL(stack.serverUrl).host).entries()].find(([name]) => name.includes('consent'));
    expect(consentCookie?.[1]).toMatch(/^[A-Za-z0-9_-]+\.\./);
    stack.clock.advance(30 * 24 * 3_600_000 + 1);
    const later = await completeFlow(stack, { browser, clientId });
    expect(later.walk.consentHtml).toBeDefined();
  });

  it('[CONSENT-DENY] Deny sends access_denied with the state and iss to the client', async () => {
    const clientId = await registerClient(stack.serverUrl);
    const walk = await walkSignIn(
      authorizeUrl(stack.serverUrl, {
        client_id: clientId,
        redirect_uri: CLIENT_CALLBACK,
        code_challenge: pkce().challenge,
        state: 'deny-state',
      }),
      user(),
      { consent: 'deny' },
    );
    expect(walk.forgeAuthorize).toBeUndefined();
    expect(walk.clientRedirect.origin + walk.clientRedirect.pathname).toBe(CLIENT_CALLBACK);
    expect(walk.clientRedirect.searchParams.get('error')).toBe('access_denied');
    expect(walk.clientRedirect.searchParams.get('state')).toBe('deny-state');
    expect(walk.clientRedirect.searchParams.get('iss')).toBe(stack.serverUrl);
  });

  it('[CONSENT-CSRF] refuses an approval without, or with a wrong, CSRF token or cookie', async () => {
    const clientId = await registerClient(stack.serverUrl);
    const browser = createForgeBrowser();
    const page = await browser.request(
      authorizeUrl(stack.serverUrl, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: pkce().challenge }),
    );
    const fields = consentFields(await page.text());
    const post = (form: Record<string, string>, b = browser) => b.request(`${stack.serverUrl}/authorize`, { form });
    // A cross-site form has no token and the browser would not even send a Lax cookie on it.
    expect((await post({ request: fields.request, decision: 'approve' })).status).toBe(403);
    // Changed in its first character: the last one of a base64url text may carry bits a decoder ignores, so a
    // tampered tail can decode to the real token (it did, once in about a thousand runs).
    const tamperedCsrf = (fields.csrf[0] === 'A' ? 'B' : 'A') + fields.csrf.slice(1);
    expect((await post({ request: fields.request, csrf: tamperedCsrf, decision: 'approve' })).status).toBe(403);
    // The right token without the cookie it is bound to.
    const stranger = createForgeBrowser();
    const refused = await post({ ...fields, decision: 'approve' }, stranger);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('location')).toBeNull();
    // A token taken from another consent page does not carry over to this request.
    const otherPage = await browser.request(
      authorizeUrl(stack.serverUrl, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: pkce().challenge }),
    );
    const otherFields = consentFields(await otherPage.text());
    expect((await post({ request: fields.request, csrf: otherFields.csrf, decision: 'approve' })).status).toBe(403);
    // The real pair works.
    const accepted = await post({ ...fields, decision: 'approve' });
    expect(accepted.status).toBe(302);
    expect(accepted.headers.get('location')).toContain('/oauth/authorize');
  });

  it('[STATE-REPLAY] a replayed forge callback is refused and goes nowhere', async () => {
    const { walk } = await completeFlow(stack);
    const replay = await fetch(walk.callback ?? '', { redirect: 'manual' });
    expect(replay.status).toBe(400);
    expect(replay.headers.get('location')).toBeNull();
    expect(await replay.text()).toContain('already completed or has expired');
  });

  it('[CODE-ONCE] [CODE-EXPIRY] a proxy code works once and only within 10 minutes', async () => {
    const run = async () => {
      const clientId = await registerClient(stack.serverUrl);
      const { verifier, challenge } = pkce();
      const walk = await walkSignIn(
        authorizeUrl(stack.serverUrl, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: challenge }),
        user(),
      );
      const form = {
        grant_type: 'authorization_code',
        code: walk.clientRedirect.searchParams.get('code') ?? '',
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: CLIENT_CALLBACK,
      };
      return form;
    };
    const once = await run();
    expect((await token(stack.serverUrl, once)).status).toBe(200);
    const replay = await token(stack.serverUrl, once);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    const almost = await run();
    stack.clock.advance(10 * 60_000 - 1000);
    expect((await token(stack.serverUrl, almost)).status).toBe(200);
    const late = await run();
    stack.clock.advance(10 * 60_000);
    const expired = await token(stack.serverUrl, late);
    expect(expired.status).toBe(400);
    expect(expired.body).toEqual({
      error: 'invalid_grant',
      error_description: 'The authorization code is invalid, expired or already used.',
    });
    expect(expired.headers.get('cache-control')).toBe('no-store');
  });

  it('[CODE-BINDING] [AUTH-VERIFIER-REQUIRED] a proxy code is bound to its client, callback and challenge', async () => {
    const attempt = async (change: Record<string, string | undefined>) => {
      const clientId = await registerClient(stack.serverUrl);
      const { verifier, challenge } = pkce();
      const walk = await walkSignIn(
        authorizeUrl(stack.serverUrl, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: challenge }),
        user(),
      );
      return token(stack.serverUrl, {
        grant_type: 'authorization_code',
        code: walk.clientRedirect.searchParams.get('code') ?? '',
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: CLIENT_CALLBACK,
        ...change,
      });
    };
    const otherClient = await registerClient(stack.serverUrl);
    expect((await attempt({ client_id: otherClient })).body.error).toBe('invalid_grant');
    expect((await attempt({ redirect_uri: 'http://127.0.0.1:45679/callback' })).body.error).toBe('invalid_grant');
    expect((await attempt({ code_verifier: pkce().verifier })).body.error).toBe('invalid_grant');
    const missing = await attempt({ code_verifier: undefined });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('invalid_request');
    expect((await attempt({ code_verifier: 'short' })).body.error).toBe('invalid_grant');
  });

  it('[AUTHZ-PKCE-S256] refuses plain PKCE and a missing challenge (downgrade)', async () => {
    const clientId = await registerClient(stack.serverUrl);
    const { verifier, challenge } = pkce();
    for (const params of [
      { code_challenge: verifier, code_challenge_method: 'plain' },
      { code_challenge: challenge, code_challenge_method: undefined },
      { code_challenge: undefined, code_challenge_method: undefined },
      { code_challenge: 'too-short', code_challenge_method: 'S256' },
    ]) {
      const url = new URL(authorizeUrl(stack.serverUrl, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, state: 'pk' }));
      for (const [k, v] of Object.entries(params)) {
        if (v === undefined) url.searchParams.delete(k);
        else url.searchParams.set(k, v);
      }
      const response = await fetch(url, { redirect: 'manual' });
      expect(response.status, JSON.stringify(params)).toBe(302);
      const location = new URL(response.headers.get('location') ?? '');
      expect(location.origin + location.pathname).toBe(CLIENT_CALLBACK);
      expect(location.searchParams.get('error')).toBe('invalid_request');
      expect(location.searchParams.get('state')).toBe('pk');
    }
  });

  it('[AUTHZ-REGISTERED] an unregistered callback gets an error page, never a redirect; only the loopback port may vary', async () => {
    const clientId = await registerClient(stack.serverUrl);
    for (const redirect of ['http://127.0.0.1:45678/other', 'https://attacker.example/cb', 'http://localhost:45678/callback']) {
      const response = await fetch(
        authorizeUrl(stack.serverUrl, { client_id: clientId, redirect_uri: redirect, code_challenge: pkce().challenge }),
        { redirect: 'manual' },
      );
      expect(response.status, redirect).toBe(400);
      expect(response.headers.get('location')).toBeNull();
    }
    const unknown = await fetch(
      authorizeUrl(stack.serverUrl, {
        client_id: 'a1b2c3d4-0000-4000-8000-000000000000',
        redirect_uri: CLIENT_CALLBACK,
        code_challenge: pkce().challenge,
      }),
      { redirect: 'manual' },
    );
    expect(unknown.status).toBe(400);
    const otherPort = await fetch(
      authorizeUrl(stack.serverUrl, {
        client_id: clientId,
        redirect_uri: 'http://127.0.0.1:50000/callback',
        code_challenge: pkce().challenge,
      }),
    );
    expect(otherPort.status).toBe(200);
    expect(await otherPort.text()).toContain('Allow access');
  });

  it('[REG-ALLOWLIST] [REG-UNSAFE] an attacker redirect URI is refused at /register, with the URL in the log only', async () => {
    for (const uri of [
      'https://attacker.example/steal',
      'http://localhost@attacker.example/cb',
      'javascript:alert(1)',
      'https://claude.ai/api/mcp/auth_callback#x',
    ]) {
      const answer = await register(stack.serverUrl, { redirect_uris: ['http://127.0.0.1:1/cb', uri] });
      expect(answer.status, uri).toBe(400);
      expect(answer.body.error).toBe('invalid_redirect_uri');
      expect(JSON.stringify(answer.body)).not.toContain('attacker');
    }
    expect(stack.logs.text()).toContain('https://attacker.example/steal');
    expect(stack.logs.text()).toMatch(/invalid_redirect_uri/);
    const noUris = await register(stack.serverUrl, { client_name: 'x' });
    expect(noUris.body.error).toBe('invalid_redirect_uri');
  });

  it('[REG-VIRTUAL-ID] [AUTH-PUBLIC-CLIENT] registers public clients under a UUID, never with a secret', async () => {
    const answer = await register(stack.serverUrl, {
      redirect_uris: [CLIENT_CALLBACK],
      client_name: 'Tool',
      token_endpoint_auth_method: 'client_secret_post',
    });
    expect(answer.status).toBe(201);
    expect(answer.body.client_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(answer.body.token_endpoint_auth_method).toBe('none');
    expect(answer.body).not.toHaveProperty('client_secret');
    expect(stack.forge.app.confidential).toBe(false);
  });

  it('[FORGE-ERROR-PASSBACK] a refusal at the forge and other forge errors go back to the client', async () => {
    const clientId = await registerClient(stack.serverUrl);
    const denied = await walkSignIn(
      authorizeUrl(stack.serverUrl, {
        client_id: clientId,
        redirect_uri: CLIENT_CALLBACK,
        code_challenge: pkce().challenge,
        state: 'st-1',
      }),
      user(),
      { forgeDecision: 'deny' },
    );
    expect(denied.clientRedirect.searchParams.get('error')).toBe('access_denied');
    expect(denied.clientRedirect.searchParams.get('state')).toBe('st-1');
    expect(denied.clientRedirect.searchParams.get('iss')).toBe(stack.serverUrl);
    // A forge error other than a refusal, and a forge code the forge will not exchange: server_error.
    for (const query of [(s: string) => `error=invalid_scope&state=${s}`, (s: string) => `code=not-a-real-code&state=${s}`]) {
      const browser = createForgeBrowser();
      const forgeAuthorize = await approveConsent(browser, stack.serverUrl, {
        client_id: clientId,
        redirect_uri: CLIENT_CALLBACK,
        code_challenge: pkce().challenge,
        state: 'st-2',
      });
      const proxyState = forgeAuthorize.searchParams.get('state') ?? '';
      const back = await fetch(`${stack.serverUrl}/callback?${query(encodeURIComponent(proxyState))}`, { redirect: 'manual' });
      expect(back.status).toBe(302);
      const location = new URL(back.headers.get('location') ?? '');
      expect(location.searchParams.get('error')).toBe('server_error');
      expect(location.searchParams.get('state')).toBe('st-2');
    }
  });

  it('[TOKEN-ERRORS] speaks RFC 6749 with no-store on every error', async () => {
    const unsupported = await token(stack.serverUrl, { grant_type: 'password', username: 'a', password: 'b' });
    expect(unsupported.status).toBe(400);
    expect(unsupported.body.error).toBe('unsupported_grant_type');
    expect(unsupported.headers.get('cache-control')).toBe('no-store');
    const noCode = await token(stack.serverUrl, { grant_type: 'authorization_code' });
    expect(noCode.body.error).toBe('invalid_request');
    const malformed = await fetch(`${stack.serverUrl}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ error: 'invalid_request', error_description: 'Malformed request.' });
    expect(malformed.headers.get('cache-control')).toBe('no-store');
  });

  it('[TOKEN-REFRESH] [TOKEN-REVOKE] refresh and revoke go to the forge', async () => {
    const { tokens } = await completeFlow(stack);
    const refreshed = await token(stack.serverUrl, {
      grant_type: 'refresh_token',
      refresh_token: String(tokens.refresh_token),
      client_id: 'any',
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.access_token).not.toBe(tokens.access_token);
    expect(refreshed.headers.get('cache-control')).toBe('no-store');
    // The forge rotated the pair: the old refresh token is spent.
    const reused = await token(stack.serverUrl, { grant_type: 'refresh_token', refresh_token: String(tokens.refresh_token) });
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    const bearer = String(refreshed.body.access_token);
    expect((await callTool(stack.serverUrl, bearer, 'get_current_user')).isError).toBeFalsy();
    const revokesBefore = stack.forge.forge.counters.revoke;
    const revoked = await fetch(`${stack.serverUrl}/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ token: bearer, token_type_hint: 'access_token' }),
    });
    expect(revoked.status).toBe(200);
    expect(stack.forge.forge.counters.revoke).toBe(revokesBefore + 1);
  });

  it('[VALIDATE-DROP-401] a token revoked behind our back passes from the cache until the forge answers 401, then is dropped', async () => {
    const { tokens } = await completeFlow(stack);
    const bearer = String(tokens.access_token);
    expect((await callTool(stack.serverUrl, bearer, 'get_current_user')).isError).toBeFalsy();
    // Revoked at the forge directly (the user removed the application there), not through our /revoke.
    const atForge = await fetch(`${stack.forge.forge.url}/oauth/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ token: bearer, client_id: stack.forge.app.uid }),
    });
    expect(atForge.status).toBe(200);
    // Still cached as valid: the tool call reaches the forge, which answers 401; the entry is dropped, and the call
    // itself is answered 401 invalid_token so the client re-authenticates (MCP-FORGE-401).
    const after = await postMcp(stack.serverUrl, bearer, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'get_current_user', arguments: {} },
    });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const next = await postMcp(stack.serverUrl, bearer, INITIALIZE);
    expect(next.status).toBe(401);
    expect(next.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('[REVOKE-FORGET] regression: /revoke left the token in the /mcp validation cache; now it is refused at once', async () => {
    const { tokens } = await completeFlow(stack);
    const bearer = String(tokens.access_token);
    expect((await postMcp(stack.serverUrl, bearer, INITIALIZE)).status).toBe(200);
    const infoBefore = stack.forge.forge.counters.tokenInfo;
    const revoked = await fetch(`${stack.serverUrl}/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ token: bearer, token_type_hint: 'access_token' }),
    });
    expect(revoked.status).toBe(200);
    // Within the 60 s the cached validation would have lasted: refused without asking the forge again.
    const next = await postMcp(stack.serverUrl, bearer, INITIALIZE);
    expect(next.status).toBe(401);
    expect(next.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(stack.forge.forge.counters.tokenInfo).toBe(infoBefore);
  });

  it('[REVOKE-FORGET] regression: after a refresh the old access token passed /mcp from the cache; now it is dropped', async () => {
    const { tokens } = await completeFlow(stack);
    const oldBearer = String(tokens.access_token);
    expect((await postMcp(stack.serverUrl, oldBearer, INITIALIZE)).status).toBe(200);
    const refreshed = await token(stack.serverUrl, { grant_type: 'refresh_token', refresh_token: String(tokens.refresh_token) });
    expect(refreshed.status).toBe(200);
    // The forge invalidated the old pair on refresh; the server knew which access token the refresh token came with.
    expect((await postMcp(stack.serverUrl, oldBearer, INITIALIZE)).status).toBe(401);
    expect((await postMcp(stack.serverUrl, String(refreshed.body.access_token), INITIALIZE)).status).toBe(200);
    // A refresh token revoked through /revoke takes its access token out of the cache too (the forge drops the pair).
    const newBearer = String(refreshed.body.access_token);
    const revoked = await fetch(`${stack.serverUrl}/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ token: String(refreshed.body.refresh_token), token_type_hint: 'refresh_token' }),
    });
    expect(revoked.status).toBe(200);
    expect((await postMcp(stack.serverUrl, newBearer, INITIALIZE)).status).toBe(401);
  });

  it('[MCP-401] [AUTH-BEARER] answers 401 with the challenge real clients follow', async () => {
    const missing = await postMcp(stack.serverUrl, undefined, INITIALIZE);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${stack.serverUrl}/.well-known/oauth-protected-resource/mcp", scope="api read_user"`,
    );
    const bad = await postMcp(stack.serverUrl, 'not-a-token', INITIALIZE);
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${stack.serverUrl}/.well-known/oauth-protected-resource/mcp", scope="api read_user", error="invalid_token"`,
    );
    const basic = await fetch(`${stack.serverUrl}/mcp`, {
      method: 'POST',
      headers: { authorization: 'Basic abc', 'content-type': 'application/json' },
      body: JSON.stringify(INITIALIZE),
    });
    expect(basic.status).toBe(401);
  });

  it('[MCP-EXPIRED-401] a token past its 2 hours is 401, not 400', async () => {
    const { tokens } = await completeFlow(stack);
    const bearer = String(tokens.access_token);
    expect((await postMcp(stack.serverUrl, bearer, INITIALIZE)).status).toBe(200);
    stack.forge.clock.advance(7200 * 1000 + 1000);
    stack.clock.advance(61_000);
    const expired = await postMcp(stack.serverUrl, bearer, INITIALIZE);
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('resource_metadata=');
  });

  it('[STATEFUL-OTHER-REPLICA] in stateful mode a callback reaching another replica fails', async () => {
    const other = await startStack({ mode: 'callback_proxy', forge: stack.forge });
    try {
      const clientId = await registerClient(stack.serverUrl);
      const browser = createForgeBrowser();
      const forgeAuthorize = await approveConsent(browser, stack.serverUrl, {
        client_id: clientId,
        redirect_uri: CLIENT_CALLBACK,
        code_challenge: pkce().challenge,
      });
      const callback = new URL(await browser.authorize(forgeAuthorize.href, user()));
      const elsewhere = await fetch(`${other.url}/callback${callback.search}`, { redirect: 'manual' });
      expect(elsewhere.status).toBe(400);
      // The registration is unknown over there too.
      const unknown = await fetch(
        authorizeUrl(other.serverUrl, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: pkce().challenge }),
        { redirect: 'manual' },
      );
      expect(unknown.status).toBe(400);
    } finally {
      await other.close();
    }
  });

  it('[ERRORS-GENERIC] [NO-SECRETS-LOGGED] never logs a token, code, verifier, state, password or secret', async () => {
    const { tokens, walk, verifier } = await completeFlow(stack, { state: 'client-state-secret-xyz' });
    await callTool(stack.serverUrl, String(tokens.access_token), 'get_current_user');
    await token(stack.serverUrl, { grant_type: 'refresh_token', refresh_token: String(tokens.refresh_token) });
    const callback = new URL(walk.callback ?? '');
    const secrets = [
      String(tokens.access_token),
      String(tokens.refresh_token),
      walk.clientRedirect.searchParams.get('code') ?? 'x',
      callback.searchParams.get('code') ?? 'x',
      callback.searchParams.get('state') ?? 'x',
      'client-state-secret-xyz',
      verifier,
      stack.forge.user.password,
      stack.settings.localSecret.toString('base64'),
    ];
    const text = stack.logs.text();
    expect(text.length).toBeGreaterThan(1000);
    for (const secret of secrets) expect(text).not.toContain(secret);
    // Generic client messages: no forge details in what the client sees.
    const failed = await token(stack.serverUrl, { grant_type: 'refresh_token', refresh_token: 'bogus' });
    expect(failed.body).toEqual({ error: 'invalid_grant', error_description: 'The forge refused the grant.' });
    expect(text).toMatch(/forge refused a token request/);
  });
});
