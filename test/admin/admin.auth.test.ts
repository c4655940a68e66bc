/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- response bodies are untyped JSON (Reply.body); the assertions pin their shape */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../support/databases.ts';
import { addHuman, openHarness, P, TEST_CATALOG, type Harness } from './admin-harness.ts';

/** Every admin route with a harmless request (bodies that would succeed for an administrator). */
const ROUTES: [string, string, unknown][] = [
  ['GET', '/api/v1/admin/models', undefined],
  ['GET', '/api/v1/admin/model_providers', undefined],
  ['GET', P('alpha'), undefined],
  ['PUT', P('local', '/lane'), { command: { enabled: true } }],
  ['PUT', P('alpha', '/model_visibility'), { command: { model: 'alpha/a-1', visible: true } }],
  ['PUT', P('alpha', '/model_availability'), { command: { model: 'alpha/a-1', available: true, expected_lock_version: null } }],
  ['PUT', P('alpha', '/api_key'), { command: { api_key: 'sk-auth-test' } }],
  ['DELETE', P('alpha', '/api_key'), undefined],
  ['GET', '/api/v1/admin/account/cost_unit', undefined],
  ['PUT', '/api/v1/admin/account/cost_unit', { command: { cost_unit: 'USD' } }],
];

describe.each(dialects)('admin authentication on %s', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness(dialect, { catalog: TEST_CATALOG });
  });
  afterAll(async () => h.close());

  it('[ADM-AUTH-1] accepts API Session bearers and platform-plane tokens of owners and admins', async () => {
    const admin = await addHuman(h, 'admin');
    for (const token of [h.platform.owner.session_bearer, h.platform.owner.platform_token, admin.session, admin.platform]) {
      expect((await h.call('GET', '/api/v1/admin/models', { token })).status).toBe(200);
      expect(
        (
          await h.call('PUT', P('local', '/model_visibility'), {
            token,
            body: { command: { model: 'local/l-1', visible: true, expected_lock_version: 0 } },
          })
        ).status,
      ).not.toBe(401);
    }
    const lane = await h.call('PUT', P('alpha', '/lane'), { token: admin.session, body: { command: { enabled: true } } });
    expect(lane.status).toBe(200);
  });

  it("[ADM-AUTH-2] refuses a member's session and platform token with 403 administrator_required on every route", async () => {
    const member = await addHuman(h, 'member');
    for (const token of [member.session, member.platform]) {
      for (const [method, path, body] of ROUTES) {
        const r = await h.call(method, path, { token, ...(body ? { body } : {}) });
        expect(r.status, `${method} ${path}`).toBe(403);
        expect(r.body).toEqual({ error: { code: 'administrator_required', message: expect.any(String) } });
      }
    }
  });

  it('[ADM-AUTH-3] refuses member-plane and executor tokens with 401 even for owners and admins', async () => {
    const admin = await addHuman(h, 'admin');
    const ownerMember = await h.platform.ctx.identity.createToken({ humanId: h.platform.owner.human_id, plane: 'member' });
    const ownerExecutor = await h.platform.ctx.identity.createToken({ humanId: h.platform.owner.human_id, plane: 'executor' });
    for (const token of [admin.member, admin.executor, ownerMember.token, ownerExecutor.token]) {
      for (const [method, path, body] of ROUTES) {
        const r = await h.call(method, path, { token, ...(body ? { body } : {}) });
        expect(r.status, `${method} ${path}`).toBe(401);
        expect(r.body.error.code).toBe('unauthorized');
      }
    }
  });

  it('[ADM-AUTH-6] refuses missing, unknown and malformed credentials with 401 before reading the body', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer pplat_unknown' },
      { authorization: 'Basic dXNlcjpwYXNz' },
      { authorization: 'Bearer' },
    ] as Record<string, string>[]) {
      for (const [method, path] of ROUTES) {
        const r = await h.call(method, path, { headers, ...(method === 'GET' || method === 'DELETE' ? {} : { rawBody: '{not json' }) });
        expect(r.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(r.body.error.code).toBe('unauthorized');
      }
    }
  });

  it('[ADM-AUTH-4] applies revocation, deactivation and demotion to the next request', async () => {
    const identity = h.platform.ctx.identity;
    const revoked = await addHuman(h, 'admin');
    expect((await h.call('GET', '/api/v1/admin/models', { token: revoked.session })).status).toBe(200);
    await identity.revoke(revoked.sessionId);
    expect((await h.call('GET', '/api/v1/admin/models', { token: revoked.session })).status).toBe(401);
    expect((await h.call('GET', '/api/v1/admin/models', { token: revoked.platform })).status).toBe(200);
    await identity.revoke(revoked.platformId);
    expect((await h.call('GET', '/api/v1/admin/models', { token: revoked.platform })).status).toBe(401);

    const demoted = await addHuman(h, 'admin');
    expect((await h.call('GET', '/api/v1/admin/model_providers', { token: demoted.platform })).status).toBe(200);
    await identity.setRole(demoted.humanId, 'member');
    expect((await h.call('GET', '/api/v1/admin/model_providers', { token: demoted.platform })).status).toBe(403);

    const removed = await addHuman(h, 'admin');
    await identity.deactivate(removed.humanId);
    expect((await h.call('GET', '/api/v1/admin/model_providers', { token: removed.session })).status).toBe(401);
  });

  it('[ADM-AUTH-5] lets the session cookie read (GET, HEAD) but not write, and never falls back from a bad Authorization', async () => {
    const admin = await addHuman(h, 'admin');
    const cookie = admin.session;
    expect((await h.call('GET', '/api/v1/admin/models', { cookie })).status).toBe(200);
    const head = await h.call('HEAD', '/api/v1/admin/model_providers', { cookie });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    for (const [method, path, body] of ROUTES.filter(([m]) => m !== 'GET')) {
      const r = await h.call(method, path, { cookie, ...(body ? { body } : {}) });
      expect(r.status, `${method} ${path}`).toBe(401);
    }
    // An Authorization header is the only credential considered when present.
    for (const authorization of ['Bearer pplat_garbage', `Bearer ${admin.member}`, `Bearer ${admin.executor}`, 'Token x']) {
      const r = await h.call('GET', '/api/v1/admin/models', { cookie, headers: { authorization } });
      expect(r.status, authorization).toBe(401);
    }
    // A cookie carries session bearers only, not platform tokens.
    expect((await h.call('GET', '/api/v1/admin/models', { cookie: admin.platform })).status).toBe(401);
  });
});
