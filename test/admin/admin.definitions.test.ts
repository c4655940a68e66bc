/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-explicit-any -- response bodies are untyped JSON (Reply.body); the assertions pin their shape */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyDocument, MAX_POLICY_BYTES, serializeDocument } from '../../src/admin/policy/policy.document.ts';
import { findPolicy, insertPolicyIfAbsent } from '../../src/admin/policy/policy.store.ts';
import type { AdminTables } from '../../src/admin/admin.table.ts';
import { openContext, type PlatformContext } from '../../src/app/context.ts';
import type { PlatformDatabase } from '../../src/app/database.ts';
import { narrowTables, openDatabase, type DatabaseHandle } from '../../src/core/db/database.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { dialects } from '../support/databases.ts';
import { startRestApp, type TestRestApp } from '../support/platform.ts';
import { httpClient, openHarness, P, TEST_CATALOG, type Harness } from './admin-harness.ts';

/**
 * A stand-in upstream: a real HTTP server that custom providers point at. No definition route may call it (spec rule
 * 3: saving a definition makes no inference call; "reads perform no provider network request"), so every request it
 * receives is recorded and fails the test.
 */
async function startForbiddenUpstream(): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.statusCode = 500;
    res.end('{"error":"this stand-in must never be called"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const CATALOG = {
  ...TEST_CATALOG,
  'shared.yaml': `
model_definitions:
  windowed:
    capabilities:
      workload: text_generation
      input_modalities: [image, pdf]
      limits: { combined_input_output_tokens: 128000, output_tokens: 16000 }
      generation_parameters:
        verbosity: {}
      token_counter: { kind: bpe, encoding: o200k_base }
      reasoning: { efforts: [low, high] }
`,
};

describe.each(dialects)('definition routes on %s', (dialect) => {
  let h: Harness;
  let upstream: Awaited<ReturnType<typeof startForbiddenUpstream>>;
  const outgoing: string[] = [];
  beforeAll(async () => {
    upstream = await startForbiddenUpstream();
    h = await openHarness(dialect, {
      catalog: CATALOG,
      fetch: async (input) => {
        outgoing.push(input instanceof Request ? input.url : input.toString());
        throw new Error('no provider network in these tests');
      },
    });
  });
  afterAll(async () => {
    await h.close();
    await upstream.close();
  });

  async function newAccount(): Promise<{ token: string; accountId: string }> {
    const owner = await h.platform.ctx.identity.bootstrap({
      accountName: 'Definitions',
      email: `def-${Math.random().toString(36).slice(2)}@example.test`,
    });
    return { token: owner.platform_token, accountId: owner.account_id };
  }
  const send = (method: string, token: string, path: string, command: unknown) => h.call(method, path, { token, body: { command } });
  const put = (token: string, path: string, command: unknown) => send('PUT', token, path, command);
  const models = async (token: string) => (await h.call('GET', '/api/v1/admin/models', { token })).body.models as Record<string, any>[];
  const row = async (token: string, ref: string) => (await models(token)).find((m) => m.ref === ref);
  const stored = async (accountId: string, providerId: string) =>
    findPolicy(narrowTables(h.platform.ctx.database.db), { accountId, providerId });
  const declaration = (over: Record<string, unknown> = {}) => ({
    display_name: 'Custom Co',
    base_url: upstream.url,
    api_format: 'openai_chat',
    credentials: 'api_key',
    ...over,
  });

  /** Asserts a 422 validation_failed naming `field`, and that the stored policy (text and version) did not move. */
  async function expectRefused(
    accountId: string,
    providerId: string,
    request: () => Promise<{ status: number; body: any }>,
    field: RegExp,
  ) {
    const before = await stored(accountId, providerId);
    const r = await request();
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body.error.code).toBe('validation_failed');
    expect(r.body.error.message).toMatch(field);
    const after = await stored(accountId, providerId);
    expect(after?.document).toBe(before?.document);
    expect(after?.lock_version).toBe(before?.lock_version);
    expect(after?.enabled).toBe(before?.enabled);
  }

  describe('provider definitions', () => {
    it('[ADM-PDEF-1] overrides a catalog provider: source override, never enabled, no credential, no upstream call', async () => {
      const { token } = await newAccount();
      const r = await put(token, P('alpha', '/definition'), { definition: declaration({ display_name: 'Alpha via proxy' }) });
      expect(r.status).toBe(200);
      expect(r.body.model_provider).toMatchObject({
        id: 'alpha',
        display_name: 'Alpha via proxy',
        enabled: false,
        lock_version: 0,
        configured: false,
      });
      expect(r.body.configuration.source).toBe('override');
      expect(r.body.configuration.definition).toEqual(declaration({ display_name: 'Alpha via proxy' }));
      // The singular read is the same envelope.
      expect((await h.call('GET', P('alpha'), { token })).body).toEqual(r.body);
      expect(
        (await h.call('GET', '/api/v1/admin/model_providers', { token })).body.model_providers.find((p: { id: string }) => p.id === 'alpha')
          .display_name,
      ).toBe('Alpha via proxy');
      // Enabled lanes stay enabled and disabled ones disabled: a later override keeps enabled as it is.
      await put(token, P('alpha', '/lane'), { enabled: true, expected_lock_version: 0 });
      const again = await put(token, P('alpha', '/definition'), {
        definition: declaration({ display_name: 'Alpha again' }),
        expected_lock_version: 1,
      });
      expect(again.body.model_provider).toMatchObject({ enabled: true, lock_version: 2 });
    });

    it('[ADM-PDEF-2] creates a new provider id disabled with source custom; its models are authored entries', async () => {
      const { token } = await newAccount();
      const r = await put(token, P('acme', '/definition'), { definition: declaration() });
      expect(r.status).toBe(200);
      expect(r.body.model_provider).toEqual({
        id: 'acme',
        display_name: 'Custom Co',
        credentials: 'api_key',
        enabled: false,
        lock_version: 0,
        configured: false,
        material_kind: null,
        reauthorization_required: false,
        unavailable_until: null,
        models: 0,
      });
      expect(r.body.configuration).toMatchObject({ source: 'custom', models: [] });
      expect(
        (await h.call('GET', '/api/v1/admin/model_providers', { token })).body.model_providers.map((p: { id: string }) => p.id),
      ).toContain('acme');
      const m = await put(token, P('acme', '/model_definition'), {
        model: 'acme/vendor/chat-1',
        definition: { inherit: 'chat' },
        expected_lock_version: 0,
      });
      expect(m.status).toBe(200);
      expect(m.body.configuration.models).toEqual([
        { model: 'acme/vendor/chat-1', definition: { inherit: 'chat' }, source: 'custom', removed: false },
      ]);
      // model_id defaults to the ref after the provider's first "/".
      expect(await row(token, 'acme/vendor/chat-1')).toMatchObject({
        model_id: 'vendor/chat-1',
        available: false,
        unavailable_reason: 'provider_disabled',
      });
      // A non-null version conflicts with the absent policy of another new id (part 1's codes).
      const stale = await put(token, P('acme2', '/definition'), { definition: declaration(), expected_lock_version: 0 });
      expect(stale.status).toBe(409);
      expect(stale.body.error.code).toBe('stale_object');
    });

    it('[ADM-PDEF-3] DELETE definition returns a catalog provider to its file declaration', async () => {
      const { token } = await newAccount();
      await put(token, P('alpha', '/definition'), { definition: declaration() });
      const r = await send('DELETE', token, P('alpha', '/definition'), { expected_lock_version: 0 });
      expect(r.status).toBe(200);
      expect(r.body.configuration).toMatchObject({
        source: 'catalog',
        definition: { display_name: 'Alpha AI', base_url: 'https://alpha.example/v1' },
      });
      expect(r.body.model_provider.lock_version).toBe(1);
      // Nothing stored any more: the same request again is a no-op at the same version.
      const again = await send('DELETE', token, P('alpha', '/definition'), { expected_lock_version: 1 });
      expect(again.body.model_provider.lock_version).toBe(1);
      // On an untouched provider nothing is created.
      const fresh = await newAccount();
      const untouched = await send('DELETE', fresh.token, P('alpha', '/definition'), {});
      expect(untouched.status).toBe(200);
      expect(untouched.body.model_provider.lock_version).toBeNull();
    });

    it('[ADM-PDEF-4] [ADM-PDEF-5] removes a custom provider (policy disabled and kept with its credential) and recreates it with the read version', async () => {
      const { token, accountId } = await newAccount();
      await put(token, P('acme', '/definition'), { definition: declaration() });
      await put(token, P('acme', '/model_definition'), { model: 'acme/m-1', definition: {}, expected_lock_version: 0 });
      // Installing a key enables the lane (spec: PUT api_key).
      expect((await put(token, P('acme', '/api_key'), { api_key: 'sk-custom-provider' })).body.model_provider).toMatchObject({
        enabled: true,
        configured: true,
      });
      const removed = await send('DELETE', token, P('acme', '/definition'), { expected_lock_version: 2 });
      expect(removed.status).toBe(200);
      expect(removed.body.configuration.source).toBe('removed');
      expect(removed.body.configuration.definition).toBeNull();
      expect(removed.body.model_provider).toMatchObject({
        id: 'acme',
        enabled: false,
        lock_version: 3,
        configured: true,
        material_kind: 'api_key',
      });
      expect(removed.text).not.toContain('sk-custom-provider');
      // Gone from the lists and from GET /models, on both planes.
      expect(
        (await h.call('GET', '/api/v1/admin/model_providers', { token })).body.model_providers.map((p: { id: string }) => p.id),
      ).not.toContain('acme');
      expect(await row(token, 'acme/m-1')).toBeUndefined();
      // The policy row and the credential are kept.
      const policy = await stored(accountId, 'acme');
      expect(policy).toMatchObject({ lock_version: 3, enabled: 0 });
      const credential = await h.platform.ctx.database.db
        .selectFrom('model_provider_credentials')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('provider_id', '=', 'acme')
        .executeTakeFirst();
      expect(credential?.sealed).toBeTruthy();
      // Commands on a removed provider are 404, and so is deleting it again.
      expect((await put(token, P('acme', '/lane'), { enabled: true, expected_lock_version: 3 })).status).toBe(404);
      expect(
        (await put(token, P('acme', '/model_definition'), { model: 'acme/m-2', definition: {}, expected_lock_version: 3 })).status,
      ).toBe(404);
      expect((await send('DELETE', token, P('acme', '/definition'), { expected_lock_version: 3 })).status).toBe(404);
      // The singular read stays: its version is the one to recreate with; null conflicts with the kept policy.
      const read = await h.call('GET', P('acme'), { token });
      expect(read.body.model_provider.lock_version).toBe(3);
      const withNull = await put(token, P('acme', '/definition'), { definition: declaration() });
      expect(withNull.status).toBe(409);
      expect(withNull.body.error.code).toBe('stale_object');
      const recreated = await put(token, P('acme', '/definition'), {
        definition: declaration({ display_name: 'Acme again' }),
        expected_lock_version: 3,
      });
      expect(recreated.status).toBe(200);
      expect(recreated.body.configuration).toMatchObject({ source: 'custom', definition: { display_name: 'Acme again' } });
      // Recreating does not enable it; its entries and credential come back with it.
      expect(recreated.body.model_provider).toMatchObject({ enabled: false, lock_version: 4, configured: true, models: 1 });
    });

    it('[ADM-PDEF-6] refuses an incomplete or unsupported declaration with 422 naming the field; nothing is saved', async () => {
      const { token, accountId } = await newAccount();
      await put(token, P('alpha', '/lane'), { enabled: true });
      const { base_url: _omitted, ...noUrl } = declaration();
      const cases: [unknown, RegExp][] = [
        [noUrl, /command\.definition\.base_url/],
        [declaration({ api_format: 'soap' }), /command\.definition\.api_format/],
        [declaration({ credentials: 'password' }), /command\.definition\.credentials/],
        [
          declaration({ api_format: 'anthropic_messages', credentials: 'none' }),
          /command\.definition\.credentials: the anthropic_messages adapter supports/,
        ],
        [declaration({ base_url: 'ftp://example.test' }), /command\.definition\.base_url/],
        [declaration({ base_url: 'https://user:secret@example.test' }), /command\.definition\.base_url/],
        [declaration({ api_key: 'sk-in-a-declaration' }), /command\.definition: unknown field "api_key"/],
        ['not an object', /command\.definition/],
      ];
      for (const [definition, field] of cases) {
        await expectRefused(
          accountId,
          'alpha',
          () => put(token, P('alpha', '/definition'), { definition, expected_lock_version: 0 }),
          field,
        );
      }
      // A declaration that would leave a model uncomposable (the anthropic wire has no embeddings workload).
      await expectRefused(
        accountId,
        'alpha',
        () =>
          put(token, P('alpha', '/definition'), {
            definition: declaration({ api_format: 'anthropic_messages' }),
            expected_lock_version: 0,
          }),
        /command\.definition: model alpha\/emb would not compose/,
      );
      // A missing definition is 422 too; version errors keep their 400/409 codes and are checked first.
      await expectRefused(
        accountId,
        'alpha',
        () => put(token, P('alpha', '/definition'), { expected_lock_version: 0 }),
        /command\.definition/,
      );
      const badVersion = await put(token, P('alpha', '/definition'), { definition: 'x', expected_lock_version: -1 });
      expect([badVersion.status, badVersion.body.error.code]).toEqual([400, 'parameter_invalid']);
      expect((await h.call('PUT', P('alpha', '/definition'), { token, body: {} })).body.error.code).toBe('parameter_missing');
      // An id that cannot name a provider cannot be created.
      const badId = await put(token, P('Not_Valid!', '/definition'), { definition: declaration() });
      expect([badId.status, badId.body.error.code]).toEqual([422, 'validation_failed']);
      expect(await stored(accountId, 'Not_Valid!')).toBeUndefined();
    });
  });

  describe('model definitions', () => {
    it('[ADM-MDEF-1] [ADM-MDEF-4] PUT replaces the whole entry, stores it as authored, and rows show the composed result', async () => {
      const { token } = await newAccount();
      const first = await put(token, P('alpha', '/model_definition'), {
        model: 'alpha/a-1',
        definition: {
          inherit: 'chat',
          display_name: 'First',
          capabilities: { tool_calls: false },
          pricing: { unit: 'USD', input_per_million_tokens: '3', output_per_million_tokens: '4' },
        },
      });
      expect(first.status).toBe(200);
      const entry = first.body.configuration.models.find((m: { model: string }) => m.model === 'alpha/a-1');
      expect(entry).toEqual({
        model: 'alpha/a-1',
        definition: {
          inherit: 'chat',
          display_name: 'First',
          capabilities: { tool_calls: false },
          pricing: { unit: 'USD', input_per_million_tokens: '3', output_per_million_tokens: '4' },
        },
        source: 'override',
        removed: false,
      });
      expect(await row(token, 'alpha/a-1')).toMatchObject({
        display_name: 'First',
        capabilities: { tool_calls: false, input_modalities: ['image'] },
        pricing: { input_per_million_tokens: '3' },
      });
      // The second PUT does not merge with the first: display_name, tool_calls and pricing are gone.
      const second = await put(token, P('alpha', '/model_definition'), {
        model: 'alpha/a-1',
        definition: { inherit: 'chat' },
        expected_lock_version: 0,
      });
      expect(second.body.configuration.models.find((m: { model: string }) => m.model === 'alpha/a-1').definition).toEqual({
        inherit: 'chat',
      });
      expect(await row(token, 'alpha/a-1')).toMatchObject({ display_name: null, capabilities: { tool_calls: true }, pricing: null });
      expect(second.body.model_provider).toMatchObject({ lock_version: 1, enabled: false });
    });

    it('[ADM-MDEF-1] [ADM-REF-1] answers 404 for a ref outside the provider and for unknown models on delete and reset', async () => {
      const { token, accountId } = await newAccount();
      const outside = await put(token, P('alpha', '/model_definition'), { model: 'beta/b-1', definition: {} });
      expect([outside.status, outside.body.error.code]).toEqual([404, 'not_found']);
      expect(outside.body.error.message).not.toContain('beta/b-1');
      for (const [method, suffix] of [
        ['DELETE', '/model_definition'],
        ['POST', '/model_definition/reset'],
      ] as const) {
        const r = await send(method, token, P('alpha', suffix), { model: 'alpha/never-defined' });
        expect([r.status, r.body.error.code], `${method} ${suffix}`).toEqual([404, 'not_found']);
      }
      expect((await put(token, P('nobody', '/model_definition'), { model: 'nobody/x', definition: {} })).status).toBe(404);
      expect(await stored(accountId, 'alpha')).toBeUndefined();
    });

    it('[ADM-MDEF-2] [ADM-MDEF-3] DELETE writes a removal entry kept in the configuration; reset brings the file definition back', async () => {
      const { token } = await newAccount();
      await put(token, P('alpha', '/lane'), { enabled: true });
      const removed = await send('DELETE', token, P('alpha', '/model_definition'), { model: 'alpha/a-2', expected_lock_version: 0 });
      expect(removed.status).toBe(200);
      expect(removed.body.configuration.models.find((m: { model: string }) => m.model === 'alpha/a-2')).toEqual({
        model: 'alpha/a-2',
        definition: { inherit: 'chat' },
        source: 'catalog',
        removed: true,
      });
      expect(removed.body.model_provider).toMatchObject({ lock_version: 1, models: 3 });
      expect(await row(token, 'alpha/a-2')).toBeUndefined();
      // Removing again changes nothing (the entry is already a removal entry).
      expect(
        (await send('DELETE', token, P('alpha', '/model_definition'), { model: 'alpha/a-2', expected_lock_version: 1 })).body.model_provider
          .lock_version,
      ).toBe(1);
      // Reset: the entry goes, the file definition is back.
      const reset = await send('POST', token, P('alpha', '/model_definition/reset'), { model: 'alpha/a-2', expected_lock_version: 1 });
      expect(reset.status).toBe(200);
      expect(reset.body.configuration.models.find((m: { model: string }) => m.model === 'alpha/a-2')).toEqual({
        model: 'alpha/a-2',
        definition: { inherit: 'chat' },
        source: 'catalog',
        removed: false,
      });
      expect(await row(token, 'alpha/a-2')).toMatchObject({ ref: 'alpha/a-2' });
      // An override removed and reset: the file definition returns, the override is gone.
      await put(token, P('alpha', '/model_definition'), {
        model: 'alpha/a-1',
        definition: { display_name: 'Override' },
        expected_lock_version: 2,
      });
      await send('DELETE', token, P('alpha', '/model_definition'), { model: 'alpha/a-1', expected_lock_version: 3 });
      const back = await send('POST', token, P('alpha', '/model_definition/reset'), { model: 'alpha/a-1', expected_lock_version: 4 });
      expect(back.body.configuration.models.find((m: { model: string }) => m.model === 'alpha/a-1').source).toBe('catalog');
      expect((await row(token, 'alpha/a-1'))?.display_name).toBeNull();
      // A PUT also restores a removed model.
      await send('DELETE', token, P('alpha', '/model_definition'), { model: 'alpha/emb', expected_lock_version: 5 });
      await put(token, P('alpha', '/model_definition'), {
        model: 'alpha/emb',
        definition: { capabilities: { workload: 'embeddings' } },
        expected_lock_version: 6,
      });
      expect(await row(token, 'alpha/emb')).toMatchObject({ workload: 'embeddings' });
      // Reset of a model with nothing stored is a no-op at the same version.
      expect(
        (await send('POST', token, P('alpha', '/model_definition/reset'), { model: 'alpha/a-2', expected_lock_version: 7 })).body
          .model_provider.lock_version,
      ).toBe(7);
    });

    it('[ADM-MDEF-3] reset of a custom model without a file definition makes it disappear; removal keeps it listed', async () => {
      const { token } = await newAccount();
      await put(token, P('alpha', '/model_definition'), { model: 'alpha/custom-x', definition: { display_name: 'Mine' } });
      expect(await row(token, 'alpha/custom-x')).toMatchObject({ display_name: 'Mine' });
      const removed = await send('DELETE', token, P('alpha', '/model_definition'), { model: 'alpha/custom-x', expected_lock_version: 0 });
      expect(removed.body.configuration.models.find((m: { model: string }) => m.model === 'alpha/custom-x')).toEqual({
        model: 'alpha/custom-x',
        definition: { display_name: 'Mine' },
        source: 'custom',
        removed: true,
      });
      expect(await row(token, 'alpha/custom-x')).toBeUndefined();
      const reset = await send('POST', token, P('alpha', '/model_definition/reset'), { model: 'alpha/custom-x', expected_lock_version: 1 });
      expect(reset.body.configuration.models.map((m: { model: string }) => m.model)).not.toContain('alpha/custom-x');
      const again = await send('POST', token, P('alpha', '/model_definition/reset'), { model: 'alpha/custom-x', expected_lock_version: 2 });
      expect(again.status).toBe(404);
    });

    it('[ADM-MDEF-6] [ADM-LOCK-2] [ADM-LOCK-3] keeps part 1 version rules on every definition command', async () => {
      const { token } = await newAccount();
      await put(token, P('alpha', '/lane'), { enabled: true });
      const commands: [string, string, Record<string, unknown>][] = [
        ['PUT', '/definition', { definition: declaration() }],
        ['DELETE', '/definition', {}],
        ['PUT', '/model_definition', { model: 'alpha/a-1', definition: {} }],
        ['DELETE', '/model_definition', { model: 'alpha/a-1' }],
        ['POST', '/model_definition/reset', { model: 'alpha/a-1' }],
      ];
      for (const [method, suffix, command] of commands) {
        const where = `${method} ${suffix}`;
        // Null (omitted) conflicts with an existing policy; a stale version is 409; a malformed one is 400.
        expect((await send(method, token, P('alpha', suffix), command)).body.error?.code, where).toBe('stale_object');
        expect((await send(method, token, P('alpha', suffix), { ...command, expected_lock_version: 7 })).body.error?.code, where).toBe(
          'stale_object',
        );
        for (const bad of [2147483648, 1.5, '0']) {
          const r = await send(method, token, P('alpha', suffix), { ...command, expected_lock_version: bad });
          expect([r.status, r.body.error.code], where).toEqual([400, 'parameter_invalid']);
        }
        expect((await h.call(method, P('alpha', suffix), { token, body: {} })).body.error.code, where).toBe('parameter_missing');
      }
      expect((await h.call('GET', P('alpha'), { token })).body.model_provider.lock_version).toBe(0);
    });
  });

  describe('composition', () => {
    it('[ADM-DEF-1] [ADM-DEF-4] distinguishes explicit null, false and [] from omission, and replaces limits and arrays whole', async () => {
      const { token } = await newAccount();
      const define = async (key: string, definition: unknown) => {
        const r = await put(token, P('alpha', '/model_definition'), {
          model: `alpha/${key}`,
          definition,
          expected_lock_version: (await h.call('GET', P('alpha'), { token })).body.model_provider.lock_version,
        });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return (await row(token, `alpha/${key}`))!.capabilities;
      };
      const inherited = await define('inherits', { inherit: 'windowed' });
      expect(inherited).toMatchObject({
        input_modalities: ['image', 'pdf'],
        limits: { combined_input_output_tokens: 128000, output_tokens: 16000 },
        token_counter: { kind: 'bpe', encoding: 'o200k_base' },
        reasoning: { efforts: ['low', 'high'] },
      });
      const overridden = await define('nulls', {
        inherit: 'windowed',
        capabilities: { input_modalities: [], limits: { input_tokens: 4000 }, token_counter: null, reasoning: null, tool_calls: false },
      });
      // [] replaces the inherited array; limits replaced whole (no inherited output_tokens); null is the byte
      // estimate and "no reasoning", not "inherit"; false disables a wire capability.
      expect(overridden).toMatchObject({
        input_modalities: [],
        limits: { input_tokens: 4000 },
        token_counter: null,
        reasoning: null,
        tool_calls: false,
        streaming: true,
      });
      expect(overridden.limits).toEqual({ input_tokens: 4000 });
      // Omission of token_counter without inherit: the wire's counter.
      const plain = await define('plain', {});
      expect(plain.token_counter).toEqual({ kind: 'anchored', encoding: 'o200k_base', safety_factor: '1.25' });
      expect(plain).toMatchObject({
        input_modalities: [],
        output_modalities: ['text'],
        tool_calls: true,
        streaming: true,
        prompt_caching: false,
        structured_output: true,
      });
    });

    it('[ADM-TOK-2] [ADM-DEF-4] shows on the row when the selected counter is unavailable, and keeps that counter (no silent fallback)', async () => {
      const { token } = await newAccount();
      await put(token, P('alpha', '/model_definition'), {
        model: 'alpha/hub',
        definition: { capabilities: { token_counter: { kind: 'hub', tokenizer_id: 'org/not-installed' } } },
      });
      expect(await row(token, 'alpha/hub')).toMatchObject({
        token_counter_available: false,
        capabilities: { token_counter: { kind: 'hub', tokenizer_id: 'org/not-installed' } },
      });
      await put(token, P('alpha', '/model_definition'), {
        model: 'alpha/bpe',
        definition: { capabilities: { token_counter: { kind: 'bpe', encoding: 'cl100k_base' } } },
        expected_lock_version: 0,
      });
      expect(await row(token, 'alpha/bpe')).toMatchObject({
        token_counter_available: true,
        capabilities: { token_counter: { kind: 'bpe', encoding: 'cl100k_base' } },
      });
      // Saving a definition with a hub counter downloads nothing.
      expect(outgoing).toEqual([]);
    });

    it('[ADM-DEF-2] [ADM-DEF-7] follows the workload for output modalities and defaults model_id to the ref after the provider', async () => {
      const { token } = await newAccount();
      let version: number | null = null;
      for (const [key, workload, output] of [
        ['speak', 'speech', ['audio']],
        ['draw', 'image_generation', ['image']],
        ['embed', 'embeddings', ['embedding']],
        ['hear', 'transcription', ['text']],
      ] as const) {
        const definition = { capabilities: { workload, ...(workload === 'transcription' ? { input_modalities: ['audio'] } : {}) } };
        const r = await put(token, P('alpha', '/model_definition'), {
          model: `alpha/org/${key}`,
          definition,
          expected_lock_version: version,
        });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        version = r.body.model_provider.lock_version;
        expect(await row(token, `alpha/org/${key}`)).toMatchObject({
          model_id: `org/${key}`,
          workload,
          capabilities: { output_modalities: output },
        });
      }
    });

    it('[ADM-DEF-3] expands presets from {} or the differences, needs kind elsewhere, and empties the table only with {}', async () => {
      const { token, accountId } = await newAccount();
      const r = await put(token, P('alpha', '/model_definition'), {
        model: 'alpha/params',
        definition: {
          capabilities: {
            generation_parameters: {
              max_output_tokens: { maximum: 8192 },
              verbosity: { default: 'high' },
              seed: { kind: 'integer' },
              output_format: false,
            },
          },
        },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const caps = (await row(token, 'alpha/params'))!.capabilities;
      expect(caps.generation_parameters).toEqual({
        max_output_tokens: { kind: 'integer', default: null, minimum: 1, maximum: 8192, allowed_values: null },
        verbosity: { kind: 'string', default: 'high', minimum: null, maximum: null, allowed_values: ['low', 'medium', 'high'] },
        seed: { kind: 'integer', default: null, minimum: null, maximum: null, allowed_values: null },
      });
      // output_format false disables derived structured output; no unsupported parameter was added.
      expect(caps.structured_output).toBe(false);
      // Omitted: the wire's table; {}: an empty table.
      await put(token, P('alpha', '/model_definition'), { model: 'alpha/wire-table', definition: {}, expected_lock_version: 0 });
      expect(Object.keys((await row(token, 'alpha/wire-table'))!.capabilities.generation_parameters).sort()).toEqual([
        'max_output_tokens',
        'temperature',
        'top_p',
      ]);
      await put(token, P('alpha', '/model_definition'), {
        model: 'alpha/no-table',
        definition: { capabilities: { generation_parameters: {} } },
        expected_lock_version: 1,
      });
      expect((await row(token, 'alpha/no-table'))!.capabilities.generation_parameters).toEqual({});
      // kind missing on a parameter without a preset is invalid.
      await expectRefused(
        accountId,
        'alpha',
        () =>
          put(token, P('alpha', '/model_definition'), {
            model: 'alpha/bad',
            definition: { capabilities: { generation_parameters: { top_k: {} } } },
            expected_lock_version: 2,
          }),
        /command\.definition: generation_parameters\.top_k: kind is required/,
      );
    });

    it('[ADM-DEF-5] [ADM-DEF-6] [ADM-CAT-4] checks model_identity and prices; prices are never inherited', async () => {
      const { token, accountId } = await newAccount();
      const ok = await put(token, P('alpha', '/model_definition'), {
        model: 'alpha/free',
        definition: {
          inherit: 'chat',
          capabilities: { model_identity: 'vendor/free-1' },
          pricing: { unit: 'USD', input_per_million_tokens: '0', output_per_million_tokens: '0' },
        },
      });
      expect(ok.status).toBe(200);
      expect(await row(token, 'alpha/free')).toMatchObject({
        pricing: { input_per_million_tokens: '0', output_per_million_tokens: '0' },
        capabilities: { model_identity: 'vendor/free-1' },
      });
      // A price-less model is still a model (availability does not depend on prices).
      await put(token, P('alpha', '/model_definition'), {
        model: 'alpha/priceless',
        definition: { inherit: 'chat' },
        expected_lock_version: 0,
      });
      expect((await row(token, 'alpha/priceless'))!.pricing).toBeNull();
      const cases: [unknown, RegExp][] = [
        [{ capabilities: { model_identity: ' padded' } }, /command\.definition\.capabilities\.model_identity/],
        [{ capabilities: { model_identity: '' } }, /command\.definition\.capabilities\.model_identity/],
        [
          { capabilities: { model_identity: 'é'.repeat(129) } },
          /command\.definition\.capabilities\.model_identity: model_identity: at most 256 bytes/,
        ],
        [
          { pricing: { unit: 'USD', input_per_million_tokens: '-1', output_per_million_tokens: '1' } },
          /command\.definition\.pricing\.input_per_million_tokens/,
        ],
        [{ pricing: { unit: 'USD', input_per_million_tokens: '1' } }, /command\.definition: pricing: text_generation needs/],
        [
          { pricing: { unit: 'USD', per_image: '1', input_per_million_tokens: '1', output_per_million_tokens: '1' } },
          /pricing: per_image does not apply/,
        ],
      ];
      for (const [definition, field] of cases) {
        await expectRefused(
          accountId,
          'alpha',
          () => put(token, P('alpha', '/model_definition'), { model: 'alpha/bad', definition, expected_lock_version: 1 }),
          field,
        );
      }
    });

    it('[ADM-MDEF-5] [ADM-DEF-1] refuses an unknown inherit and invalid composed models with 422, without echoing input, nothing saved', async () => {
      const { token, accountId } = await newAccount();
      await put(token, P('alpha', '/lane'), { enabled: true });
      const cases: [unknown, RegExp][] = [
        [{ inherit: 'sk-looks-like-a-key' }, /command\.definition\.inherit: unknown model definition; the choices are .*chat, windowed/],
        [
          { capabilities: { workload: 'embeddings', tool_calls: true } },
          /command\.definition: tool_calls: the openai_chat wire does not support it/,
        ],
        [{ capabilities: { workload: 'speech', reasoning: { efforts: ['low'] } } }, /command\.definition: reasoning/],
        [
          { inherit: 'windowed', capabilities: { token_counter: { kind: 'hub', tokenizer_id: 'org/tok' } } },
          /command\.definition: the composed capabilities are invalid: capabilities\.token_counter/,
        ],
        [{ capabilities: { wire_options: { prompt_format: 'model4' } } }, /command\.definition\.capabilities\.wire_options\.prompt_format/],
        [
          { capabilities: { token_counter: { kind: 'anchored', encoding: 'o200k_base', safety_factor: '0.9' } } },
          /safety_factor: at least 1/,
        ],
        [{ capabilities: { generation_parameters: { temperature: false } } }, /false is accepted only for output_format/],
        [{ surprise: true }, /command\.definition: unknown field "surprise"/],
      ];
      for (const [definition, field] of cases) {
        const r = await put(token, P('alpha', '/model_definition'), { model: 'alpha/a-1', definition, expected_lock_version: 0 });
        expect(r.text).not.toContain('sk-looks-like-a-key');
        await expectRefused(
          accountId,
          'alpha',
          async () => put(token, P('alpha', '/model_definition'), { model: 'alpha/a-1', definition, expected_lock_version: 0 }),
          field,
        );
      }
      await expectRefused(
        accountId,
        'alpha',
        () => put(token, P('alpha', '/model_definition'), { model: 'alpha/ padded', definition: {}, expected_lock_version: 0 }),
        /command\.model/,
      );
    });

    it('[ADM-LIM-1] [ADM-MDEF-5] refuses a definition over the policy limits (256 refs, 2 MiB) with the policy byte-identical', async () => {
      const { token, accountId } = await newAccount();
      const db = narrowTables<PlatformDatabase, AdminTables>(h.platform.ctx.database.db);
      const full = {
        ...emptyDocument(),
        model_definitions: Object.fromEntries(Array.from({ length: 256 }, (_, i) => [`alpha/m${i}`, {}])),
      };
      await insertPolicyIfAbsent(db, { accountId, providerId: 'alpha' }, { enabled: false, document: serializeDocument(full) }, 0);
      await expectRefused(
        accountId,
        'alpha',
        () => put(token, P('alpha', '/model_definition'), { model: 'alpha/one-more', definition: {}, expected_lock_version: 0 }),
        /257 distinct models; the limit is 256/,
      );
      // Replacing one of the 256 is fine.
      expect(
        (
          await put(token, P('alpha', '/model_definition'), {
            model: 'alpha/m0',
            definition: { display_name: 'Zero' },
            expected_lock_version: 0,
          })
        ).status,
      ).toBe(200);

      const big = await newAccount();
      // A stored document just under 2 MiB: long allowed_values lists in one entry's parameter table.
      const values = Array.from({ length: 64 }, (_, i) => `${String(i).padStart(3, '0')}${'v'.repeat(250)}`);
      const params = (n: number) =>
        Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { kind: 'string' as const, allowed_values: values }]));
      let count = 110;
      while (
        Buffer.byteLength(
          serializeDocument({
            ...emptyDocument(),
            model_definitions: { 'alpha/big': { capabilities: { generation_parameters: params(count + 1) } } },
          }),
        ) <
        MAX_POLICY_BYTES - 40_000
      )
        count++;
      await insertPolicyIfAbsent(
        db,
        { accountId: big.accountId, providerId: 'alpha' },
        {
          enabled: false,
          document: serializeDocument({
            ...emptyDocument(),
            model_definitions: { 'alpha/big': { capabilities: { generation_parameters: params(count) } } },
          }),
        },
        0,
      );
      await expectRefused(
        big.accountId,
        'alpha',
        () =>
          put(big.token, P('alpha', '/model_definition'), {
            model: 'alpha/big2',
            definition: { capabilities: { generation_parameters: params(5) } },
            expected_lock_version: 0,
          }),
        /bytes of canonical JSON; the limit is 2097152/,
      );
    });
  });

  it('[ADM-LIVE-2] [ADM-READ-4] makes no upstream request from any definition route or read', async () => {
    const { token } = await newAccount();
    await put(token, P('acme', '/definition'), { definition: declaration({ credentials: 'none' }) });
    await put(token, P('acme', '/model_definition'), { model: 'acme/m', definition: {}, expected_lock_version: 0 });
    await put(token, P('acme', '/lane'), { enabled: true, expected_lock_version: 1 });
    expect(await row(token, 'acme/m')).toMatchObject({ available: true });
    await send('DELETE', token, P('acme', '/model_definition'), { model: 'acme/m', expected_lock_version: 2 });
    await send('POST', token, P('acme', '/model_definition/reset'), { model: 'acme/m', expected_lock_version: 3 });
    await send('DELETE', token, P('acme', '/definition'), { expected_lock_version: 4 });
    await h.call('GET', P('acme'), { token });
    await h.call('GET', '/agent_api/v1/models', { token });
    expect(upstream.requests).toEqual([]);
    expect(outgoing).toEqual([]);
  });
});

describe.each(dialects)('definitions across replicas on %s', (dialect) => {
  let h: Harness;
  let second: DatabaseHandle<PlatformDatabase>;
  let secondCtx: PlatformContext;
  let replica: TestRestApp;
  let callB: ReturnType<typeof httpClient>['call'];
  beforeAll(async () => {
    h = await openHarness(dialect, { catalog: TEST_CATALOG });
    // A second app with its own connection to the same database: another replica (spec: every service is stateless
    // apart from the database).
    second = await openDatabase<PlatformDatabase>(h.platform.database.url);
    secondCtx = await openContext({ config: h.platform.ctx.config, log: silentLogger(), database: second, migrate: false });
    replica = await startRestApp({ ...h.platform, ctx: secondCtx });
    callB = httpClient(replica.url, replica.responses).call;
  });
  afterAll(async () => {
    await replica.close();
    await secondCtx.close();
    await second.close();
    await h.close();
  });

  it('[ADM-LIVE-1] [ADM-MEM-3] shows a definition saved on one replica to the next read on the other, admin and member planes, without a restart', async () => {
    const owner = await h.platform.ctx.identity.bootstrap({
      accountName: 'Replicas',
      email: `rep-${Math.random().toString(36).slice(2)}@example.test`,
    });
    const token = owner.platform_token;
    const member = await h.platform.ctx.identity.createToken({ humanId: owner.human_id, plane: 'member' });
    const on = (call: typeof callB) => ({
      models: async (path = '/api/v1/admin/models', t = token) =>
        (await call('GET', path, { token: t })).body.models as { ref: string; display_name: string | null }[],
    });
    // Warm both replicas' caches first, so a stale cache would show.
    expect((await on(callB).models()).map((m) => m.ref)).not.toContain('alpha/new');
    expect((await on(h.call).models()).map((m) => m.ref)).not.toContain('alpha/new');
    const saved = await h.call('PUT', P('alpha', '/model_definition'), {
      token,
      body: { command: { model: 'alpha/new', definition: { inherit: 'chat', display_name: 'New' } } },
    });
    expect(saved.status).toBe(200);
    expect((await on(callB).models()).find((m) => m.ref === 'alpha/new')?.display_name).toBe('New');
    // Replica B writes next, with the version A returned; A sees it.
    await callB('PUT', P('alpha', '/lane'), { token, body: { command: { enabled: true, expected_lock_version: 0 } } });
    const renamed = await callB('PUT', P('alpha', '/model_definition'), {
      token,
      body: { command: { model: 'alpha/new', definition: { inherit: 'chat', display_name: 'Renamed' }, expected_lock_version: 1 } },
    });
    expect(renamed.status).toBe(200);
    expect((await on(h.call).models()).find((m) => m.ref === 'alpha/new')?.display_name).toBe('Renamed');
    expect((await on(h.call).models('/agent_api/v1/models', member.token)).find((m) => m.ref === 'alpha/new')?.display_name).toBe(
      'Renamed',
    );
    // A provider declaration too: created on A, listed by B; removed on B, gone from A.
    await h.call('PUT', P('acme', '/definition'), {
      token,
      body: {
        command: {
          definition: { display_name: 'Acme', base_url: 'https://acme.example/v1', api_format: 'openai_chat', credentials: 'none' },
        },
      },
    });
    expect(
      (await callB('GET', '/api/v1/admin/model_providers', { token })).body.model_providers.map((p: { id: string }) => p.id),
    ).toContain('acme');
    await callB('DELETE', P('acme', '/definition'), { token, body: { command: { expected_lock_version: 0 } } });
    expect((await h.call('GET', P('acme'), { token })).body.configuration.source).toBe('removed');
  });
});
