/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- response bodies are untyped JSON (Reply.body); the assertions pin their shape */
// The diagnostic model test (issue 15 item 2; spec Endpoints rule 8) end to end over real HTTP, on SQLite and
// PostgreSQL: every outcome and every availability_update value, with the one request the provider stand-in received.
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createModelPlane, type ModelPlane } from '../../src/admin/model-plane.ts';
import { credentialAad } from '../../src/admin/projection/projection.ts';
import { createUpstreamClient, type UpstreamClient } from '../../src/admin/upstream/upstream-client.ts';
import { encryptSecret } from '../../src/core/crypto.ts';
import { narrowTables, openDatabase, type DatabaseHandle } from '../../src/core/db/database.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { PlatformDatabase } from '../../src/app/database.ts';
import { dialects } from '../support/databases.ts';
import {
  PROVIDER_ERRORS,
  RAW_ANSWERS,
  startStandin,
  type ErrorSpec,
  type RawAnswer,
  type StandinDialect,
} from '../support/upstream/index.ts';
import { addHuman, P, type Reply } from './admin-harness.ts';
import { openProviderStandins, STANDIN_KEYS, type ProviderStandins } from './provider-standins.ts';

const { openai: OPENAI, anthropic: ANTHROPIC, gemini: GEMINI } = PROVIDER_ERRORS;
const CHAT = { openai: 'openai/gpt-4.1', anthropic: 'anthropic/claude-sonnet-4-5', gemini: 'google/gemini-2.5-flash' } as const;

interface Row {
  ref: string;
  available: boolean;
  visible: boolean;
  unavailable_reason: string | null;
}

/**
 * Waits until the stand-in has received a request beyond the first `received` (the probe, whose answer the test holds
 * back), so that an edit made next lands during the probe. A fixed sleep lost that race on a loaded machine: the
 * edit then came before the model test read the policy, and the test saw another outcome.
 */
async function probeArrived(standin: { requests: readonly unknown[] }, received: number): Promise<void> {
  for (let i = 0; i < 500 && standin.requests.length === received; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(standin.requests.length, 'the probe reached the provider').toBeGreaterThan(received);
}

describe.each(dialects)('model test on %s', (dialect) => {
  let f: ProviderStandins;
  beforeAll(async () => {
    // The stand-ins answer with a recognisable text, which must never come back or reach a log.
    f = await openProviderStandins(dialect, { standin: { reply: 'GENERATED-TEXT-NEVER-RETURNED' } });
  });
  afterAll(async () => f.close());
  beforeEach(async () => {
    for (const s of Object.values(f.standins)) s.reset();
    // Each test starts from enabled providers with keys and no marks; the rate limit is not what these tests count.
    await sql`delete from model_test_windows`.execute(f.h.platform.ctx.database.db);
  });

  const providerOf = (ref: string) => ref.slice(0, ref.indexOf('/'));

  async function test(ref: string, options: { token?: string; version?: number | null } = {}): Promise<Reply> {
    const provider = providerOf(ref);
    const version = options.version !== undefined ? options.version : await f.version(provider);
    return f.h.call('POST', P(provider, '/model_test'), {
      token: options.token ?? f.h.token,
      body: { command: { model: ref, expected_lock_version: version } },
    });
  }

  async function row(ref: string): Promise<Row> {
    const models = await f.h.call('GET', '/api/v1/admin/models', { token: f.h.token });
    const found = (models.body as { models: Row[] }).models.find((m) => m.ref === ref);
    if (!found) throw new Error(`${ref} is not in the catalog`);
    return found;
  }

  async function setAvailable(ref: string, available: boolean): Promise<void> {
    const provider = providerOf(ref);
    const put = await f.h.call('PUT', P(provider, '/model_availability'), {
      token: f.h.token,
      body: { command: { model: ref, available, expected_lock_version: await f.version(provider) } },
    });
    expect(put.status, put.text).toBe(200);
  }

  it('succeeds through each wire with one request carrying the saved key, the upstream id and a 16-token budget', async () => {
    const cases: { ref: string; dialect: StandinDialect; path: string; auth: [string, string]; budget: [string, unknown] }[] = [
      {
        ref: CHAT.openai,
        dialect: 'openai',
        path: '/v1/chat/completions',
        auth: ['authorization', `Bearer ${STANDIN_KEYS.openai}`],
        budget: ['max_tokens', 16],
      },
      // A reasoning model refuses max_tokens; its budget travels as max_completion_tokens.
      {
        ref: 'openai/gpt-5',
        dialect: 'openai',
        path: '/v1/chat/completions',
        auth: ['authorization', `Bearer ${STANDIN_KEYS.openai}`],
        budget: ['max_completion_tokens', 16],
      },
      {
        ref: CHAT.anthropic,
        dialect: 'anthropic',
        path: '/v1/messages',
        auth: ['x-api-key', STANDIN_KEYS.anthropic],
        budget: ['max_tokens', 16],
      },
      {
        ref: CHAT.gemini,
        dialect: 'gemini',
        path: '/v1beta/models/gemini-2.5-flash:generateContent',
        auth: ['x-goog-api-key', STANDIN_KEYS.gemini],
        budget: ['generationConfig', expect.objectContaining({ maxOutputTokens: 16 })],
      },
    ];
    for (const c of cases) {
      f.standins[c.dialect].reset();
      const reply = await test(c.ref);
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body.model_test).toEqual({
        outcome: 'succeeded',
        duration_ms: expect.any(Number),
        http_status: 200,
        availability_update: 'noop',
      });
      expect(reply.body.model_provider.id).toBe(providerOf(c.ref));
      const requests = f.standins[c.dialect].requests;
      expect(requests, c.ref).toHaveLength(1);
      const [sent] = requests;
      expect(sent?.path).toBe(c.path);
      expect(sent?.headers[c.auth[0]]).toBe(c.auth[1]);
      expect(sent?.json).toEqual(expect.objectContaining({ [c.budget[0]]: c.budget[1] }));
      if (c.ref === 'openai/gpt-5') expect(sent?.json).not.toHaveProperty('max_tokens');
    }
    // The effective upstream id is sent, not the ref's tail: openai/gpt-4o is gpt-4o-2024-11-20 upstream.
    f.standins.openai.reset();
    expect((await test('openai/gpt-4o')).body.model_test.outcome).toBe('succeeded');
    expect(f.standins.openai.requests[0]?.json).toEqual(expect.objectContaining({ model: 'gpt-4o-2024-11-20' }));
  });

  it('probes the other workloads with the smallest valid request', async () => {
    const expected: Record<string, string> = {
      'openai/text-embedding-3-small': '/v1/embeddings',
      'openai/gpt-image-1': '/v1/images/generations',
      'openai/tts-1': '/v1/audio/speech',
      'openai/whisper-1': '/v1/audio/transcriptions',
      'google/gemini-embedding-001': '/v1beta/models/gemini-embedding-001:batchEmbedContents',
    };
    for (const [ref, path] of Object.entries(expected)) {
      const standin = ref.startsWith('google/') ? f.standins.gemini : f.standins.openai;
      standin.reset();
      const reply = await test(ref);
      expect(reply.body.model_test, ref).toMatchObject({ outcome: 'succeeded', http_status: 200 });
      expect(standin.requests.map((r) => r.path)).toEqual([path]);
    }
    expect(f.standins.openai.requests[0]?.form?.file).toMatchObject({ contentType: 'audio/wav' });
  });

  // [dialect, scripted answer, outcome, http_status, availability_update]
  const refusals: [StandinDialect, ErrorSpec | RawAnswer, string, number, string][] = [
    ['openai', OPENAI.invalidApiKey(), 'authentication_failed', 401, 'unchanged'],
    ['openai', OPENAI.insufficientQuota(), 'quota_exceeded', 429, 'unchanged'],
    ['openai', OPENAI.rateLimited(), 'rate_limited', 429, 'unchanged'],
    ['openai', OPENAI.modelNotFound('gpt-4.1'), 'model_not_found', 404, 'unchanged'],
    ['openai', OPENAI.projectLacksModel('gpt-4.1'), 'model_not_found', 403, 'unchanged'],
    ['openai', OPENAI.modelNotExist('gpt-4.1'), 'model_not_found', 404, 'applied'],
    ['openai', OPENAI.modelRetired('gpt-4.1'), 'model_not_found', 404, 'applied'],
    ['openai', OPENAI.modelDecommissioned('gpt-4.1'), 'model_not_found', 400, 'applied'],
    ['openai', OPENAI.unsupportedParameter(), 'request_invalid', 400, 'unchanged'],
    ['openai', OPENAI.unsupportedRegion(), 'request_rejected', 403, 'unchanged'],
    ['openai', OPENAI.serverError(), 'provider_error', 500, 'unchanged'],
    ['openai', OPENAI.overloaded(), 'provider_error', 503, 'unchanged'],
    ['openai', RAW_ANSWERS.html200(), 'invalid_response', 200, 'unchanged'],
    ['openai', RAW_ANSWERS.invalidJson(), 'invalid_response', 200, 'unchanged'],
    ['openai', RAW_ANSWERS.gatewayHtml(502), 'provider_error', 502, 'unchanged'],
    ['anthropic', ANTHROPIC.invalidApiKey(), 'authentication_failed', 401, 'unchanged'],
    ['anthropic', ANTHROPIC.creditBalanceTooLow(), 'quota_exceeded', 400, 'unchanged'],
    ['anthropic', ANTHROPIC.spendLimitReached(), 'quota_exceeded', 429, 'unchanged'],
    ['anthropic', ANTHROPIC.rateLimited(), 'rate_limited', 429, 'unchanged'],
    ['anthropic', ANTHROPIC.permissionDenied(), 'request_rejected', 403, 'unchanged'],
    ['anthropic', ANTHROPIC.notFound('claude-sonnet-4-5-20250929'), 'model_not_found', 404, 'unchanged'],
    ['anthropic', ANTHROPIC.invalidRequest(), 'request_invalid', 400, 'unchanged'],
    ['anthropic', ANTHROPIC.overloaded(), 'provider_error', 529, 'unchanged'],
    ['gemini', GEMINI.apiKeyInvalid(), 'authentication_failed', 400, 'unchanged'],
    ['gemini', GEMINI.unauthenticated(), 'authentication_failed', 401, 'unchanged'],
    ['gemini', GEMINI.rateLimited(), 'rate_limited', 429, 'unchanged'],
    ['gemini', GEMINI.quotaExhausted(), 'quota_exceeded', 429, 'unchanged'],
    ['gemini', GEMINI.notFound('gemini-2.5-flash'), 'model_not_found', 404, 'unchanged'],
    ['gemini', GEMINI.invalidArgument(), 'request_invalid', 400, 'unchanged'],
    ['gemini', GEMINI.permissionDenied(), 'request_rejected', 403, 'unchanged'],
    ['gemini', GEMINI.unavailable(), 'provider_error', 503, 'unchanged'],
  ];

  it.each(refusals)(
    '%s answering %j is %s (HTTP %i), availability %s, after exactly one request',
    async (d, answer, outcome, status, update) => {
      const standin = f.standins[d];
      if ('body' in answer) standin.respond(answer);
      else standin.fail(answer);
      const ref = CHAT[d];
      const reply = await test(ref);
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body.model_test).toEqual({ outcome, duration_ms: expect.any(Number), http_status: status, availability_update: update });
      expect(standin.requests, 'one request, no retry').toHaveLength(1);
      // No raw provider error comes back: neither its message nor its machine code's prose.
      const message = 'body' in answer ? String(answer.body) : (answer.message ?? '');
      if (message.length > 8) expect(reply.text).not.toContain(message.slice(0, 40));
      const after = await row(ref);
      if (update === 'applied') {
        // "model gone" codes mark the model invalid: hidden from Agents, reason model_unavailable.
        expect(after).toMatchObject({ available: false, visible: false, unavailable_reason: 'model_unavailable' });
        await setAvailable(ref, true);
      } else {
        expect(after.unavailable_reason).toBeNull();
      }
    },
  );

  it('a success clears an invalid mark (applied) and keeps a manual hide', async () => {
    const ref = CHAT.openai;
    await setAvailable(ref, false);
    const hide = await f.h.call('PUT', P('openai', '/model_visibility'), {
      token: f.h.token,
      body: { command: { model: ref, visible: false, expected_lock_version: await f.version('openai') } },
    });
    expect(hide.status).toBe(200);
    const before = await f.version('openai');
    const reply = await test(ref);
    expect(reply.body.model_test).toMatchObject({ outcome: 'succeeded', availability_update: 'applied' });
    expect(reply.body.model_provider.lock_version).toBe((before ?? 0) + 1);
    expect(await row(ref)).toMatchObject({ visible: false, unavailable_reason: 'model_hidden' });
    const show = await f.h.call('PUT', P('openai', '/model_visibility'), {
      token: f.h.token,
      body: { command: { model: ref, visible: true, expected_lock_version: await f.version('openai') } },
    });
    expect(show.status).toBe(200);
    expect((await row(ref)).available).toBe(true);
  });

  it('a redirect is not followed: request_rejected, and its target receives nothing', async () => {
    const target = await startStandin({ dialect: 'openai' });
    try {
      f.standins.openai.respond(RAW_ANSWERS.redirect(`${target.baseUrl}/chat/completions`, 307));
      const reply = await test(CHAT.openai);
      expect(reply.body.model_test).toMatchObject({ outcome: 'request_rejected', http_status: 307, availability_update: 'unchanged' });
      expect(target.requests).toHaveLength(0);
    } finally {
      await target.close();
    }
  });

  it('answers without inference when the provider is disabled or the credential is missing or unusable', async () => {
    const db = f.h.platform.ctx.database.db;
    const lane = async (enabled: boolean) =>
      f.h.call('PUT', P('anthropic', '/lane'), {
        token: f.h.token,
        body: { command: { enabled, expected_lock_version: await f.version('anthropic') } },
      });
    expect((await lane(false)).status).toBe(200);
    expect((await test(CHAT.anthropic)).body.model_test).toEqual({
      outcome: 'provider_disabled',
      duration_ms: 0,
      http_status: null,
      availability_update: 'unchanged',
    });
    expect((await lane(true)).status).toBe(200);

    // Material no configured key opens (sealed under another secret, or damaged).
    const { sealed } = await db
      .selectFrom('model_provider_credentials')
      .select('sealed')
      .where('provider_id', '=', 'anthropic')
      .executeTakeFirstOrThrow();
    // As every credential write does, the change moves updated_at (what tells a replica its projection is stale).
    await sql`update model_provider_credentials set sealed = ${`${sealed ?? ''}AAAA`}, updated_at = updated_at + 1 where provider_id = 'anthropic'`.execute(
      db,
    );
    expect((await test(CHAT.anthropic)).body.model_test.outcome).toBe('credential_unusable');
    await sql`update model_provider_credentials set sealed = ${sealed}, updated_at = updated_at + 1 where provider_id = 'anthropic'`.execute(
      db,
    );

    expect((await f.h.call('DELETE', P('anthropic', '/api_key'), { token: f.h.token })).status).toBe(200);
    expect((await test(CHAT.anthropic)).body.model_test).toMatchObject({ outcome: 'missing_credential', http_status: null });
    expect(f.standins.anthropic.requests).toHaveLength(0);
    const key = await f.h.call('PUT', P('anthropic', '/api_key'), {
      token: f.h.token,
      body: { command: { api_key: STANDIN_KEYS.anthropic } },
    });
    expect(key.status).toBe(200);
    expect((await test(CHAT.anthropic)).body.model_test.outcome).toBe('succeeded');
  });

  it('an OAuth lane sends the access token, and answers reauthorization_required without inference when it must be renewed', async () => {
    const db = f.h.platform.ctx.database.db;
    const definition = {
      display_name: 'Subscription',
      base_url: f.standins.openai.baseUrl,
      api_format: 'openai_chat',
      credentials: 'oauth_tokens',
    };
    const created = await f.h.call('PUT', P('subscription', '/definition'), {
      token: f.h.token,
      body: { command: { definition, expected_lock_version: null } },
    });
    expect(created.status, created.text).toBe(200);
    const model = await f.h.call('PUT', P('subscription', '/model_definition'), {
      token: f.h.token,
      body: { command: { model: 'subscription/gpt-4.1', definition: {}, expected_lock_version: await f.version('subscription') } },
    });
    expect(model.status, model.text).toBe(200);
    const lane = await f.h.call('PUT', P('subscription', '/lane'), {
      token: f.h.token,
      body: { command: { enabled: true, expected_lock_version: await f.version('subscription') } },
    });
    expect(lane.status).toBe(200);
    // OAuth material is written by the subscription authorization routes (not part of this API): sealed directly here.
    const accountId = f.h.accountId;
    const sealed = encryptSecret(
      JSON.stringify({ access_token: 'oauth-access-token-of-the-standin' }),
      f.h.platform.ctx.secretKeys.current,
      credentialAad(accountId, 'subscription'),
    );
    await db
      .insertInto('model_provider_credentials')
      .values({
        account_id: accountId,
        provider_id: 'subscription',
        material_kind: 'oauth_tokens',
        sealed,
        generation: 1,
        reauthorization_required: 1,
        updated_at: Date.now(),
      })
      .execute();
    expect((await test('subscription/gpt-4.1')).body.model_test).toMatchObject({ outcome: 'reauthorization_required', http_status: null });
    expect(f.standins.openai.requests).toHaveLength(0);
    await db
      .updateTable('model_provider_credentials')
      .set({ reauthorization_required: 0 })
      .where('provider_id', '=', 'subscription')
      .execute();
    // The stand-in accepts only its API key, so the token it got is refused; what matters is what was sent.
    const reply = await test('subscription/gpt-4.1');
    expect(reply.body.model_test).toMatchObject({ outcome: 'authentication_failed', http_status: 401 });
    expect(f.standins.openai.requests.map((r) => r.headers.authorization)).toEqual(['Bearer oauth-access-token-of-the-standin']);
  });

  it('test_input_unavailable when the definition lacks what the probe needs (a speech model without a voice)', async () => {
    const ref = 'openai/custom-voice';
    const put = await f.h.call('PUT', P('openai', '/model_definition'), {
      token: f.h.token,
      body: {
        command: { model: ref, definition: { capabilities: { workload: 'speech' } }, expected_lock_version: await f.version('openai') },
      },
    });
    expect(put.status, put.text).toBe(200);
    expect((await test(ref)).body.model_test).toMatchObject({ outcome: 'test_input_unavailable', http_status: null });
    expect(f.standins.openai.requests).toHaveLength(0);
    const reset = await f.h.call('POST', P('openai', '/model_definition/reset'), {
      token: f.h.token,
      body: { command: { model: ref, expected_lock_version: await f.version('openai') } },
    });
    expect(reset.status).toBe(200);
  });

  it('connection_failed and request_rejected (outbound safety) come with no http_status', async () => {
    await f.pointAt('openai', 'http://127.0.0.1:9/v1');
    expect((await test(CHAT.openai)).body.model_test).toMatchObject({ outcome: 'connection_failed', http_status: null });
    for (const base of ['http://169.254.169.254/v1', 'http://metadata.google.internal/v1', 'http://[fd00:ec2::254]/v1']) {
      await f.pointAt('openai', base);
      expect((await test(CHAT.openai)).body.model_test, base).toMatchObject({ outcome: 'request_rejected', http_status: null });
    }
    await f.pointAt('openai', f.standins.openai.baseUrl);
  });

  it('unknown models are 404 and a missing version 400, before any provider IO', async () => {
    const unknown = await test('openai/no-such-model');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    const foreign = await f.h.call('POST', P('openai', '/model_test'), {
      token: f.h.token,
      body: { command: { model: CHAT.anthropic, expected_lock_version: await f.version('openai') } },
    });
    expect(foreign.status).toBe(404);
    const missing = await f.h.call('POST', P('openai', '/model_test'), { token: f.h.token, body: { command: { model: CHAT.openai } } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('parameter_missing');
    expect(f.standins.openai.requests).toHaveLength(0);
  });

  it('another edit during the probe wins: the result is reported, availability stale, nothing written', async () => {
    const ref = CHAT.openai;
    await setAvailable(ref, false);
    const version = await f.version('openai');
    f.standins.openai.delay(1_000);
    const received = f.standins.openai.requests.length;
    const pending = test(ref, { version });
    await probeArrived(f.standins.openai, received);
    const hide = await f.h.call('PUT', P('openai', '/model_visibility'), {
      token: f.h.token,
      body: { command: { model: 'openai/gpt-4.1-mini', visible: false, expected_lock_version: version } },
    });
    expect(hide.status, 'the edit does not wait for the probe (no lock held during IO)').toBe(200);
    const reply = await pending;
    expect(reply.body.model_test).toMatchObject({ outcome: 'succeeded', availability_update: 'stale' });
    expect((await row(ref)).unavailable_reason).toBe('model_unavailable');
    await setAvailable(ref, true);
    const show = await f.h.call('PUT', P('openai', '/model_visibility'), {
      token: f.h.token,
      body: { command: { model: 'openai/gpt-4.1-mini', visible: true, expected_lock_version: await f.version('openai') } },
    });
    expect(show.status).toBe(200);
  });

  it('another edit during the probe wins even when the result changes nothing: availability stale, not noop', async () => {
    // The model is already valid, so success calls for no change; the version is still checked after the probe.
    const ref = CHAT.openai;
    const version = await f.version('openai');
    f.standins.openai.delay(1_000);
    const received = f.standins.openai.requests.length;
    const pending = test(ref, { version });
    await probeArrived(f.standins.openai, received);
    const hide = await f.h.call('PUT', P('openai', '/model_visibility'), {
      token: f.h.token,
      body: { command: { model: 'openai/gpt-4.1-mini', visible: false, expected_lock_version: version } },
    });
    expect(hide.status).toBe(200);
    const reply = await pending;
    expect(reply.body.model_test).toMatchObject({ outcome: 'succeeded', availability_update: 'stale' });
    expect(reply.body.model_provider.lock_version).toBe(hide.body.model_provider.lock_version);
    const show = await f.h.call('PUT', P('openai', '/model_visibility'), {
      token: f.h.token,
      body: { command: { model: 'openai/gpt-4.1-mini', visible: true, expected_lock_version: await f.version('openai') } },
    });
    expect(show.status).toBe(200);
  });

  it('a token whose Account was read early is still refused once revoked or demoted (authentication runs on every test)', async () => {
    const tester = await addHuman(f.h, 'admin');
    // The first test makes the token's Account known; the second reads it while the credential is looked up.
    for (let i = 0; i < 2; i++) expect((await test(CHAT.openai, { token: tester.platform })).status).toBe(200);
    await f.h.platform.ctx.identity.setRole(tester.humanId, 'member');
    const demoted = await test(CHAT.openai, { token: tester.platform });
    expect(demoted.status).toBe(403);
    expect(demoted.body.error.code).toBe('administrator_required');
    await f.h.platform.ctx.identity.deactivate(tester.humanId);
    expect((await test(CHAT.openai, { token: tester.platform })).status).toBe(401);
    expect(f.standins.openai.requests, 'a refused caller reaches no provider').toHaveLength(2);
  });

  it('availability not_found when the policy is gone by the time of the write', async () => {
    const version = await f.version('google');
    // Gemini has no "model gone" code of its own; a compatible server's ErrorInfo reason stands in for one.
    f.standins.gemini.respond({
      status: 404,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error: { code: 404, status: 'NOT_FOUND', message: 'gone', details: [{ reason: 'model_decommissioned' }] } }),
    });
    f.standins.gemini.delay(1_000);
    const received = f.standins.gemini.requests.length;
    const pending = test(CHAT.gemini, { version });
    // The policy goes once the probe is at the provider (its answer held back), never before the test read it.
    await probeArrived(f.standins.gemini, received);
    const db = f.h.platform.ctx.database.db;
    const saved = await db.selectFrom('model_provider_policies').selectAll().where('provider_id', '=', 'google').executeTakeFirstOrThrow();
    await db.deleteFrom('model_provider_policies').where('provider_id', '=', 'google').execute();
    const reply = await pending;
    expect(reply.body.model_test).toMatchObject({ outcome: 'model_not_found', availability_update: 'not_found' });
    await db.insertInto('model_provider_policies').values(saved).execute();
  });

  it('availability invalid when the mark would take the policy over its 256-reference limit', async () => {
    const provider = 'anthropic';
    const db = f.h.platform.ctx.database.db;
    const saved = await db.selectFrom('model_provider_policies').selectAll().where('provider_id', '=', provider).executeTakeFirstOrThrow();
    // 256 custom model entries fill the policy to its limit; marking another model invalid would be the 257th ref.
    let version = await f.version(provider);
    for (let i = 0; i < 256; i++) {
      const put = await f.h.call('PUT', P(provider, '/model_definition'), {
        token: f.h.token,
        body: { command: { model: `${provider}/filler-${i}`, definition: {}, expected_lock_version: version } },
      });
      expect(put.status, put.text).toBe(200);
      version = put.body.model_provider.lock_version as number;
    }
    f.standins.anthropic.respond({
      status: 404,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'error', error: { type: 'model_retired', message: 'gone' } }),
    });
    const reply = await test(CHAT.anthropic, { version });
    expect(reply.body.model_test).toMatchObject({ outcome: 'model_not_found', availability_update: 'invalid' });
    expect((await row(CHAT.anthropic)).unavailable_reason).toBeNull();
    expect(await f.version(provider), 'nothing written').toBe(version);
    await db
      .updateTable('model_provider_policies')
      .set({ document: saved.document, lock_version: (version ?? 0) + 1 })
      .where('provider_id', '=', provider)
      .execute();
  });

  it('never returns, logs or stores generated content, the provider error text or the key', async () => {
    f.standins.openai.fail(OPENAI.invalidApiKey(STANDIN_KEYS.openai));
    await test(CHAT.openai);
    await test(CHAT.anthropic);
    const everything = [...f.h.transcript, f.h.platform.logs.text()].join('\n');
    for (const secret of [...Object.values(STANDIN_KEYS), 'GENERATED-TEXT-NEVER-RETURNED', 'Incorrect API key'])
      expect(everything).not.toContain(secret);
    const stored = await f.h.platform.ctx.database.db.selectFrom('model_provider_credentials').select('sealed').execute();
    for (const { sealed } of stored) for (const key of Object.values(STANDIN_KEYS)) expect(sealed ?? '').not.toContain(key);
    const policies = await f.h.platform.ctx.database.db.selectFrom('model_provider_policies').select('document').execute();
    expect(policies.map((p) => p.document).join('')).not.toContain('GENERATED-TEXT');
  });

  describe('a second replica (its own connection and model plane)', () => {
    let second: DatabaseHandle<PlatformDatabase>;
    let replica: ModelPlane;
    let upstream: UpstreamClient;
    beforeAll(async () => {
      // A second replica: its own database connection and its own model plane, sharing only the database.
      second = await openDatabase<PlatformDatabase>(f.h.platform.database.url);
      upstream = createUpstreamClient({ allowPrivate: true });
      const ctx = f.h.platform.ctx;
      replica = createModelPlane({
        db: narrowTables(second.db),
        dialect: second.dialect,
        clock: ctx.clock,
        log: silentLogger(),
        secretKeys: ctx.secretKeys,
        catalogDir: ctx.config.admin.PLATFORM_CATALOG_DIR,
        upstream,
        // The spec's 30 s, shortened so the deadline can be crossed in a test.
        modelTestDeadlineMs: 300,
      });
    });
    afterAll(async () => {
      await upstream.close();
      await second.close();
    });

    it('an answer past the deadline is timed_out, with no http_status and no retry', async () => {
      f.standins.openai.delay(1_000);
      const owner = f.h.platform.owner;
      const result = await replica.testModel(owner.account_id, null, 'openai', CHAT.openai, await f.version('openai'));
      expect(result.model_test).toMatchObject({ outcome: 'timed_out', http_status: null, availability_update: 'unchanged' });
      expect(result.model_test.duration_ms).toBeGreaterThanOrEqual(250);
      expect(result.model_test.duration_ms).toBeLessThan(1_000);
      expect(f.standins.openai.requests).toHaveLength(1);
    });

    it('is shared by two credentials of one Human and by two replicas, answered 429 with Retry-After', async () => {
      const owner = f.h.platform.owner;
      // Five through the platform token, four through the session bearer, one through the other replica.
      for (let i = 0; i < 5; i++) expect((await test(CHAT.openai)).status).toBe(200);
      for (let i = 0; i < 4; i++) expect((await test(CHAT.openai, { token: owner.session_bearer })).status).toBe(200);
      const viaReplica = await replica.testModel(owner.account_id, owner.human_id, 'openai', CHAT.openai, await f.version('openai'));
      expect(viaReplica.model_test.outcome).toBe('succeeded');
      expect(f.standins.openai.requests).toHaveLength(10);

      const refused = await test(CHAT.openai, { token: owner.session_bearer });
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('rate_limited');
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(180);
      await expect(replica.testModel(owner.account_id, owner.human_id, 'openai', CHAT.openai, null)).rejects.toMatchObject({
        code: 'rate_limited',
      });
      expect(f.standins.openai.requests, 'a refused test sends nothing').toHaveLength(10);

      // Another Human of the Account has a window of its own.
      const admin = await addHuman(f.h, 'admin');
      expect((await test(CHAT.openai, { token: admin.platform })).status).toBe(200);
    });
  });
});
