import { afterEach, describe, expect, it } from 'vitest';
import { credentialsOf } from '../../src/core/identity/sessions.routes.ts';
import { requireAdministrator, requireCapability, requireMemberPlane } from '../../src/core/identity/auth.ts';
import { dialects } from '../support/databases.ts';
import { buildTestRestApp, openTestPlatform, type TestPlatform } from '../support/platform.ts';

/**
 * The REST listener over real HTTP: sessions, the cookie rule, each token plane, revocation and demotion on the
 * next request, and the error envelope. Probe routes exercise each auth policy exactly as services use them.
 */
describe.each(dialects)('REST foundation on %s', (dialect) => {
  let platform: TestPlatform | undefined;
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    await platform?.close();
    platform = undefined;
    close = undefined;
  });

  async function start() {
    platform = await openTestPlatform(dialect, { env: { PLATFORM_BODY_LIMIT_BYTES: '4096' } });
    const p = platform;
    const app = await buildTestRestApp(p);
    app.get('/probe/admin', async (req) => ({
      human: requireAdministrator(await p.ctx.auth.authenticate(credentialsOf(req)), req.method).humanId,
    }));
    app.put('/probe/admin', async (req) => ({
      human: requireAdministrator(await p.ctx.auth.authenticate(credentialsOf(req)), req.method).humanId,
    }));
    app.get('/probe/member', async (req) => ({ plane: requireMemberPlane(await p.ctx.auth.authenticate(credentialsOf(req))).plane }));
    app.get('/probe/osv', async (req) => ({
      plane: requireCapability(await p.ctx.auth.authenticate(credentialsOf(req)), 'CAP_PLATFORM_OSV_READ').plane,
    }));
    app.post('/probe/echo', async (req) => ({ body: req.body }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    close = () => app.close();
    const base = `http://127.0.0.1:${address.port}`;
    const call = (path: string, init: RequestInit & { bearer?: string; cookie?: string } = {}) => {
      const headers = new Headers(init.headers);
      if (init.bearer) headers.set('authorization', `Bearer ${init.bearer}`);
      if (init.cookie) headers.set('cookie', init.cookie);
      return fetch(base + path, { ...init, headers });
    };
    return { p, call };
  }

  it('creates a session from email and password, with a bearer and an HttpOnly SameSite=Lax cookie', async () => {
    const { p, call } = await start();
    const res = await call('/api/v1/sessions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: p.owner.email, password: p.owner.password }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const body = (await res.json()) as { session: { token: string; human: { role: string } } };
    expect(body.session.token).toMatch(/^pses_/);
    expect(body.session.human.role).toBe('owner');
    const setCookie = res.headers.get('set-cookie') ?? '';
    expect(setCookie).toContain(`platform_session=${body.session.token}`);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).not.toMatch(/Secure/i);

    const cookie = `platform_session=${body.session.token}`;
    expect((await call('/probe/admin', { cookie })).status).toBe(200);
    expect((await call('/probe/admin', { method: 'HEAD', cookie })).status).toBe(200);
    const put = await call('/probe/admin', { method: 'PUT', cookie });
    expect(put.status).toBe(401);
    expect(await put.json()).toMatchObject({ error: { code: 'unauthorized' } });
    expect((await call('/probe/admin', { method: 'PUT', bearer: body.session.token })).status).toBe(200);
    // A wrong header never falls back to a valid cookie.
    expect((await call('/probe/admin', { cookie, headers: { authorization: 'Bearer pses_wrong' } })).status).toBe(401);

    const who = await call('/api/v1/sessions/current', { cookie });
    expect(await who.json()).toMatchObject({ session: { via: 'cookie', human: { email: p.owner.email } } });
    expect((await call('/api/v1/sessions/current', { method: 'DELETE', cookie })).status).toBe(401);
    const del = await call('/api/v1/sessions/current', { method: 'DELETE', bearer: body.session.token });
    expect(del.status).toBe(200);
    expect((await call('/probe/admin', { bearer: body.session.token })).status).toBe(401);
  });

  it('refuses bad sign-ins with the same message and no hint', async () => {
    const { p, call } = await start();
    for (const body of [
      { email: p.owner.email, password: 'not the password' },
      { email: 'nobody@example.test', password: 'whatever' },
    ]) {
      const res = await call('/api/v1/sessions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: { code: 'unauthorized', message: 'invalid email or password' } });
    }
    const missing = await call('/api/v1/sessions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 5 }),
    });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: { code: 'parameter_invalid' } });
  });

  it('accepts each token plane only where it belongs', async () => {
    const { p, call } = await start();
    const member = await p.ctx.identity.createToken({ humanId: p.owner.human_id, plane: 'member' });
    const executor = await p.ctx.identity.createToken({ humanId: p.owner.human_id, plane: 'executor' });
    const osvOnly = await p.ctx.identity.createToken({
      humanId: p.owner.human_id,
      plane: 'platform',
      capabilities: ['CAP_PLATFORM_OSV_READ'],
    });
    const docsOnly = await p.ctx.identity.createToken({
      humanId: p.owner.human_id,
      plane: 'platform',
      capabilities: ['CAP_PLATFORM_DOCUMENTS_LIST'],
    });

    expect((await call('/probe/admin', { bearer: p.owner.platform_token })).status).toBe(200);
    expect((await call('/probe/admin', { bearer: member.token })).status).toBe(401);
    expect((await call('/probe/admin', { bearer: executor.token })).status).toBe(401);
    expect((await call('/probe/member', { bearer: member.token })).status).toBe(200);
    expect((await call('/probe/member', { bearer: executor.token })).status).toBe(200);
    expect((await call('/probe/member', { bearer: p.owner.platform_token })).status).toBe(401);
    expect((await call('/probe/osv', { bearer: osvOnly.token })).status).toBe(200);
    const denied = await call('/probe/osv', { bearer: docsOnly.token });
    expect(denied.status).toBe(403);
    expect(await denied.json()).toMatchObject({ error: { code: 'permission_denied' } });
    expect((await call('/probe/osv', { bearer: p.owner.session_bearer })).status).toBe(401);
    expect((await call('/probe/osv')).status).toBe(401);
  });

  it('applies revocation, demotion and deactivation to the very next request', async () => {
    const { p, call } = await start();
    const admin = await p.ctx.identity.addHuman({ accountId: p.owner.account_id, email: 'admin@example.test', role: 'admin' });
    const token = await p.ctx.identity.createToken({ humanId: admin.human_id, plane: 'platform', capabilities: ['CAP_PLATFORM_OSV_READ'] });
    expect((await call('/probe/admin', { bearer: token.token })).status).toBe(200);
    await p.ctx.identity.setRole(admin.human_id, 'member');
    const demoted = await call('/probe/admin', { bearer: token.token });
    expect(demoted.status).toBe(403);
    expect(await demoted.json()).toMatchObject({ error: { code: 'administrator_required' } });
    await p.ctx.identity.setRole(admin.human_id, 'admin');
    expect((await call('/probe/admin', { bearer: token.token })).status).toBe(200);
    await p.ctx.identity.deactivate(admin.human_id);
    expect((await call('/probe/admin', { bearer: token.token })).status).toBe(401);
    await p.ctx.identity.reactivate(admin.human_id);
    await p.ctx.identity.revoke(token.id);
    expect((await call('/probe/osv', { bearer: token.token })).status).toBe(401);
  });

  it('answers every error in the envelope: malformed JSON, wrong types, huge bodies, 404, 405', async () => {
    const { call } = await start();
    const json = { 'content-type': 'application/json' };
    const malformed = await call('/probe/echo', { method: 'POST', headers: json, body: '{"a":' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ error: { code: 'parameter_invalid', message: 'request body is not valid JSON' } });
    const huge = await call('/probe/echo', { method: 'POST', headers: json, body: JSON.stringify({ a: 'x'.repeat(10_000) }) });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ error: { code: 'payload_too_large' } });
    const media = await call('/probe/echo', { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<a/>' });
    expect(media.status).toBe(415);
    expect(await media.json()).toMatchObject({ error: { code: 'unsupported_media_type' } });
    const missing = await call('/nope');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { code: 'not_found', message: 'no such route' } });
    const method = await call('/api/v1/sessions', { method: 'PATCH' });
    expect(method.status).toBe(405);
    expect(method.headers.get('allow')).toBe('POST');
    expect(await method.json()).toMatchObject({ error: { code: 'method_not_allowed' } });
    const proto = await call('/probe/echo', { method: 'POST', headers: json, body: '{"__proto__":{"polluted":true}}' });
    expect(proto.status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('answers connection-level and pre-routing errors in the envelope, and keeps only well-formed request ids', async () => {
    const { call } = await start();
    const bigHeader = await call('/healthz', { headers: { 'x-big': 'x'.repeat(20_000) } });
    expect(bigHeader.status).toBe(431);
    expect(await bigHeader.json()).toEqual({ error: { code: 'parameter_invalid', message: 'request headers are too large' } });
    const badUrl = await call('/api/v1/%E0%A4%A');
    expect(badUrl.status).toBe(400);
    expect(await badUrl.json()).toMatchObject({ error: { code: 'parameter_invalid' } });
    expect((await call('/healthz', { headers: { 'x-request-id': 'trace-123.abc' } })).headers.get('x-request-id')).toBe('trace-123.abc');
    const forged = (await call('/healthz', { headers: { 'x-request-id': 'evil id\twith spaces' } })).headers.get('x-request-id');
    expect(forged).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('treats an empty Authorization header as present: no fallback to the cookie', async () => {
    const { p, call } = await start();
    const cookie = `platform_session=${p.owner.session_bearer}`;
    expect((await call('/probe/admin', { cookie })).status).toBe(200);
    expect((await call('/probe/admin', { cookie, headers: { authorization: '' } })).status).toBe(401);
  });

  it('serves health and readiness, and keeps secrets out of the logs', async () => {
    const { p, call } = await start();
    expect(await (await call('/healthz')).json()).toEqual({ status: 'ok' });
    expect(await (await call('/readyz')).json()).toEqual({ status: 'ready' });
    await call('/api/v1/sessions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: p.owner.email, password: p.owner.password }),
    });
    await call('/probe/admin?code=abc123secret', { bearer: p.owner.platform_token, cookie: `platform_session=${p.owner.session_bearer}` });
    const logs = p.logs.text();
    expect(logs).toContain('request completed');
    for (const secret of [p.owner.password, p.owner.platform_token, p.owner.session_bearer, 'abc123secret'])
      expect(logs).not.toContain(secret);
  });
});
