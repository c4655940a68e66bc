/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-argument -- response bodies are untyped JSON (Reply.body); the assertions pin their shape */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialAad } from '../../src/admin/projection/projection.ts';
import { emptyDocument, serializeDocument } from '../../src/admin/policy/policy.document.ts';
import { insertPolicyIfAbsent, setUnavailableUntil } from '../../src/admin/policy/policy.store.ts';
import { insertCredentialIfAbsent } from '../../src/admin/credentials/credentials.store.ts';
import { encryptSecret } from '../../src/core/crypto.ts';
import { dialects } from '../support/databases.ts';
import { openHarness, P, TEST_CATALOG, writeCatalog, type Harness } from './admin-harness.ts';
import { narrowTables } from '../../src/core/db/database.ts';

/** A fresh Account with its owner's platform token, so every test owns its policies. */
async function newAccount(h: Harness): Promise<{ token: string; accountId: string }> {
  const owner = await h.platform.ctx.identity.bootstrap({
    accountName: 'Routes test',
    email: `owner-${Math.random().toString(36).slice(2)}@example.test`,
  });
  return { token: owner.platform_token, accountId: owner.account_id };
}

describe.each(dialects)('admin routes on %s', (dialect) => {
  let h: Harness;
  const outgoing: string[] = [];
  beforeAll(async () => {
    h = await openHarness(dialect, {
      catalog: TEST_CATALOG,
      fetch: async (input) => {
        outgoing.push(input instanceof Request ? input.url : input.toString());
        throw new Error('no provider network in these tests');
      },
    });
  });
  afterAll(async () => h.close());

  const put = (token: string, path: string, command: unknown) => h.call('PUT', path, { token, body: { command } });

  describe('reads', () => {
    it('[ADM-READ-1] [ADM-ROW-1] GET /models returns the whole catalog ordered by ref, unavailable models included', async () => {
      const { token } = await newAccount(h);
      const r = await h.call('GET', '/api/v1/admin/models', { token });
      expect(r.status).toBe(200);
      const refs = r.body.models.map((m: { ref: string }) => m.ref);
      expect(refs).toEqual(['alpha/a-1', 'alpha/a-2', 'alpha/emb', 'alpha/org/a-3', 'beta/b-1', 'local/l-1']);
      expect(refs).toEqual([...refs].sort());
      const a1 = r.body.models[0];
      expect(Object.keys(a1)).toEqual([
        'ref',
        'provider_id',
        'model_id',
        'display_name',
        'workload',
        'capabilities',
        'pricing',
        'token_counter_available',
        'available',
        'visible',
        'unavailable_reason',
      ]);
      expect(a1).toMatchObject({
        ref: 'alpha/a-1',
        available: false,
        visible: true,
        unavailable_reason: 'provider_disabled',
        pricing: { unit: 'USD', input_per_million_tokens: '1.00' },
      });
      expect(a1.capabilities).toMatchObject({ input_modalities: ['image'], output_modalities: ['text'], tool_calls: true, limits: {} });
      expect(r.body.models[1].pricing).toBeNull();
    });

    it('[ADM-READ-1] filters by workload and availability and refuses malformed filters', async () => {
      const { token } = await newAccount(h);
      expect((await put(token, P('local', '/lane'), { enabled: true })).status).toBe(200);
      const emb = await h.call('GET', '/api/v1/admin/models?workload=embeddings', { token });
      expect(emb.body.models.map((m: { ref: string }) => m.ref)).toEqual(['alpha/emb']);
      const available = await h.call('GET', '/api/v1/admin/models?available=true', { token });
      expect(available.body.models.map((m: { ref: string }) => m.ref)).toEqual(['local/l-1']);
      const unavailable = await h.call('GET', '/api/v1/admin/models?available=false&workload=text_generation', { token });
      expect(unavailable.body.models.map((m: { ref: string }) => m.ref)).toEqual(['alpha/a-1', 'alpha/a-2', 'alpha/org/a-3', 'beta/b-1']);
      for (const bad of ['workload=chat', 'available=yes', 'available=true&available=false']) {
        const r = await h.call('GET', `/api/v1/admin/models?${bad}`, { token });
        expect(r.status, bad).toBe(400);
        expect(r.body.error.code).toBe('parameter_invalid');
      }
    });

    it('[ADM-READ-1] serves the same catalog gzip-compressed to clients that accept it', async () => {
      const { token } = await newAccount(h);
      const plain = await h.call('GET', '/api/v1/admin/models', { token, headers: { 'accept-encoding': 'identity' } });
      expect(plain.headers.get('content-encoding')).toBeNull();
      expect(plain.headers.get('vary')).toMatch(/accept-encoding/i);
      // fetch decompresses transparently; the header shows what travelled.
      const zipped = await h.call('GET', '/api/v1/admin/models', { token, headers: { 'accept-encoding': 'gzip' } });
      expect(zipped.headers.get('content-encoding')).toBe('gzip');
      expect(zipped.text).toBe(plain.text);
      const refused = await h.call('GET', '/api/v1/admin/models', { token, headers: { 'accept-encoding': 'gzip;q=0, identity' } });
      expect(refused.headers.get('content-encoding')).toBeNull();
      // A write changes the next read, compressed or not.
      await put(token, P('local', '/lane'), { enabled: true });
      const after = await h.call('GET', '/api/v1/admin/models?available=true', { token, headers: { 'accept-encoding': 'gzip' } });
      expect(after.body.models.map((m: { ref: string }) => m.ref)).toEqual(['local/l-1']);
    });

    it('[ADM-ROW-3] [ADM-READ-3] lists provider rows with every field; lock_version is null without a policy', async () => {
      const { token, accountId } = await newAccount(h);
      const now = h.platform.ctx.clock.now();
      await setUnavailableUntil(narrowTables(h.platform.ctx.database.db), { accountId, providerId: 'alpha' }, now + 60_000, now);
      await setUnavailableUntil(narrowTables(h.platform.ctx.database.db), { accountId, providerId: 'local' }, now - 1, now);
      const r = await h.call('GET', '/api/v1/admin/model_providers', { token });
      expect(r.status).toBe(200);
      expect(r.body.model_providers.map((p: { id: string }) => p.id)).toEqual(['alpha', 'beta', 'local']);
      expect(r.body.model_providers[0]).toEqual({
        id: 'alpha',
        display_name: 'Alpha AI',
        credentials: 'api_key',
        enabled: false,
        lock_version: null,
        configured: false,
        material_kind: null,
        reauthorization_required: false,
        unavailable_until: new Date(now + 60_000).toISOString(),
        models: 4,
      });
      // A floor in the past is no floor.
      expect(r.body.model_providers[2]).toMatchObject({ id: 'local', credentials: 'none', unavailable_until: null, models: 1 });
    });

    it('[ADM-ROW-4] returns the singular provider with its unexpanded configuration and no credential material', async () => {
      const { token } = await newAccount(h);
      await put(token, P('alpha', '/api_key'), { api_key: 'sk-config-test-key' });
      const r = await h.call('GET', P('alpha'), { token });
      expect(r.status).toBe(200);
      expect(r.body.model_provider).toMatchObject({
        id: 'alpha',
        enabled: true,
        lock_version: 0,
        configured: true,
        material_kind: 'api_key',
      });
      const configuration = r.body.configuration;
      expect(configuration.source).toBe('catalog');
      expect(configuration.definition).toEqual({
        display_name: 'Alpha AI',
        base_url: 'https://alpha.example/v1',
        api_format: 'openai_chat',
        credentials: 'api_key',
      });
      expect(configuration.models).toContainEqual({
        model: 'alpha/org/a-3',
        definition: { inherit: 'chat', model_id: 'org/a-3-2025-01' },
        source: 'catalog',
        removed: false,
      });
      // Authored, not expanded: no inherited fields and no defaults filled in; capability fields under capabilities.
      expect(configuration.models.find((m: { model: string }) => m.model === 'alpha/emb').definition).toEqual({
        capabilities: { workload: 'embeddings' },
      });
      expect(Object.keys(configuration.model_definitions)).toEqual(['chat']);
      expect(r.text).not.toContain('sk-config-test-key');
      expect((await h.call('GET', P('nope'), { token })).body.error.code).toBe('not_found');
    });

    it('[ADM-READ-4] makes no provider network request', async () => {
      const { token } = await newAccount(h);
      await put(token, P('alpha', '/api_key'), { api_key: 'sk-read-network' });
      for (const path of ['/api/v1/admin/models', '/api/v1/admin/model_providers', P('alpha'), '/api/v1/admin/account/cost_unit']) {
        expect((await h.call('GET', path, { token })).status).toBe(200);
      }
      expect(outgoing).toEqual([]);
    });
  });

  describe('availability reasons', () => {
    it('[ADM-ROW-2] reports the first refusal in the spec order', async () => {
      const { token, accountId } = await newAccount(h);
      const reason = async (ref: string) => {
        const models = (await h.call('GET', '/api/v1/admin/models', { token })).body.models as {
          ref: string;
          unavailable_reason: string | null;
          available: boolean;
        }[];
        const row = models.find((m) => m.ref === ref);
        return row?.unavailable_reason;
      };
      // Disabled wins over invalid and hidden.
      await put(token, P('alpha', '/model_visibility'), { model: 'alpha/a-1', visible: false });
      await put(token, P('alpha', '/model_availability'), { model: 'alpha/a-1', available: false, expected_lock_version: 0 });
      expect(await reason('alpha/a-1')).toBe('provider_disabled');
      await put(token, P('alpha', '/lane'), { enabled: true, expected_lock_version: 1 });
      expect(await reason('alpha/a-1')).toBe('model_unavailable');
      await put(token, P('alpha', '/model_availability'), { model: 'alpha/a-1', available: true, expected_lock_version: 2 });
      expect(await reason('alpha/a-1')).toBe('model_hidden');
      expect(await reason('alpha/a-2')).toBe('missing_credential');
      await put(token, P('alpha', '/api_key'), { api_key: 'sk-order' });
      expect(await reason('alpha/a-2')).toBeNull();

      // OAuth lane: material stored by the (out-of-scope) authorization flow, flagged for re-authorization.
      const db = h.platform.ctx.database.db;
      const keys = h.platform.ctx.secretKeys;
      await put(token, P('beta', '/lane'), { enabled: true });
      expect(await reason('beta/b-1')).toBe('missing_credential');
      await insertCredentialIfAbsent(
        narrowTables(db),
        { accountId, providerId: 'beta' },
        {
          material_kind: 'oauth_tokens',
          sealed: encryptSecret('{"refresh_token":"r"}', keys.current, credentialAad(accountId, 'beta')),
          generation: 1,
        },
        0,
      );
      expect(await reason('beta/b-1')).toBeNull();
      await db.updateTable('model_provider_credentials').set({ reauthorization_required: 1 }).where('account_id', '=', accountId).execute();
      expect(await reason('beta/b-1')).toBe('reauthorization_required');
      // Material sealed under a key this deployment does not hold is unusable.
      await db
        .updateTable('model_provider_credentials')
        .set({
          reauthorization_required: 0,
          sealed: encryptSecret('x', { id: 'deadbeef', key: Buffer.alloc(32, 9) }, credentialAad(accountId, 'beta')),
        })
        .where('account_id', '=', accountId)
        .execute();
      expect(await reason('beta/b-1')).toBe('credential_unusable');
      // A no-credential lane needs only enabling.
      await put(token, P('local', '/lane'), { enabled: true });
      expect(await reason('local/l-1')).toBeNull();
    });
  });

  describe('credential checks', () => {
    it("[ADM-KEY-9] regression: a sealed key copied into another Account's row is credential_unusable there, even after it was found usable in its own row", async () => {
      const a = await newAccount(h);
      const b = await newAccount(h);
      await put(a.token, P('alpha', '/api_key'), { api_key: 'sk-copied-row' });
      const own = (await h.call('GET', '/api/v1/admin/models', { token: a.token })).body.models.find(
        (m: { ref: string }) => m.ref === 'alpha/a-1',
      );
      expect(own.unavailable_reason).toBeNull();
      const db = h.platform.ctx.database.db;
      const row = await db
        .selectFrom('model_provider_credentials')
        .select('sealed')
        .where('account_id', '=', a.accountId)
        .where('provider_id', '=', 'alpha')
        .executeTakeFirstOrThrow();
      // The same sealed value in Account B's row: bound to A's row (associated data), so it must not open for B.
      await insertCredentialIfAbsent(
        narrowTables(db),
        { accountId: b.accountId, providerId: 'alpha' },
        { material_kind: 'api_key', sealed: row.sealed, generation: 1 },
        0,
      );
      await put(b.token, P('alpha', '/lane'), { enabled: true });
      const copied = (await h.call('GET', '/api/v1/admin/models', { token: b.token })).body.models.find(
        (m: { ref: string }) => m.ref === 'alpha/a-1',
      );
      expect(copied).toMatchObject({ available: false, unavailable_reason: 'credential_unusable' });
    });
  });

  describe('references', () => {
    it('[ADM-READ-2] [ADM-REF-1] take refs whole from the body, "/" in the upstream id included', async () => {
      const { token } = await newAccount(h);
      const hidden = await put(token, P('alpha', '/model_visibility'), { model: 'alpha/org/a-3', visible: false });
      expect(hidden.status).toBe(200);
      const rows = (await h.call('GET', '/api/v1/admin/models', { token })).body.models;
      expect(rows.find((m: { ref: string }) => m.ref === 'alpha/org/a-3')).toMatchObject({
        model_id: 'org/a-3-2025-01',
        visible: false,
        unavailable_reason: 'provider_disabled',
      });
      // The ref is never split into path segments.
      const split = await h.call('PUT', '/api/v1/admin/model_providers/alpha/org/a-3/model_visibility', {
        token,
        body: { command: { visible: true } },
      });
      expect(split.status).toBe(404);
    });

    it('[ADM-REF-1] refuses a ref of another provider or an unknown model with 404 not_found', async () => {
      const { token } = await newAccount(h);
      for (const model of ['beta/b-1', 'alpha/missing', 'alpha', 'alphax/a-1', 'org/a-3']) {
        for (const path of ['/model_visibility', '/model_availability']) {
          const command =
            path === '/model_visibility' ? { model, visible: false } : { model, available: false, expected_lock_version: null };
          const r = await put(token, P('alpha', path), command);
          expect(r.status, `${path} ${model}`).toBe(404);
          expect(r.body.error.code).toBe('not_found');
        }
      }
      expect((await h.call('GET', P('alpha'), { token })).body.model_provider.lock_version).toBeNull();
    });

    it('[ADM-READ-3] answers 404 not_found for unknown providers on every provider route', async () => {
      const { token } = await newAccount(h);
      const cases: [string, string, unknown][] = [
        ['GET', P('ghost'), undefined],
        ['PUT', P('ghost', '/lane'), { command: { enabled: true } }],
        ['PUT', P('ghost', '/model_visibility'), { command: { model: 'ghost/x', visible: false } }],
        ['PUT', P('ghost', '/model_availability'), { command: { model: 'ghost/x', available: false, expected_lock_version: null } }],
        ['PUT', P('ghost', '/api_key'), { command: { api_key: 'sk-ghost' } }],
        ['DELETE', P('ghost', '/api_key'), undefined],
      ];
      for (const [method, path, body] of cases) {
        const r = await h.call(method, path, { token, ...(body ? { body } : {}) });
        expect(r.status, `${method} ${path}`).toBe(404);
        expect(r.body).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
      }
    });

    it('[ADM-READ-3] regression: a provider_id longer than 63 characters (or otherwise malformed) is 404 not_found, not 400', async () => {
      const { token } = await newAccount(h);
      for (const id of ['a'.repeat(64), 'x'.repeat(1000), 'Alpha', 'al%20pha', '-alpha']) {
        const cases: [string, string, unknown][] = [
          ['GET', P(id), undefined],
          ['PUT', P(id, '/lane'), { command: { enabled: true } }],
          ['PUT', P(id, '/model_visibility'), { command: { model: 'alpha/a-1', visible: false } }],
          ['PUT', P(id, '/model_availability'), { command: { model: 'alpha/a-1', available: false, expected_lock_version: null } }],
          ['PUT', P(id, '/api_key'), { command: { api_key: 'sk-long-id' } }],
          ['DELETE', P(id, '/api_key'), undefined],
        ];
        for (const [method, path, body] of cases) {
          const r = await h.call(method, path, { token, ...(body ? { body } : {}) });
          expect(r.status, `${method} ${path.slice(0, 80)}`).toBe(404);
          expect(r.body.error.code).toBe('not_found');
        }
      }
    });
  });

  describe('error messages', () => {
    it('[ADM-ERR-1] regression: a key-looking string sent as a field name, as model, in the path or the query never comes back', async () => {
      const { token } = await newAccount(h);
      const key = 'sk-LEAKz9QvT3kPq7Wm2Xb8Yn4Rc6Hd1Jf5Gs0Lt';
      const replies = [
        // Unknown fields inside command and at the body root (zod would say `Unrecognized key: "sk-LEAK…"`).
        await put(token, P('alpha', '/lane'), { enabled: true, [key]: 1 }),
        await h.call('PUT', P('alpha', '/lane'), { token, body: { command: { enabled: true }, [key]: 1 } }),
        await put(token, P('alpha', '/api_key'), { [key]: 'x' }),
        await put(token, '/api/v1/admin/account/cost_unit', { cost_unit: key }),
        await h.call('PUT', '/api/v1/admin/account/cost_unit', { token, body: { command: { cost_unit: 'USD', [key]: true } } }),
        // The key as the model reference: unknown, outside the provider, bare, and over the length limit.
        ...(await Promise.all(
          [key, `alpha/${key}`, `beta/${key}`, `alpha/${key.repeat(12)}`].flatMap((model) => [
            put(token, P('alpha', '/model_visibility'), { model, visible: false }),
            put(token, P('alpha', '/model_availability'), { model, available: false, expected_lock_version: null }),
          ]),
        )),
        // In the path (a provider id) and the query (a filter value and a parameter name).
        await h.call('GET', P(key.toLowerCase()), { token }),
        await put(token, P(key.toLowerCase(), '/lane'), { enabled: true }),
        await h.call('GET', `/api/v1/admin/models?workload=${key}`, { token }),
        await h.call('GET', `/api/v1/admin/models?${key}=1`, { token }),
      ];
      for (const r of replies) {
        expect(r.status, r.text).toBeGreaterThanOrEqual(200);
        expect(r.text.toLowerCase(), r.text).not.toContain('leak');
      }
      expect(replies.filter((r) => r.status >= 400).length).toBeGreaterThanOrEqual(15);
      // The request log records URL paths (the core's "request completed" line); bodies and messages never reach it.
      expect(h.platform.logs.text()).not.toContain(key);
      // A short snake_case field name is still named, so a typo stays easy to find.
      const typo = await put(token, P('alpha', '/lane'), { enabled: true, expected_version: 3 });
      expect(typo.body.error).toEqual({ code: 'parameter_invalid', message: 'command: unknown field "expected_version"' });
      const root = await h.call('PUT', P('alpha', '/lane'), { token, body: { command: { enabled: true }, Command: 1 } });
      expect(root.body.error.message).toBe('body: unknown field (fields go inside "command")');
    });
  });

  describe('body handling', () => {
    it('[ADM-API-2] answers an oversized body with 413 and a non-JSON body with 415, in the envelope', async () => {
      const { token } = await newAccount(h);
      const huge = await h.call('PUT', P('alpha', '/api_key'), {
        token,
        rawBody: JSON.stringify({ command: { api_key: 'k'.repeat(2 * 1024 * 1024) } }),
      });
      expect(huge.status).toBe(413);
      expect(huge.body).toEqual({ error: { code: 'payload_too_large', message: expect.any(String) } });
      const text = await h.call('PUT', P('alpha', '/lane'), {
        token,
        rawBody: '<command enabled="true"/>',
        headers: { 'content-type': 'application/xml' },
      });
      expect(text.status).toBe(415);
      expect(text.body).toEqual({ error: { code: 'unsupported_media_type', message: expect.any(String) } });
      expect((await h.call('GET', P('alpha'), { token })).body.model_provider.lock_version).toBeNull();
    });
  });

  describe('commands and versions', () => {
    it('[ADM-CMD-1] needs the root command (400 parameter_missing) and answers successes with 200', async () => {
      const { token } = await newAccount(h);
      for (const body of [undefined, {}, { enabled: true }, { command: null }]) {
        const r = await h.call('PUT', P('alpha', '/lane'), { token, ...(body !== undefined ? { body } : {}) });
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect(r.body.error.code).toBe('parameter_missing');
      }
      const malformed = await h.call('PUT', P('alpha', '/lane'), { token, rawBody: '{"command":' });
      expect(malformed.body).toEqual({ error: { code: 'parameter_invalid', message: expect.any(String) } });
      const extra = await put(token, P('alpha', '/lane'), { enabled: true, expected_version: 3 });
      expect(extra.body.error.code).toBe('parameter_invalid');
      const ok = await put(token, P('alpha', '/lane'), { enabled: true });
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ model_provider: expect.objectContaining({ id: 'alpha', enabled: true, lock_version: 0 }) });
    });

    it('[ADM-LOCK-1] refuses versions of the wrong type or out of range with 400 parameter_invalid', async () => {
      const { token } = await newAccount(h);
      await put(token, P('alpha', '/lane'), { enabled: true });
      for (const version of [-1, 2147483648, 1.5, '0', true, [], {}, 1e20]) {
        for (const [path, command] of [
          ['/lane', { enabled: false, expected_lock_version: version }],
          ['/model_visibility', { model: 'alpha/a-1', visible: false, expected_lock_version: version }],
          ['/model_availability', { model: 'alpha/a-1', available: false, expected_lock_version: version }],
        ] as const) {
          const r = await put(token, P('alpha', path), command);
          expect(r.status, `${path} ${JSON.stringify(version)}`).toBe(400);
          expect(r.body.error.code).toBe('parameter_invalid');
        }
      }
      // The top of the range is a valid version (here a stale one), not a malformed one.
      const top = await put(token, P('alpha', '/lane'), { enabled: false, expected_lock_version: 2147483647 });
      expect(top.status).toBe(409);
      expect((await h.call('GET', P('alpha'), { token })).body.model_provider).toMatchObject({ enabled: true, lock_version: 0 });
    });

    it('[ADM-LOCK-2] answers a stale version with 409 stale_object and does not retry', async () => {
      const { token } = await newAccount(h);
      await put(token, P('alpha', '/lane'), { enabled: true });
      await put(token, P('alpha', '/model_visibility'), { model: 'alpha/a-1', visible: false, expected_lock_version: 0 });
      const stale = await put(token, P('alpha', '/model_visibility'), { model: 'alpha/a-2', visible: false, expected_lock_version: 0 });
      expect(stale.status).toBe(409);
      expect(stale.body.error.code).toBe('stale_object');
      const after = await h.call('GET', P('alpha'), { token });
      expect(after.body.model_provider.lock_version).toBe(1);
      const rows = (await h.call('GET', '/api/v1/admin/models', { token })).body.models;
      expect(rows.find((m: { ref: string }) => m.ref === 'alpha/a-2').visible).toBe(true);
    });

    it('[ADM-LOCK-7] regression: a change at the version ceiling 2147483647 is 409 stale_object (a spec code), not conflict', async () => {
      const { token, accountId } = await newAccount(h);
      await put(token, P('alpha', '/model_visibility'), { model: 'alpha/a-1', visible: false });
      const db = h.platform.ctx.database.db;
      await db
        .updateTable('model_provider_policies')
        .set({ lock_version: 2147483647 })
        .where('account_id', '=', accountId)
        .where('provider_id', '=', 'alpha')
        .execute();
      const attempts: [string, unknown][] = [
        ['/model_visibility', { model: 'alpha/a-2', visible: false, expected_lock_version: 2147483647 }],
        ['/model_availability', { model: 'alpha/a-1', available: false, expected_lock_version: 2147483647 }],
        ['/lane', { enabled: true, expected_lock_version: 2147483647 }],
        // PUT api_key enables the provider, which needs a version bump too.
        ['/api_key', { api_key: 'sk-ceiling' }],
      ];
      for (const [path, command] of attempts) {
        const r = await put(token, P('alpha', path), command);
        expect(r.status, path).toBe(409);
        expect(r.body.error.code, path).toBe('stale_object');
        expect(r.body.error.message).toMatch(/highest lock_version \(2147483647\)/);
      }
      // Same-value requests leave the version unchanged, so they still succeed at the ceiling.
      const same = await put(token, P('alpha', '/model_visibility'), {
        model: 'alpha/a-1',
        visible: false,
        expected_lock_version: 2147483647,
      });
      expect(same.status).toBe(200);
      const after = await h.call('GET', P('alpha'), { token });
      expect(after.body.model_provider).toMatchObject({ lock_version: 2147483647, enabled: false, configured: false });
    });

    it('[ADM-LOCK-3] treats null as "no policy" and a number as "this policy"', async () => {
      const { token } = await newAccount(h);
      // A number against an absent policy conflicts, for all three commands.
      for (const [path, command] of [
        ['/lane', { enabled: true, expected_lock_version: 0 }],
        ['/model_visibility', { model: 'alpha/a-1', visible: false, expected_lock_version: 0 }],
        ['/model_availability', { model: 'alpha/a-1', available: false, expected_lock_version: 0 }],
      ] as const) {
        const r = await put(token, P('alpha', path), command);
        expect(r.status, path).toBe(409);
        expect(r.body.error.code).toBe('stale_object');
      }
      expect((await h.call('GET', P('alpha'), { token })).body.model_provider.lock_version).toBeNull();
      await put(token, P('alpha', '/lane'), { enabled: true, expected_lock_version: null });
      // Null (or omission) against an existing policy conflicts.
      for (const [path, command] of [
        ['/lane', { enabled: false }],
        ['/lane', { enabled: false, expected_lock_version: null }],
        ['/model_visibility', { model: 'alpha/a-1', visible: false }],
        ['/model_availability', { model: 'alpha/a-1', available: false, expected_lock_version: null }],
      ] as const) {
        const r = await put(token, P('alpha', path), command);
        expect(r.status, `${path} ${JSON.stringify(command)}`).toBe(409);
        expect(r.body.error.code).toBe('stale_object');
      }
      expect((await h.call('GET', P('alpha'), { token })).body.model_provider).toMatchObject({ enabled: true, lock_version: 0 });
    });

    it('[ADM-LOCK-4] leaves the version unchanged for same-value visibility and availability requests', async () => {
      const { token } = await newAccount(h);
      await put(token, P('alpha', '/lane'), { enabled: true });
      const show = await put(token, P('alpha', '/model_visibility'), { model: 'alpha/a-1', visible: true, expected_lock_version: 0 });
      expect(show.body.model_provider.lock_version).toBe(0);
      const valid = await put(token, P('alpha', '/model_availability'), { model: 'alpha/a-1', available: true, expected_lock_version: 0 });
      expect(valid.body.model_provider.lock_version).toBe(0);
      const hide = await put(token, P('alpha', '/model_visibility'), { model: 'alpha/a-1', visible: false, expected_lock_version: 0 });
      expect(hide.body.model_provider.lock_version).toBe(1);
      const again = await put(token, P('alpha', '/model_visibility'), { model: 'alpha/a-1', visible: false, expected_lock_version: 1 });
      expect(again.status).toBe(200);
      expect(again.body.model_provider.lock_version).toBe(1);
      const sameLane = await put(token, P('alpha', '/lane'), { enabled: true, expected_lock_version: 1 });
      expect(sameLane.body.model_provider.lock_version).toBe(1);
    });
  });

  describe('lane', () => {
    it('[ADM-LANE-1] enabling an untouched provider with a null version creates an enabled policy at version 0', async () => {
      const { token } = await newAccount(h);
      const r = await put(token, P('alpha', '/lane'), { enabled: true });
      expect(r.body.model_provider).toMatchObject({ enabled: true, lock_version: 0, configured: false });
      const disabled = await put(token, P('alpha', '/lane'), { enabled: false, expected_lock_version: 0 });
      expect(disabled.body.model_provider).toMatchObject({ enabled: false, lock_version: 1 });
      const enabled = await put(token, P('alpha', '/lane'), { enabled: true, expected_lock_version: 1 });
      expect(enabled.body.model_provider).toMatchObject({ enabled: true, lock_version: 2 });
    });

    it('[ADM-LANE-2] disabling needs a policy (404 not_found) and keeps policy and credentials', async () => {
      const { token } = await newAccount(h);
      const none = await put(token, P('alpha', '/lane'), { enabled: false });
      expect(none.status).toBe(404);
      expect(none.body.error.code).toBe('not_found');
      await put(token, P('alpha', '/api_key'), { api_key: 'sk-lane' });
      await put(token, P('alpha', '/model_visibility'), { model: 'alpha/a-2', visible: false, expected_lock_version: 0 });
      const off = await put(token, P('alpha', '/lane'), { enabled: false, expected_lock_version: 1 });
      expect(off.body.model_provider).toMatchObject({ enabled: false, lock_version: 2, configured: true, material_kind: 'api_key' });
      const rows = (await h.call('GET', '/api/v1/admin/models', { token })).body.models;
      expect(rows.find((m: { ref: string }) => m.ref === 'alpha/a-2')).toMatchObject({
        visible: false,
        unavailable_reason: 'provider_disabled',
      });
    });

    it('[ADM-LANE-3] refuses a non-boolean enabled with 400 parameter_invalid', async () => {
      const { token } = await newAccount(h);
      for (const enabled of ['true', 1, 0, null, 'yes', {}]) {
        const r = await put(token, P('alpha', '/lane'), { enabled });
        expect(r.status, JSON.stringify(enabled)).toBe(400);
        expect(r.body.error.code).toBe('parameter_invalid');
      }
      expect((await put(token, P('alpha', '/lane'), {})).body.error.code).toBe('parameter_invalid');
      expect((await h.call('GET', P('alpha'), { token })).body.model_provider.lock_version).toBeNull();
    });
  });

  describe('visibility', () => {
    it('[ADM-VIS-1] on an untouched provider creates a disabled policy at version 0 with that visibility', async () => {
      const { token } = await newAccount(h);
      const hide = await put(token, P('alpha', '/model_visibility'), { model: 'alpha/a-1', visible: false });
      expect(hide.body.model_provider).toMatchObject({ enabled: false, lock_version: 0 });
      const other = await newAccount(h);
      const show = await put(other.token, P('alpha', '/model_visibility'), {
        model: 'alpha/a-1',
        visible: true,
        expected_lock_version: null,
      });
      expect(show.body.model_provider).toMatchObject({ enabled: false, lock_version: 0 });
    });

    it('[ADM-VIS-2] hiding makes the model invisible and unavailable and leaves other models alone', async () => {
      const { token } = await newAccount(h);
      await put(token, P('alpha', '/api_key'), { api_key: 'sk-vis' });
      const before = (await h.call('GET', '/api/v1/admin/models', { token })).body.models;
      await put(token, P('alpha', '/model_visibility'), { model: 'alpha/a-1', visible: false, expected_lock_version: 0 });
      const after = (await h.call('GET', '/api/v1/admin/models', { token })).body.models;
      expect(after.find((m: { ref: string }) => m.ref === 'alpha/a-1')).toMatchObject({
        visible: false,
        available: false,
        unavailable_reason: 'model_hidden',
      });
      expect(after.filter((m: { ref: string }) => m.ref !== 'alpha/a-1')).toEqual(
        before.filter((m: { ref: string }) => m.ref !== 'alpha/a-1'),
      );
    });

    it('[ADM-VIS-3] showing restores visibility only', async () => {
      const { token } = await newAccount(h);
      await put(token, P('alpha', '/model_visibility'), { model: 'alpha/a-1', visible: false });
      await put(token, P('alpha', '/model_availability'), { model: 'alpha/a-1', available: false, expected_lock_version: 0 });
      const shown = await put(token, P('alpha', '/model_visibility'), { model: 'alpha/a-1', visible: true, expected_lock_version: 1 });
      expect(shown.body.model_provider).toMatchObject({ enabled: false, configured: false, lock_version: 2 });
      const row = (await h.call('GET', '/api/v1/admin/models', { token })).body.models.find((m: { ref: string }) => m.ref === 'alpha/a-1');
      // Still invalid: the mark is separate from the manual hide.
      expect(row).toMatchObject({ visible: false, available: false, unavailable_reason: 'provider_disabled' });
      await put(token, P('alpha', '/lane'), { enabled: true, expected_lock_version: 2 });
      const enabledRow = (await h.call('GET', '/api/v1/admin/models', { token })).body.models.find(
        (m: { ref: string }) => m.ref === 'alpha/a-1',
      );
      expect(enabledRow.unavailable_reason).toBe('model_unavailable');
    });

    it('[ADM-VIS-4] refuses a non-boolean visible with 400 parameter_invalid', async () => {
      const { token } = await newAccount(h);
      for (const visible of ['false', 0, null, undefined]) {
        const r = await put(token, P('alpha', '/model_visibility'), { model: 'alpha/a-1', visible });
        expect(r.status, String(visible)).toBe(400);
        expect(r.body.error.code).toBe('parameter_invalid');
      }
      const noModel = await put(token, P('alpha', '/model_visibility'), { visible: false });
      expect(noModel.body.error.code).toBe('parameter_invalid');
    });
  });

  describe('availability', () => {
    it('[ADM-AVL-1] requires an existing policy and works on disabled providers', async () => {
      const { token } = await newAccount(h);
      const none = await put(token, P('alpha', '/model_availability'), {
        model: 'alpha/a-1',
        available: false,
        expected_lock_version: null,
      });
      expect(none.status).toBe(404);
      expect(none.body.error.code).toBe('not_found');
      await put(token, P('alpha', '/model_visibility'), { model: 'alpha/a-2', visible: true });
      const marked = await put(token, P('alpha', '/model_availability'), {
        model: 'alpha/a-1',
        available: false,
        expected_lock_version: 0,
      });
      expect(marked.status).toBe(200);
      expect(marked.body.model_provider).toMatchObject({ enabled: false, lock_version: 1 });
    });

    it('[ADM-AVL-2] marks a model invalid: visible false, available false, reason model_unavailable', async () => {
      const { token } = await newAccount(h);
      await put(token, P('local', '/lane'), { enabled: true });
      await put(token, P('local', '/model_availability'), { model: 'local/l-1', available: false, expected_lock_version: 0 });
      const row = (await h.call('GET', '/api/v1/admin/models', { token })).body.models.find((m: { ref: string }) => m.ref === 'local/l-1');
      expect(row).toMatchObject({ visible: false, available: false, unavailable_reason: 'model_unavailable' });
    });

    it('[ADM-AVL-3] clearing the mark keeps a manual hide', async () => {
      const { token } = await newAccount(h);
      await put(token, P('local', '/lane'), { enabled: true });
      await put(token, P('local', '/model_visibility'), { model: 'local/l-1', visible: false, expected_lock_version: 0 });
      await put(token, P('local', '/model_availability'), { model: 'local/l-1', available: false, expected_lock_version: 1 });
      const cleared = await put(token, P('local', '/model_availability'), {
        model: 'local/l-1',
        available: true,
        expected_lock_version: 2,
      });
      expect(cleared.body.model_provider.lock_version).toBe(3);
      const row = (await h.call('GET', '/api/v1/admin/models', { token })).body.models.find((m: { ref: string }) => m.ref === 'local/l-1');
      expect(row).toMatchObject({ visible: false, available: false, unavailable_reason: 'model_hidden' });
    });

    it('[ADM-AVL-4] refuses a non-boolean available (400 parameter_invalid) and a missing version (400 parameter_missing)', async () => {
      const { token } = await newAccount(h);
      await put(token, P('alpha', '/lane'), { enabled: true });
      for (const available of ['true', 1, null]) {
        const r = await put(token, P('alpha', '/model_availability'), { model: 'alpha/a-1', available, expected_lock_version: 0 });
        expect(r.status).toBe(400);
        expect(r.body.error.code).toBe('parameter_invalid');
      }
      const missing = await put(token, P('alpha', '/model_availability'), { model: 'alpha/a-1', available: false });
      expect(missing.status).toBe(400);
      expect(missing.body.error.code).toBe('parameter_missing');
      expect((await h.call('GET', P('alpha'), { token })).body.model_provider.lock_version).toBe(0);
    });
  });

  describe('limits', () => {
    it('[ADM-LIM-1] refuses a 257th distinct reference with 422 validation_failed and changes nothing', async () => {
      const refs = Array.from({ length: 300 }, (_, i) => `m-${String(i).padStart(3, '0')}`);
      const big = await openHarness(dialect, {
        catalog: {
          'big.json': JSON.stringify({
            providers: {
              big: {
                display_name: 'Big',
                base_url: 'https://big.example/v1',
                api_format: 'openai_chat',
                credentials: 'api_key',
                models: Object.fromEntries(refs.map((r) => [r, {}])),
              },
            },
          }),
        },
      });
      try {
        const db = big.platform.ctx.database.db;
        const seeded = {
          ...emptyDocument(),
          hidden_models: refs
            .slice(0, 255)
            .map((r) => `big/${r}`)
            .sort(),
        };
        await insertPolicyIfAbsent(
          narrowTables(db),
          { accountId: big.accountId, providerId: 'big' },
          { enabled: false, document: serializeDocument(seeded) },
          0,
        );
        const at256 = await big.call('PUT', P('big', '/model_visibility'), {
          token: big.token,
          body: { command: { model: 'big/m-255', visible: false, expected_lock_version: 0 } },
        });
        expect(at256.status).toBe(200);
        const over = await big.call('PUT', P('big', '/model_availability'), {
          token: big.token,
          body: { command: { model: 'big/m-256', available: false, expected_lock_version: 1 } },
        });
        expect(over.status).toBe(422);
        expect(over.body.error.code).toBe('validation_failed');
        // Refs already in the document do not count twice.
        const overlap = await big.call('PUT', P('big', '/model_availability'), {
          token: big.token,
          body: { command: { model: 'big/m-000', available: false, expected_lock_version: 1 } },
        });
        expect(overlap.status).toBe(200);
        const provider = await big.call('GET', P('big'), { token: big.token });
        expect(provider.body.model_provider.lock_version).toBe(2);
        const rows = (await big.call('GET', '/api/v1/admin/models', { token: big.token })).body.models;
        expect(rows.find((m: { ref: string }) => m.ref === 'big/m-256').visible).toBe(true);
      } finally {
        await big.close();
      }
    });
  });

  describe('stale references', () => {
    it('[ADM-LIM-2] regression: refs whose model left the catalog can be cleared (visible/available true), so they stop counting toward the 256 limit', async () => {
      const { token, accountId } = await newAccount(h);
      const gone = Array.from({ length: 255 }, (_, i) => `alpha/gone-${String(i).padStart(3, '0')}`);
      const seeded = { ...emptyDocument(), hidden_models: gone, invalid_models: ['alpha/gone-inv'] };
      await insertPolicyIfAbsent(
        narrowTables(h.platform.ctx.database.db),
        { accountId, providerId: 'alpha' },
        { enabled: true, document: serializeDocument(seeded) },
        0,
      );
      // Full: hiding a live model would make 257 references. The message names the stale ones to clear.
      const full = await put(token, P('alpha', '/model_visibility'), { model: 'alpha/a-1', visible: false, expected_lock_version: 0 });
      expect(full.status).toBe(422);
      expect(full.body.error.code).toBe('validation_failed');
      expect(full.body.error.message).toMatch(/256 of them name models no longer in the catalog \(alpha\/gone-000, .*\): clear them/);
      // Hiding or invalidating needs a live model; only clearing accepts a stale ref, and only one the policy lists.
      for (const [path, command] of [
        ['/model_visibility', { model: 'alpha/gone-001', visible: false, expected_lock_version: 0 }],
        ['/model_availability', { model: 'alpha/gone-001', available: false, expected_lock_version: 0 }],
        ['/model_visibility', { model: 'alpha/never-listed', visible: true, expected_lock_version: 0 }],
        ['/model_availability', { model: 'alpha/never-listed', available: true, expected_lock_version: 0 }],
      ] as const) {
        const r = await put(token, P('alpha', path), command);
        expect(r.status, `${path} ${command.model}`).toBe(404);
      }
      const shown = await put(token, P('alpha', '/model_visibility'), { model: 'alpha/gone-000', visible: true, expected_lock_version: 0 });
      expect(shown.status).toBe(200);
      expect(shown.body.model_provider.lock_version).toBe(1);
      const restored = await put(token, P('alpha', '/model_availability'), {
        model: 'alpha/gone-inv',
        available: true,
        expected_lock_version: 1,
      });
      expect(restored.body.model_provider.lock_version).toBe(2);
      // Room again: the live model can be hidden.
      const hidden = await put(token, P('alpha', '/model_visibility'), { model: 'alpha/a-1', visible: false, expected_lock_version: 2 });
      expect(hidden.status).toBe(200);
      const row = await h.platform.ctx.database.db
        .selectFrom('model_provider_policies')
        .select('document')
        .where('account_id', '=', accountId)
        .where('provider_id', '=', 'alpha')
        .executeTakeFirstOrThrow();
      const document = JSON.parse(row.document);
      expect(document.hidden_models).not.toContain('alpha/gone-000');
      expect(document.hidden_models).toContain('alpha/a-1');
      expect(document.invalid_models).toEqual([]);
      // Stale refs are never listed as models.
      const refs = (await h.call('GET', '/api/v1/admin/models', { token })).body.models.map((m: { ref: string }) => m.ref);
      expect(refs.some((r: string) => r.includes('gone'))).toBe(false);
    });

    it('[ADM-LIM-2] a provider the deployment removed while a policy exists reads as removed: absent from lists, singular read kept, commands 404', async () => {
      const { token, accountId } = await newAccount(h);
      const doc = { ...emptyDocument(), hidden_models: ['retired/m-1'] };
      await insertPolicyIfAbsent(
        narrowTables(h.platform.ctx.database.db),
        { accountId, providerId: 'retired' },
        { enabled: true, document: serializeDocument(doc) },
        0,
      );
      const list = await h.call('GET', '/api/v1/admin/model_providers', { token });
      expect(list.body.model_providers.map((p: { id: string }) => p.id)).toEqual(['alpha', 'beta', 'local']);
      const one = await h.call('GET', P('retired'), { token });
      expect(one.status).toBe(200);
      expect(one.body.model_provider).toMatchObject({
        id: 'retired',
        display_name: null,
        credentials: null,
        enabled: false,
        lock_version: 0,
        models: 0,
      });
      expect(one.body.configuration).toMatchObject({ definition: null, source: 'removed', models: [] });
      for (const [path, command] of [
        ['/lane', { enabled: true, expected_lock_version: 0 }],
        ['/model_visibility', { model: 'retired/m-1', visible: true, expected_lock_version: 0 }],
      ] as const) {
        expect((await put(token, P('retired', path), command)).status, path).toBe(404);
      }
      // The row itself is untouched, so the policy applies again if the deployment brings the provider back.
      const row = await h.platform.ctx.database.db
        .selectFrom('model_provider_policies')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('provider_id', '=', 'retired')
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ enabled: 1, lock_version: 0 });
    });
  });

  describe('cost unit', () => {
    it('[ADM-COST-1] is null until configured once; the same unit again is accepted, another is refused', async () => {
      const { token } = await newAccount(h);
      expect((await h.call('GET', '/api/v1/admin/account/cost_unit', { token })).body).toEqual({ account: { cost_unit: null } });
      const set = await h.call('PUT', '/api/v1/admin/account/cost_unit', { token, body: { command: { cost_unit: 'EUR' } } });
      expect(set.status).toBe(200);
      expect(set.body).toEqual({ account: { cost_unit: 'EUR' } });
      expect((await h.call('PUT', '/api/v1/admin/account/cost_unit', { token, body: { command: { cost_unit: 'EUR' } } })).status).toBe(200);
      const replace = await h.call('PUT', '/api/v1/admin/account/cost_unit', { token, body: { command: { cost_unit: 'USD' } } });
      expect(replace.status).toBe(409);
      expect(replace.body.error.code).toBe('conflict');
      expect((await h.call('GET', '/api/v1/admin/account/cost_unit', { token })).body.account.cost_unit).toBe('EUR');
      for (const bad of ['', ' USD', 7, null]) {
        const r = await h.call('PUT', '/api/v1/admin/account/cost_unit', { token, body: { command: { cost_unit: bad } } });
        expect(r.status, JSON.stringify(bad)).toBe(400);
      }
      expect((await h.call('PUT', '/api/v1/admin/account/cost_unit', { token, body: {} })).body.error.code).toBe('parameter_missing');
    });
  });
});

describe.each(dialects)('an unavailable catalog on %s', (dialect) => {
  it('[ADM-CAT-3] makes model-plane reads and commands 503 model_plane_unavailable and logs the file and the reason', async () => {
    const dir = writeCatalog({
      'broken.yaml':
        'providers:\n  p: { display_name: P, base_url: "https://p", api_format: openai_chat, credentials: api_key, models: { m: { inherit: ghost } } }\n',
    });
    const h = await openHarness(dialect, { catalog: dir });
    try {
      for (const [method, path, body] of [
        ['GET', '/api/v1/admin/models', undefined],
        ['GET', '/api/v1/admin/model_providers', undefined],
        ['GET', P('p'), undefined],
        ['PUT', P('p', '/lane'), { command: { enabled: true } }],
        ['GET', '/agent_api/v1/models', undefined],
      ] as const) {
        const token = path.startsWith('/agent_api')
          ? (await h.platform.ctx.identity.createToken({ humanId: h.platform.owner.human_id, plane: 'member' })).token
          : h.token;
        const r = await h.call(method, path, { token, ...(body ? { body } : {}) });
        expect(r.status, path).toBe(503);
        expect(r.body).toEqual({ error: { code: 'model_plane_unavailable', message: expect.any(String) } });
      }
      const line = h.platform.logs.lines.find((l) => l.includes('model plane unavailable'));
      expect(line).toContain(`${dir}/broken.yaml`);
      expect(line).toContain('unknown model definition');
      // Authentication still comes first, and the cost unit does not depend on the catalog.
      expect((await h.call('GET', '/api/v1/admin/models')).status).toBe(401);
      expect((await h.call('GET', '/api/v1/admin/account/cost_unit', { token: h.token })).status).toBe(200);
    } finally {
      await h.close();
    }
  });

  it('[ADM-CAT-5] regression: an empty catalog file or a catalog without providers is 503, never {"models":[]}', async () => {
    const cases: [Record<string, string>, string, RegExp][] = [
      [{ ...TEST_CATALOG, 'zz-truncated.yaml': '' }, 'zz-truncated.yaml', /the file is empty/],
      [{ 'definitions.yaml': TEST_CATALOG['definitions.yaml'] ?? '' }, 'definitions.yaml', /no provider is declared/],
    ];
    for (const [files, culprit, reason] of cases) {
      const dir = writeCatalog(files);
      const h = await openHarness(dialect, { catalog: dir });
      try {
        const member = (await h.platform.ctx.identity.createToken({ humanId: h.platform.owner.human_id, plane: 'member' })).token;
        for (const [path, token] of [
          ['/api/v1/admin/models', h.token],
          ['/api/v1/admin/model_providers', h.token],
          ['/agent_api/v1/models', member],
        ] as const) {
          const r = await h.call('GET', path, { token });
          expect(r.status, `${culprit} ${path}`).toBe(503);
          expect(r.body.error.code).toBe('model_plane_unavailable');
        }
        const line = h.platform.logs.lines.find((l) => l.includes('model plane unavailable'));
        expect(line).toContain(`${dir}/${culprit}`);
        expect(line).toMatch(reason);
      } finally {
        await h.close();
      }
    }
  });

  it('[ADM-CAT-3] treats a missing catalog directory the same way', async () => {
    const h = await openHarness(dialect, { catalog: '/nonexistent/platform-catalog' });
    try {
      const r = await h.call('GET', '/api/v1/admin/models', { token: h.token });
      expect(r.status).toBe(503);
      expect(h.platform.logs.text()).toMatch(
        /model plane unavailable: catalog file \/nonexistent\/platform-catalog: the catalog directory does not exist/,
      );
    } finally {
      await h.close();
    }
  });
});
