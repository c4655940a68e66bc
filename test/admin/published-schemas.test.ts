/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call -- response bodies are untyped JSON (Reply.body); the assertions pin their shape */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../support/databases.ts';
import { addHuman, openHarness, P, type Harness } from './admin-harness.ts';

/**
 * Reads and session routes on the shipped catalog. Every call goes through the harness, whose server checks each
 * response against the OpenAPI document it serves (test/support/openapi-responses.ts): a call that breaks the
 * document throws, so these tests pin both the behaviour and the published schemas.
 */
describe.each(dialects)('responses hold to the published schemas on %s', (dialect) => {
  let h: Harness;
  let member: Awaited<ReturnType<typeof addHuman>>;
  beforeAll(async () => {
    h = await openHarness(dialect);
    member = await addHuman(h, 'member');
  });
  afterAll(async () => h.close());

  it('[ADM-API-3] regression: the shipped catalog reads on the admin and member planes validate (ollama/llama3.1:8b has a hub counter only)', async () => {
    await h.call('PUT', P('ollama', '/lane'), { token: h.token, body: { command: { enabled: true } } });
    const admin = await h.call('GET', '/api/v1/admin/models', { token: h.token });
    expect(admin.status).toBe(200);
    const llama = admin.body.models.find((m: { ref: string }) => m.ref === 'ollama/llama3.1:8b');
    expect(llama.capabilities.token_counter).toEqual({ kind: 'hub', tokenizer_id: 'meta-llama/Llama-3.1-8B-Instruct' });
    const gzipped = await h.call('GET', '/api/v1/admin/models?available=true', { token: h.token, headers: { 'accept-encoding': 'gzip' } });
    expect(gzipped.body.models.map((m: { ref: string }) => m.ref)).toContain('ollama/llama3.1:8b');
    for (const path of ['/agent_api/v1/models', '/agent_api/v1/models?workload=embeddings', '/agent_api/v1/model_providers']) {
      expect((await h.call('GET', path, { token: member.member })).status, path).toBe(200);
    }
    expect((await h.call('GET', '/api/v1/admin/model_providers', { token: h.token })).status).toBe(200);
    expect((await h.call('GET', P('ollama'), { token: h.token })).status).toBe(200);
    // Errors are checked against the envelope and the documented statuses too.
    expect((await h.call('GET', '/agent_api/v1/models?workload=poetry', { token: member.member })).status).toBe(400);
    expect((await h.call('GET', '/agent_api/v1/models', { token: h.token })).status).toBe(401);
    expect((await h.call('GET', '/api/v1/admin/models', { token: member.session })).status).toBe(403);
    expect((await h.call('GET', P('nobody'), { token: h.token })).status).toBe(404);
    expect((await h.call('GET', '/api/v1/admin/no_such_route', { token: h.token })).status).toBe(404);
    expect((await h.call('PATCH', '/api/v1/admin/models', { token: h.token })).status).toBe(405);
  });

  it('[ADM-API-3] [ADM-API-4] the session routes answer as documented: sign-in, current session by bearer and cookie, sign-out', async () => {
    const owner = h.platform.owner;
    const signIn = await h.call('POST', '/api/v1/sessions', { body: { email: owner.email, password: owner.password } });
    expect(signIn.status).toBe(200);
    expect(signIn.headers.get('cache-control')).toBe('no-store');
    const bearer: string = signIn.body.session.token;
    expect(signIn.headers.get('set-cookie')).toContain(`platform_session=${bearer}`);
    expect((await h.call('POST', '/api/v1/sessions', { body: { email: owner.email, password: 'wrong password' } })).body).toEqual({
      error: { code: 'unauthorized', message: 'invalid email or password' },
    });
    expect((await h.call('POST', '/api/v1/sessions', { body: { email: owner.email } })).status).toBe(400);
    expect(
      (await h.call('POST', '/api/v1/sessions', { rawBody: 'email=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }))
        .status,
    ).toBe(415);

    const byBearer = await h.call('GET', '/api/v1/sessions/current', { token: bearer });
    expect(byBearer.body.session).toEqual({
      id: signIn.body.session.id,
      account_id: owner.account_id,
      via: 'bearer',
      human: signIn.body.session.human,
    });
    expect((await h.call('GET', '/api/v1/sessions/current', { cookie: bearer })).body.session.via).toBe('cookie');
    expect((await h.call('GET', '/api/v1/sessions/current', { token: h.token })).status).toBe(401);
    expect((await h.call('GET', '/api/v1/sessions/current')).status).toBe(401);

    expect((await h.call('DELETE', '/api/v1/sessions/current', { cookie: bearer })).status).toBe(401);
    const signOut = await h.call('DELETE', '/api/v1/sessions/current', { token: bearer });
    expect(signOut.body).toEqual({ session: { id: signIn.body.session.id, revoked: true } });
    expect((await h.call('GET', '/api/v1/sessions/current', { token: bearer })).status).toBe(401);
  });
});
