/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-argument -- response bodies are untyped JSON (Reply.body); the assertions pin their shape */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertCredentialIfAbsent } from '../../src/admin/credentials/credentials.store.ts';
import { emptyDocument, serializeDocument } from '../../src/admin/policy/policy.document.ts';
import { MAX_LOCK_VERSION } from '../../src/admin/policy/policy.service.ts';
import { insertPolicyIfAbsent } from '../../src/admin/policy/policy.store.ts';
import { credentialAad } from '../../src/admin/projection/projection.ts';
import { main } from '../../src/cli/main.ts';
import type { CliIo } from '../../src/core/cli-io.ts';
import { decryptSecret, encryptSecret, secretKeyId, sha256Hex } from '../../src/core/crypto.ts';
import { dialects, openTestDatabase } from '../support/databases.ts';
import { openHarness, P, TEST_CATALOG, writeCatalog, type Harness } from './admin-harness.ts';
import { narrowTables } from '../../src/core/db/database.ts';

async function newAccount(h: Harness): Promise<{ token: string; accountId: string }> {
  const owner = await h.platform.ctx.identity.bootstrap({
    accountName: 'Credentials test',
    email: `owner-${Math.random().toString(36).slice(2)}@example.test`,
  });
  return { token: owner.platform_token, accountId: owner.account_id };
}

async function credentialRow(h: Harness, accountId: string, providerId: string) {
  return h.platform.ctx.database.db
    .selectFrom('model_provider_credentials')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('provider_id', '=', providerId)
    .executeTakeFirst();
}

describe.each(dialects)('provider API keys on %s', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness(dialect, { catalog: TEST_CATALOG });
  });
  afterAll(async () => h.close());

  const putKey = (token: string, provider: string, apiKey: unknown) =>
    h.call('PUT', P(provider, '/api_key'), { token, body: { command: { api_key: apiKey } } });

  it('[ADM-KEY-1] installs the key, enables the provider (also for the same key again) and never returns it', async () => {
    const { token } = await newAccount(h);
    const r = await putKey(token, 'alpha', 'sk-alpha-key-1');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      model_provider: {
        id: 'alpha',
        display_name: 'Alpha AI',
        credentials: 'api_key',
        enabled: true,
        lock_version: 0,
        configured: true,
        material_kind: 'api_key',
        reauthorization_required: false,
        unavailable_until: null,
        models: 4,
      },
    });
    await h.call('PUT', P('alpha', '/lane'), { token, body: { command: { enabled: false, expected_lock_version: 0 } } });
    const again = await putKey(token, 'alpha', 'sk-alpha-key-1');
    expect(again.body.model_provider).toMatchObject({ enabled: true, lock_version: 2, configured: true });
    const rows = (await h.call('GET', '/api/v1/admin/models?available=true', { token })).body.models.map((m: { ref: string }) => m.ref);
    expect(rows).toEqual(['alpha/a-1', 'alpha/a-2', 'alpha/emb', 'alpha/org/a-3']);
  });

  it('[ADM-KEY-2] refuses a blank key with 400 parameter_invalid and leaves availability unchanged', async () => {
    const { token } = await newAccount(h);
    await h.call('PUT', P('alpha', '/lane'), { token, body: { command: { enabled: true } } });
    const before = await h.call('GET', P('alpha'), { token });
    for (const blank of ['', '   ', '\n\t', 42, null]) {
      const r = await putKey(token, 'alpha', blank);
      expect(r.status, JSON.stringify(blank)).toBe(400);
      expect(r.body.error.code).toBe('parameter_invalid');
    }
    const missing = await h.call('PUT', P('alpha', '/api_key'), { token, body: {} });
    expect(missing.body.error.code).toBe('parameter_missing');
    expect((await h.call('GET', P('alpha'), { token })).body).toEqual(before.body);
  });

  it('[ADM-KEY-3] refuses API key commands on oauth_tokens and none lanes and on non-API-key material', async () => {
    const { token, accountId } = await newAccount(h);
    for (const provider of ['beta', 'local']) {
      const put = await putKey(token, provider, 'sk-wrong-lane');
      expect(put.status, provider).toBe(409);
      expect(put.body.error.code).toBe('material_kind_conflict');
      const del = await h.call('DELETE', P(provider, '/api_key'), { token });
      expect(del.status, provider).toBe(409);
      expect(del.body.error.code).toBe('material_kind_conflict');
    }
    // An api_key lane holding OAuth material (left by an earlier declaration of the provider).
    const keys = h.platform.ctx.secretKeys;
    await insertCredentialIfAbsent(
      narrowTables(h.platform.ctx.database.db),
      { accountId, providerId: 'alpha' },
      { material_kind: 'oauth_tokens', sealed: encryptSecret('{}', keys.current, credentialAad(accountId, 'alpha')), generation: 1 },
      0,
    );
    expect((await putKey(token, 'alpha', 'sk-over-oauth')).body.error.code).toBe('material_kind_conflict');
    expect((await h.call('DELETE', P('alpha', '/api_key'), { token })).body.error.code).toBe('material_kind_conflict');
    expect((await credentialRow(h, accountId, 'alpha'))?.material_kind).toBe('oauth_tokens');
  });

  it('[ADM-KEY-4] advances the credential generation only when the normalized key changes', async () => {
    const { token, accountId } = await newAccount(h);
    await putKey(token, 'alpha', 'sk-gen-one');
    expect((await credentialRow(h, accountId, 'alpha'))?.generation).toBe(1);
    await putKey(token, 'alpha', '  sk-gen-one\n');
    expect((await credentialRow(h, accountId, 'alpha'))?.generation).toBe(1);
    await putKey(token, 'alpha', 'sk-gen-two');
    expect((await credentialRow(h, accountId, 'alpha'))?.generation).toBe(2);
    await h.call('DELETE', P('alpha', '/api_key'), { token });
    const cleared = await credentialRow(h, accountId, 'alpha');
    expect(cleared).toMatchObject({ generation: 3, sealed: null, material_kind: null });
    await putKey(token, 'alpha', 'sk-gen-two');
    expect((await credentialRow(h, accountId, 'alpha'))?.generation).toBe(4);
  });

  it('[ADM-KEY-10] regression: keys with lone surrogates or control characters are 400 parameter_invalid, so identical PUTs cannot advance the generation', async () => {
    const { token, accountId } = await newAccount(h);
    await putKey(token, 'alpha', 'sk-well-formed');
    const before = await credentialRow(h, accountId, 'alpha');
    expect(before?.generation).toBe(1);
    // Sent as JSON escapes so the bytes on the wire are exactly the malformed strings.
    for (const escaped of [
      'sk-lone\\ud800',
      'sk-lone\\udc00x',
      '\\ud83dsk-half-pair',
      'sk-c1\\u0085x',
      'sk-del\\u007fx',
      'sk-nul\\u0000x',
      'sk-ls\\u2028x',
    ]) {
      for (let i = 0; i < 2; i++) {
        const r = await h.call('PUT', P('alpha', '/api_key'), { token, rawBody: `{"command":{"api_key":"${escaped}"}}` });
        expect(r.status, escaped).toBe(400);
        expect(r.body.error.code).toBe('parameter_invalid');
        expect(r.text).not.toContain('sk-');
      }
    }
    expect(await credentialRow(h, accountId, 'alpha')).toEqual(before);
    // A well-formed astral character is fine, and saving it twice keeps the generation.
    await putKey(token, 'alpha', 'sk-emoji-😀');
    await putKey(token, 'alpha', 'sk-emoji-😀');
    expect((await credentialRow(h, accountId, 'alpha'))?.generation).toBe(2);
  });

  it('[ADM-KEY-5] commits credential and availability together and keeps model settings', async () => {
    const { token, accountId } = await newAccount(h);
    await h.call('PUT', P('alpha', '/model_visibility'), { token, body: { command: { model: 'alpha/a-1', visible: false } } });
    await h.call('PUT', P('alpha', '/model_availability'), {
      token,
      body: { command: { model: 'alpha/a-2', available: false, expected_lock_version: 0 } },
    });
    await putKey(token, 'alpha', 'sk-keep-settings');
    const models = (await h.call('GET', '/api/v1/admin/models', { token })).body.models;
    const byRef = Object.fromEntries(models.map((m: { ref: string; unavailable_reason: string | null }) => [m.ref, m.unavailable_reason]));
    expect(byRef).toMatchObject({ 'alpha/a-1': 'model_hidden', 'alpha/a-2': 'model_unavailable', 'alpha/emb': null });

    // When enabling cannot be committed, the key is not stored either.
    const other = await newAccount(h);
    await insertPolicyIfAbsent(
      narrowTables(h.platform.ctx.database.db),
      { accountId: other.accountId, providerId: 'alpha' },
      { enabled: false, document: serializeDocument(emptyDocument()) },
      0,
    );
    await h.platform.ctx.database.db
      .updateTable('model_provider_policies')
      .set({ lock_version: MAX_LOCK_VERSION })
      .where('account_id', '=', other.accountId)
      .execute();
    const refused = await putKey(other.token, 'alpha', 'sk-rolled-back');
    expect(refused.status).toBe(409);
    expect(await credentialRow(h, other.accountId, 'alpha')).toBeUndefined();
    expect(accountId).not.toBe(other.accountId);
  });

  it('[ADM-KEY-6] DELETE clears the key and leaves the policy and enabled; without a key it is 404', async () => {
    const { token } = await newAccount(h);
    expect((await h.call('DELETE', P('alpha', '/api_key'), { token })).status).toBe(404);
    await putKey(token, 'alpha', 'sk-to-clear');
    const cleared = await h.call('DELETE', P('alpha', '/api_key'), { token });
    expect(cleared.status).toBe(200);
    expect(cleared.body.model_provider).toMatchObject({ enabled: true, lock_version: 0, configured: false, material_kind: null });
    const again = await h.call('DELETE', P('alpha', '/api_key'), { token });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('not_found');
    const row = (await h.call('GET', '/api/v1/admin/models', { token })).body.models.find((m: { ref: string }) => m.ref === 'alpha/a-1');
    expect(row.unavailable_reason).toBe('missing_credential');
  });

  it('[ADM-KEY-7] stores keys AES-256-GCM sealed under the current key id, bound to their row', async () => {
    const { token, accountId } = await newAccount(h);
    const apiKey = `sk-at-rest-${randomBytes(12).toString('hex')}`;
    await putKey(token, 'alpha', apiKey);
    const row = await credentialRow(h, accountId, 'alpha');
    const keys = h.platform.ctx.secretKeys;
    expect(row?.sealed).toMatch(new RegExp(`^v1\\.${keys.current.id}\\.`));
    expect(row?.sealed).not.toContain(apiKey);
    expect(decryptSecret(row?.sealed ?? '', keys.all, credentialAad(accountId, 'alpha'))).toBe(apiKey);
    // Moved to another row, the sealed value no longer opens.
    expect(() => decryptSecret(row?.sealed ?? '', keys.all, credentialAad(accountId, 'beta'))).toThrow();
    const dump = JSON.stringify(await h.platform.ctx.database.db.selectFrom('model_provider_credentials').selectAll().execute());
    expect(dump).not.toContain(apiKey);
  });

  it('[ADM-KEY-8] never puts key material, a preview, a length or a fingerprint in responses, errors or logs', async () => {
    const { token, accountId } = await newAccount(h);
    const apiKey = `sk-LEAKCHECK-${randomBytes(16).toString('hex')}`;
    const bodies: string[] = [];
    const record = async (reply: Promise<{ text: string }>) => bodies.push((await reply).text);
    await record(putKey(token, 'alpha', apiKey));
    await record(putKey(token, 'alpha', apiKey));
    await record(putKey(token, 'alpha', `  ${apiKey}  `));
    await record(putKey(token, 'beta', apiKey));
    await record(putKey(token, 'ghost', apiKey));
    await record(putKey(token, 'alpha', `${apiKey}\u0000`));
    await record(putKey(token, 'alpha', apiKey.repeat(200)));
    await record(h.call('PUT', P('alpha', '/api_key'), { token, body: { command: { api_key: apiKey, extra: apiKey } } }));
    for (const path of ['/api/v1/admin/models', '/api/v1/admin/model_providers', P('alpha')]) await record(h.call('GET', path, { token }));
    await record(h.call('DELETE', P('alpha', '/api_key'), { token }));
    const responses = h.transcript.join('\n');
    const logs = h.platform.logs.text();
    const secretParts = [
      apiKey,
      apiKey.slice(-8),
      apiKey.slice(12, 24),
      sha256Hex(apiKey),
      sha256Hex(apiKey).slice(0, 8),
      Buffer.from(apiKey).toString('base64'),
    ];
    for (const part of secretParts) {
      expect(responses, part).not.toContain(part);
      expect(logs, part).not.toContain(part);
    }
    // No length either: no response body mentions the key's size.
    expect(bodies.join('\n')).not.toMatch(new RegExp(`\\b(${apiKey.length}|${apiKey.length + 1}|${apiKey.length * 200})\\b`));
    expect(logs).toContain('provider API key saved');
    expect(accountId).toBeTruthy();
  });
});

/** Runs the CLI in-process against the test database with the given secret keys. */
async function runCli(argv: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env, out: (t) => out.push(t), err: (t) => err.push(t) };
  const code = await main(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe.each(dialects)('platform secrets rotate on %s', (dialect) => {
  it('[ADM-KEY-7] re-encrypts credentials under the current key; the previous key decrypts the old values', async () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const catalog = writeCatalog(TEST_CATALOG);
    const database = await openTestDatabase(dialect);
    const env = (current: Buffer, previous?: Buffer): Record<string, string> => ({
      DATABASE_URL: database.url,
      PLATFORM_DATA_DIR: catalog,
      PLATFORM_CATALOG_DIR: catalog,
      PLATFORM_SECRET_KEY: current.toString('base64'),
      ...(previous ? { PLATFORM_SECRET_KEY_PREVIOUS: previous.toString('base64') } : {}),
    });
    const apiKey = `sk-rotate-${randomBytes(8).toString('hex')}`;
    try {
      const before = await openHarness(dialect, { catalog, env: env(oldKey) });
      let accountId: string;
      try {
        accountId = before.accountId;
        expect(
          (await before.call('PUT', P('alpha', '/api_key'), { token: before.token, body: { command: { api_key: apiKey } } })).status,
        ).toBe(200);
        const sealed = await before.platform.ctx.database.db
          .selectFrom('model_provider_credentials')
          .select('sealed')
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow();
        // Copy the credential into the shared database the CLI and the next server read.
        await database.db.insertInto('accounts').values({ id: accountId, name: 'rotated', created_at: 0 }).execute();
        await database.db
          .insertInto('model_provider_credentials')
          .values({
            account_id: accountId,
            provider_id: 'alpha',
            material_kind: 'api_key',
            sealed: sealed.sealed,
            generation: 1,
            reauthorization_required: 0,
            updated_at: 0,
          })
          .execute();
        await database.db
          .insertInto('model_provider_policies')
          .values({
            account_id: accountId,
            provider_id: 'alpha',
            lock_version: 0,
            enabled: 1,
            document: serializeDocument(emptyDocument()),
            created_at: 0,
            updated_at: 0,
          })
          .execute();
      } finally {
        await before.close();
      }

      // Without the old key, the new deployment cannot use the credential.
      const rotated = await runCli(['secrets', 'rotate', '--json'], env(newKey));
      expect(rotated.code).toBe(1);
      expect(JSON.parse(rotated.out)).toEqual({ rotated: 0, current: 0, failed: 1 });

      const ok = await runCli(['secrets', 'rotate', '--json'], env(newKey, oldKey));
      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.out)).toEqual({ rotated: 1, current: 0, failed: 0 });
      const row = await database.db
        .selectFrom('model_provider_credentials')
        .selectAll()
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow();
      expect(row.sealed?.startsWith(`v1.${secretKeyId(newKey)}.`)).toBe(true);
      expect(decryptSecret(row.sealed ?? '', [{ id: secretKeyId(newKey), key: newKey }], credentialAad(accountId, 'alpha'))).toBe(apiKey);
      expect(row.generation).toBe(1);
      const again = await runCli(['secrets', 'rotate'], env(newKey));
      expect(again.code).toBe(0);
      expect(again.out).toMatch(
        /Re-encrypted 0 provider credential\(s\) under the current key; 1 already current; 0 could not be decrypted/,
      );
      for (const text of [rotated.out, rotated.err, ok.out, ok.err, again.out, again.err]) expect(text).not.toContain(apiKey);
    } finally {
      await database.close();
    }
  });
});
