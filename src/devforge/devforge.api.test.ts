import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { obtainTokens, startFixture } from './devforge.testkit.ts';
import type { ForgeFixture, TokenBody } from './devforge.testkit.ts';

let fx: ForgeFixture;
let alice: TokenBody;
beforeAll(async () => {
  fx = await startFixture();
  alice = await obtainTokens(fx, { scope: 'api read_user' });
});
afterAll(async () => {
  await fx.forge.close();
});

const api = (path: string, init: { token?: string; headers?: Record<string, string>; method?: string; body?: unknown } = {}) =>
  fetch(`${fx.forge.url}/api/v4${path}`, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...init.headers,
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });

type Json = Record<string, unknown>;

describe('authentication', () => {
  it('GET /user with a bearer returns the token owner', async () => {
    const res = await api('/user', { token: alice.access_token });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ id: fx.alice.id, username: 'alice', name: 'Alice Example', email: 'alice@example.test', state: 'active' });
    expect(body.web_url).toBe(`${fx.forge.url}/alice`);
  });

  it('no token or an unknown token is 401 {"message":"401 Unauthorized"}', async () => {
    for (const res of [
      await api('/user'),
      await api('/user', { token: 'a'.repeat(64) }),
      await api('/projects', { token: 'a'.repeat(64) }),
      await api('/user', { headers: { 'private-token': 'glpat-unknownunknownunk' } }),
    ]) {
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ message: '401 Unauthorized' });
    }
  });

  it('an expired token gets GitLab API guard answer (invalid_token, WWW-Authenticate)', async () => {
    const pair = await obtainTokens(fx);
    fx.advance(7200_001);
    const res = await api('/user', { token: pair.access_token });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      error: 'invalid_token',
      error_description: 'Token is expired. You can either do re-authorization or token refresh.',
    });
    expect(res.headers.get('www-authenticate')).toBe(
      'Bearer realm="Protected by OAuth 2.0", error="invalid_token", error_description="Token is expired. You can either do re-authorization or token refresh."',
    );
    alice = await obtainTokens(fx, { scope: 'api read_user' });
  });

  it('a revoked token is told so', async () => {
    const pair = await obtainTokens(fx);
    await fetch(`${fx.forge.url}/oauth/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ client_id: fx.publicApp.uid, token: pair.access_token }),
    });
    const res = await api('/user', { token: pair.access_token });
    expect(res.status).toBe(401);
    expect(((await res.json()) as Json).error_description).toBe('Token was revoked. You have to re-authorize from the user.');
  });

  it('PRIVATE-TOKEN takes personal access tokens (also as bearer), not OAuth tokens, like GitLab', async () => {
    const pat = fx.forge.createPersonalAccessToken('alice', ['read_api']);
    expect(pat).toMatch(/^glpat-[A-Za-z0-9_-]{20}$/);
    expect((await api('/projects', { headers: { 'private-token': pat } })).status).toBe(200);
    expect((await api(`/projects?private_token=${pat}`)).status).toBe(200);
    expect((await api('/projects', { token: pat })).status).toBe(200);
    const oauthInPrivateToken = await api('/user', { headers: { 'private-token': alice.access_token } });
    expect(oauthInPrivateToken.status).toBe(401);
    fx.forge.revokeAllTokensOf('alice');
    expect((await api('/projects', { headers: { 'private-token': pat } })).status).toBe(401);
    alice = await obtainTokens(fx, { scope: 'api read_user' });
  });
});

describe('scopes', () => {
  it('a read_api token can read but writing is 403 insufficient_scope', async () => {
    const pat = fx.forge.createPersonalAccessToken('alice', ['read_api']);
    const res = await api('/projects/alice%2Fhello-forge/issues', {
      headers: { 'private-token': pat },
      method: 'POST',
      body: { title: 'x' },
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      error: 'insufficient_scope',
      error_description: 'The request requires higher privileges than provided by the access token.',
      scope: 'api',
    });
    expect((await api('/projects/alice%2Fhello-forge/issues', { headers: { 'private-token': pat } })).status).toBe(200);
  });

  it('a read_user token reads /user but not projects', async () => {
    const pair = await obtainTokens(fx, { scope: 'read_user' });
    expect((await api('/user', { token: pair.access_token })).status).toBe(200);
    const res = await api('/projects', { token: pair.access_token });
    expect(res.status).toBe(403);
    expect(((await res.json()) as Json).scope).toBe('api read_api');
  });
});

describe('projects', () => {
  it('lists visible projects; membership=true keeps the caller own ones; pagination headers and link', async () => {
    const all = await api('/projects', { token: alice.access_token });
    const names = ((await all.json()) as Json[]).map((p) => p.path_with_namespace);
    // Alice sees her two, Bob's public handbook and the public group project, not Bob's private project.
    expect(names).toEqual(expect.arrayContaining(['alice/hello-forge', 'alice/handbook', 'bob/handbook', 'forge-samples/public-tools']));
    expect(names).not.toContain('bob/hello-forge');

    // Her two and the demo group's project (every seeded user is a member of it).
    const mine = await api('/projects?membership=true&per_page=2', { token: alice.access_token });
    expect(mine.status).toBe(200);
    expect(mine.headers.get('x-total')).toBe('3');
    expect(mine.headers.get('x-total-pages')).toBe('2');
    expect(mine.headers.get('x-page')).toBe('1');
    expect(mine.headers.get('x-per-page')).toBe('2');
    expect(mine.headers.get('x-next-page')).toBe('2');
    expect(mine.headers.get('x-prev-page')).toBe('');
    const link = mine.headers.get('link') ?? '';
    expect(link).toBe(
      [
        `<${fx.forge.url}/api/v4/projects?membership=true&per_page=2&page=2>; rel="next"`,
        `<${fx.forge.url}/api/v4/projects?membership=true&per_page=2&page=1>; rel="first"`,
        `<${fx.forge.url}/api/v4/projects?membership=true&per_page=2&page=2>; rel="last"`,
      ].join(', '),
    );
    const page2 = await api('/projects?membership=true&per_page=2&page=2', { token: alice.access_token });
    expect(page2.headers.get('x-next-page')).toBe('');
    expect(page2.headers.get('x-prev-page')).toBe('1');
    const both = [...((await mine.json()) as Json[]), ...((await page2.json()) as Json[])].map((p) => p.path_with_namespace);
    expect(both.sort()).toEqual(['alice/handbook', 'alice/hello-forge', 'demo/webshop']);
  });

  it('search matches name, path or description; anonymous callers see public projects only', async () => {
    const found = (await (await api('/projects?search=HELLO', { token: alice.access_token })).json()) as Json[];
    expect(found.map((p) => p.path_with_namespace)).toEqual(['alice/hello-forge']);
    const anonymous = (await (await api('/projects')).json()) as Json[];
    expect(anonymous.every((p) => p.visibility === 'public')).toBe(true);
    expect(anonymous.length).toBe(3);
    const invalid = await api('/projects?membership=maybe', { token: alice.access_token });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toEqual({ error: 'membership is invalid' });
  });

  it('GET /projects/:id by numeric id or URL-encoded path; unknown or private is 404 Project Not Found', async () => {
    const byPath = await api('/projects/alice%2Fhello-forge', { token: alice.access_token });
    expect(byPath.status).toBe(200);
    const project = (await byPath.json()) as Json;
    expect(project).toMatchObject({
      name: 'hello-forge',
      path_with_namespace: 'alice/hello-forge',
      visibility: 'private',
      default_branch: 'main',
      open_issues_count: 2,
      web_url: `${fx.forge.url}/alice/hello-forge`,
    });
    const byId = await api(`/projects/${String(project.id)}`, { token: alice.access_token });
    expect(((await byId.json()) as Json).path_with_namespace).toBe('alice/hello-forge');
    for (const res of [
      await api('/projects/99999', { token: alice.access_token }),
      await api('/projects/bob%2Fhello-forge', { token: alice.access_token }),
      await api('/projects/alice%2Fhello-forge'),
    ]) {
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ message: '404 Project Not Found' });
    }
    const route = await api('/nothing-here', { token: alice.access_token });
    expect(route.status).toBe(404);
    expect(await route.json()).toEqual({ error: '404 Not Found' });
  });
});

describe('issues and merge requests', () => {
  it('lists issues with state filter and pagination', async () => {
    const all = await api('/projects/alice%2Fhello-forge/issues', { token: alice.access_token });
    expect(all.headers.get('x-total')).toBe('3');
    const opened = (await (await api('/projects/alice%2Fhello-forge/issues?state=opened', { token: alice.access_token })).json()) as Json[];
    expect(opened.map((i) => i.state)).toEqual(['opened', 'opened']);
    expect(opened[0]).toMatchObject({ project_id: expect.any(Number) as unknown, type: 'ISSUE', author: { username: 'alice' } });
    const bad = await api('/projects/alice%2Fhello-forge/issues?state=nope', { token: alice.access_token });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'state does not have a valid value' });
  });

  it('creates an issue (201) with title and description, visible afterwards', async () => {
    const res = await api('/projects/alice%2Fhello-forge/issues', {
      token: alice.access_token,
      method: 'POST',
      body: { title: 'From the MCP server', description: 'Created in a test' },
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as Json;
    expect(created).toMatchObject({ iid: 4, title: 'From the MCP server', description: 'Created in a test', state: 'opened' });
    expect(created.web_url).toBe(`${fx.forge.url}/alice/hello-forge/-/issues/4`);
    const shown = await api('/projects/alice%2Fhello-forge/issues/4', { token: alice.access_token });
    expect(((await shown.json()) as Json).title).toBe('From the MCP server');
    const form = await fetch(`${fx.forge.url}/api/v4/projects/alice%2Fhello-forge/issues`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.access_token}` },
      body: new URLSearchParams({ title: 'Form encoded', labels: 'bug, ui' }),
    });
    expect(form.status).toBe(201);
    expect(((await form.json()) as Json).labels).toEqual(['bug', 'ui']);
  });

  it('refuses an issue without title (400), anonymously (401) and on an invisible project (404)', async () => {
    const noTitle = await api('/projects/alice%2Fhello-forge/issues', {
      token: alice.access_token,
      method: 'POST',
      body: { description: 'x' },
    });
    expect(noTitle.status).toBe(400);
    expect(await noTitle.json()).toEqual({ error: 'title is missing' });
    const anonymous = await api('/projects/alice%2Fhandbook/issues', { method: 'POST', body: { title: 'x' } });
    expect(anonymous.status).toBe(401);
    const invisible = await api('/projects/bob%2Fhello-forge/issues', { token: alice.access_token, method: 'POST', body: { title: 'x' } });
    expect(invisible.status).toBe(404);
    const missing = await api('/projects/alice%2Fhello-forge/issues/999', { token: alice.access_token });
    expect(await missing.json()).toEqual({ message: '404 Issue Not Found' });
  });

  it('lists merge requests with a state filter', async () => {
    const all = (await (await api('/projects/alice%2Fhello-forge/merge_requests', { token: alice.access_token })).json()) as Json[];
    expect(all.map((m) => m.state).sort()).toEqual(['merged', 'opened']);
    const merged = (await (
      await api('/projects/alice%2Fhello-forge/merge_requests?state=merged', { token: alice.access_token })
    ).json()) as Json[];
    expect(merged).toHaveLength(1);
    expect(merged[0]).toMatchObject({ title: 'Initial import', target_branch: 'main', references: { full: 'alice/hello-forge!2' } });
    const one = await api('/projects/alice%2Fhello-forge/merge_requests/1', { token: alice.access_token });
    expect(((await one.json()) as Json).source_branch).toBe('readme');
  });
});

describe('CORS', () => {
  it('answers preflights and exposes pagination headers on /api/v4', async () => {
    const preflight = await fetch(`${fx.forge.url}/api/v4/projects`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    expect(preflight.status).toBe(200);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    const res = await api('/projects', { token: alice.access_token, headers: { origin: 'https://app.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toContain('x-total');
    const token = await fetch(`${fx.forge.url}/oauth/token`, { method: 'OPTIONS', headers: { origin: 'https://app.example' } });
    expect(token.headers.get('access-control-allow-origin')).toBe('*');
  });
});
