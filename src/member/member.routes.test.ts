/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return -- response bodies are untyped JSON (Reply.body); the assertions pin their shape */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addHuman, openHarness, P, TEST_CATALOG, type Harness } from '../../test/admin/admin-harness.ts';
import { dialects } from '../../test/support/databases.ts';

describe.each(dialects)('member model discovery on %s', (dialect) => {
  let h: Harness;
  let member: Awaited<ReturnType<typeof addHuman>>;
  beforeAll(async () => {
    h = await openHarness(dialect, { catalog: TEST_CATALOG });
    member = await addHuman(h, 'member');
  });
  afterAll(async () => h.close());

  const memberRefs = async (token: string, query = '') =>
    (await h.call('GET', `/agent_api/v1/models${query}`, { token })).body.models.map((m: { ref: string }) => m.ref);
  const adminPut = (path: string, command: unknown) => h.call('PUT', path, { token: h.token, body: { command } });

  it('[ADM-MEM-1] serves member-plane and executor tokens; hidden and invalid models are absent', async () => {
    await adminPut(P('alpha', '/api_key'), { api_key: 'sk-member-test' });
    await adminPut(P('alpha', '/model_visibility'), { model: 'alpha/a-1', visible: false, expected_lock_version: 0 });
    await adminPut(P('alpha', '/model_availability'), { model: 'alpha/org/a-3', available: false, expected_lock_version: 1 });
    for (const token of [member.member, member.executor]) {
      const r = await h.call('GET', '/agent_api/v1/models', { token });
      expect(r.status).toBe(200);
      expect(r.body.models.map((m: { ref: string }) => m.ref)).toEqual(['alpha/a-2', 'alpha/emb', 'beta/b-1', 'local/l-1']);
      // The same row as admin discovery.
      const admin = (await h.call('GET', '/api/v1/admin/models', { token: h.token })).body.models.find(
        (m: { ref: string }) => m.ref === 'alpha/a-2',
      );
      expect(r.body.models[0]).toEqual(admin);
    }
    expect(await memberRefs(member.member, '?available=true')).toEqual(['alpha/a-2', 'alpha/emb']);
    expect(await memberRefs(member.member, '?workload=embeddings')).toEqual(['alpha/emb']);
    const providers = await h.call('GET', '/agent_api/v1/model_providers', { token: member.executor });
    expect(providers.status).toBe(200);
    expect(providers.body.model_providers[0]).toEqual({
      id: 'alpha',
      display_name: 'Alpha AI',
      credentials: 'api_key',
      enabled: true,
      configured: true,
      reauthorization_required: false,
      unavailable_until: null,
      models: 2,
    });
    expect(providers.text).not.toContain('sk-member-test');
  });

  it('[ADM-MEM-1] refuses admin-plane credentials and missing tokens with 401', async () => {
    for (const token of [h.platform.owner.session_bearer, h.platform.owner.platform_token, member.session, member.platform]) {
      for (const path of ['/agent_api/v1/models', '/agent_api/v1/model_providers']) {
        const r = await h.call('GET', path, { token });
        expect(r.status, path).toBe(401);
        expect(r.body.error.code).toBe('unauthorized');
      }
    }
    expect((await h.call('GET', '/agent_api/v1/models', { cookie: member.session })).status).toBe(401);
    expect((await h.call('GET', '/agent_api/v1/models')).status).toBe(401);
  });

  it('[ADM-MEM-2] has no write route or alias for provider commands', async () => {
    for (const method of ['PUT', 'POST', 'DELETE', 'PATCH']) {
      for (const path of ['/agent_api/v1/models', '/agent_api/v1/model_providers']) {
        const r = await h.call(method, path, { token: member.member, body: { command: { enabled: true } } });
        expect(r.status, `${method} ${path}`).toBe(405);
        expect(r.body.error.code).toBe('method_not_allowed');
      }
    }
    for (const suffix of [
      '',
      '/lane',
      '/model_visibility',
      '/model_availability',
      '/api_key',
      '/definition',
      '/model_definition',
      '/model_discovery',
      '/model_test',
    ]) {
      for (const method of ['GET', 'PUT', 'POST', 'DELETE']) {
        const body = method === 'GET' ? {} : { body: { command: { enabled: false, model: 'alpha/a-2', visible: false } } };
        const r = await h.call(method, `/agent_api/v1/model_providers/alpha${suffix}`, { token: member.member, ...body });
        expect(r.status, `${method} ${suffix}`).toBe(404);
      }
    }
    for (const path of ['/agent_api/v1/account/cost_unit', '/agent_api/v1/admin/models']) {
      expect((await h.call('PUT', path, { token: member.member, body: { command: {} } })).status).toBe(404);
    }
    // Nothing changed through those attempts.
    expect(await memberRefs(member.member)).toContain('alpha/a-2');
  });

  it('[ADM-MEM-3] [ADM-AVL-2] shows admin changes on the next member read', async () => {
    expect(await memberRefs(member.member)).toContain('local/l-1');
    const hidden = await adminPut(P('local', '/model_visibility'), { model: 'local/l-1', visible: false });
    expect(hidden.status).toBe(200);
    expect(await memberRefs(member.member)).not.toContain('local/l-1');
    await adminPut(P('local', '/model_visibility'), { model: 'local/l-1', visible: true, expected_lock_version: 0 });
    expect(await memberRefs(member.member)).toContain('local/l-1');
    await adminPut(P('local', '/model_availability'), { model: 'local/l-1', available: false, expected_lock_version: 1 });
    expect(await memberRefs(member.member)).not.toContain('local/l-1');
    const providers = (await h.call('GET', '/agent_api/v1/model_providers', { token: member.member })).body.model_providers;
    expect(providers.find((p: { id: string }) => p.id === 'local').models).toBe(0);
  });
});
