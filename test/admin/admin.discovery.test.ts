/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call -- response bodies are untyped JSON (Reply.body); the assertions pin their shape */
import { lookup as dnsLookup } from 'node:dns';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { LookupFunction } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CATALOG_DIR } from '../../src/admin/catalog/catalog.loader.ts';
import { createModelPlane, type ModelPlane } from '../../src/admin/model-plane.ts';
import { parseDocument, serializeDocument } from '../../src/admin/policy/policy.document.ts';
import { findPolicy, updatePolicyIfVersion } from '../../src/admin/policy/policy.store.ts';
import { createUpstreamClient, type UpstreamClient } from '../../src/admin/upstream/upstream-client.ts';
import { narrowTables } from '../../src/core/db/database.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { AdminTables } from '../../src/admin/admin.table.ts';
import { dialects } from '../support/databases.ts';
import {
  PROVIDER_ERRORS,
  RAW_ANSWERS,
  startStandin,
  type RecordedRequest,
  type Standin,
  type StandinDialect,
  type StandinModel,
} from '../support/upstream/index.ts';
import { P, type Harness, type Reply } from './admin-harness.ts';
import { openProviderStandins, STANDIN_KEYS, type ProviderStandins } from './provider-standins.ts';

/**
 * Model discovery (issue 15; spec Endpoints rule 4) end to end: the REST route, the saved definition and key, the
 * outbound client and real HTTP stand-ins of the three directory formats, on SQLite and PostgreSQL.
 */

const MiB = 1024 * 1024;
const PROVIDER: Record<StandinDialect, string> = { openai: 'openai', anthropic: 'anthropic', gemini: 'google' };
const API_FORMAT: Record<StandinDialect, string> = {
  openai: 'openai_chat',
  anthropic: 'anthropic_messages',
  gemini: 'gemini_generate_content',
};
/** The `local` catalog provider (lane `none`, base_url a stand-in): the one provider that can be untouched and discoverable. */
const LOCAL_MODELS: StandinModel[] = [{ id: 'l-1' }, { id: 'l-2' }];
/** Host names only the probe plane's resolver knows. */
const FAKE_DNS: Record<string, string> = { 'metadata.standin.test': '169.254.169.254', 'loopback.standin.test': '127.0.0.1' };

const extra = (n: number, prefix = 'x') => Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i + 1}` }));
const ids = (reply: Reply): string[] => (reply.body.models as { id: string }[]).map((m) => m.id);

/** The shipped catalog plus `local.yaml`, whose provider talks to `baseUrl` without a credential. */
function catalogWithLocal(baseUrl: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'platform-catalog-'));
  cpSync(DEFAULT_CATALOG_DIR, dir, { recursive: true });
  const models = LOCAL_MODELS.map((m) => `      ${m.id}: {}`).join('\n');
  writeFileSync(
    join(dir, 'local.yaml'),
    `providers:\n  local:\n    display_name: Local stand-in\n    base_url: ${baseUrl}\n    api_format: openai_chat\n    credentials: none\n    models:\n${models}\n`,
  );
  return dir;
}

/** Resolves the test host names of FAKE_DNS and everything else as the system does. */
const fakeLookup: LookupFunction = (hostname, options, callback) => {
  const address = FAKE_DNS[hostname];
  if (address === undefined) {
    dnsLookup(hostname, options, callback);
    return;
  }
  if (options.all === true) callback(null, [{ address, family: 4 }]);
  else callback(null, address, 4);
};

function expectFailed(reply: Reply, cause: RegExp, leaks: readonly string[] = []): void {
  expect(reply.status, reply.text).toBe(422);
  expect(reply.body.error.code).toBe('validation_failed');
  expect(reply.body.error.message).toMatch(cause);
  // The message names the cause; nothing of the upstream answer and no key comes back.
  for (const text of [...leaks, ...Object.values(STANDIN_KEYS)]) expect(reply.text).not.toContain(text);
}

async function rejection(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected a rejection');
}

describe.each(dialects)('model discovery on %s', (dialect) => {
  let fx: ProviderStandins;
  let h: Harness;
  let local: Standin;
  let target: Standin;
  let catalogDir: string;
  let upstream: UpstreamClient;
  let probePlane: ModelPlane;
  let db: Kysely<AdminTables>;
  const deadlineMs = 800;

  beforeAll(async () => {
    local = await startStandin({ dialect: 'openai', models: LOCAL_MODELS });
    target = await startStandin({ dialect: 'openai' });
    catalogDir = catalogWithLocal(local.baseUrl);
    fx = await openProviderStandins(dialect, { env: { PLATFORM_CATALOG_DIR: catalogDir } });
    h = fx.h;
    const ctx = h.platform.ctx;
    db = narrowTables(ctx.database.db);
    // A second model plane on the same database with a short deadline and a resolver the test controls, as another
    // replica would be built (admin.concurrency.test.ts); the REST plane keeps the spec's 20 s.
    upstream = createUpstreamClient({ allowPrivate: true, lookup: fakeLookup });
    probePlane = createModelPlane({
      db,
      dialect: ctx.database.dialect,
      clock: ctx.clock,
      log: silentLogger(),
      secretKeys: ctx.secretKeys,
      catalogDir,
      upstream,
      discoveryLimits: { deadlineMs, maxPages: 16, maxRows: 1024, maxBytes: 2 * MiB },
    });
  });
  afterEach(() => {
    for (const s of [...Object.values(fx.standins), local, target]) s.reset();
  });
  afterAll(async () => {
    await upstream.close();
    await Promise.all([local.close(), target.close()]);
    await fx.close();
  });

  /** The provider's lock_version; null without a policy, and for an id no provider has yet (a PUT definition creates it). */
  async function version(token: string, providerId: string): Promise<number | null> {
    const read = await h.call('GET', P(providerId), { token });
    if (read.status === 404) return null;
    expect(read.status, read.text).toBe(200);
    return read.body.model_provider.lock_version as number | null;
  }

  /** `POST …/model_discovery` with the version read first, unless `command` is given. */
  async function discover(providerId: string, options: { token?: string; command?: unknown } = {}): Promise<Reply> {
    const token = options.token ?? h.token;
    const command = options.command ?? { expected_lock_version: await version(token, providerId) };
    return h.call('POST', P(providerId, '/model_discovery'), { token, body: { command } });
  }

  async function send(token: string, method: string, path: string, command: unknown): Promise<Reply> {
    const reply = await h.call(method, path, { token, body: { command } });
    expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(200);
    return reply;
  }

  const policy = (accountId: string, providerId: string) => findPolicy(db, { accountId, providerId });
  const credential = (accountId: string, providerId: string) =>
    db
      .selectFrom('model_provider_credentials')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('provider_id', '=', providerId)
      .executeTakeFirst();

  async function adminRows(token: string, providerId: string) {
    const rows = (await h.call('GET', '/api/v1/admin/models', { token })).body.models as {
      ref: string;
      model_id: string;
      available: boolean;
      visible: boolean;
      unavailable_reason: string | null;
    }[];
    return rows.filter((r) => r.ref.startsWith(`${providerId}/`));
  }

  /** A new Account whose `dialect` provider is overridden to its stand-in with its key installed (enabled). */
  async function newAccount(...connect: StandinDialect[]) {
    const owner = await h.platform.ctx.identity.bootstrap({
      accountName: 'Discovery',
      email: `discovery-${Math.random().toString(36).slice(2)}@example.test`,
    });
    const token = owner.platform_token;
    for (const d of connect) {
      const definition = { display_name: d, base_url: fx.standins[d].baseUrl, api_format: API_FORMAT[d], credentials: 'api_key' };
      await send(token, 'PUT', P(PROVIDER[d], '/definition'), { definition, expected_lock_version: await version(token, PROVIDER[d]) });
      await send(token, 'PUT', P(PROVIDER[d], '/api_key'), { api_key: STANDIN_KEYS[d] });
    }
    const member = await h.platform.ctx.identity.createToken({ humanId: owner.human_id, plane: 'member' });
    return { token, accountId: owner.account_id, member: member.token };
  }

  const only = (requests: RecordedRequest[]) => {
    expect(requests).toHaveLength(1);
    return requests[0] as RecordedRequest;
  };

  describe('directory formats', () => {
    it('reads the OpenAI directory in one unpaginated request with the saved key and answers it deduplicated', async () => {
      const s = fx.standins.openai;
      const catalog = await catalogIds(h.token, 'openai');
      s.setModels([...catalog, 'gpt-4.1', 'new-model'].map((id) => ({ id })));
      const reply = await discover('openai');
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body).toEqual({ models: [...catalog, 'new-model'].map((id) => ({ id, display_name: null })) });
      const request = only(s.requests);
      expect(request).toMatchObject({ method: 'GET', url: '/v1/models', query: {} });
      expect(request.headers.authorization).toBe(`Bearer ${STANDIN_KEYS.openai}`);
    });

    it('follows an OpenAI-compatible paged directory (has_more, last_id → after) page by page', async () => {
      const s = fx.standins.openai;
      const before = await fx.version('openai');
      // The catalog's ten models (a complete directory: nothing changes) and a duplicate, four rows a page.
      const catalog = await catalogIds(h.token, 'openai');
      s.setModels([...catalog, 'gpt-5'].map((id) => ({ id })));
      s.setDirectory({ pageSize: 4 });
      const reply = await discover('openai');
      expect(reply.status, reply.text).toBe(200);
      expect(ids(reply)).toEqual(catalog);
      expect(s.requests.map((r) => r.query)).toEqual([{}, { after: catalog[3] }, { after: catalog[7] }]);
      for (const r of s.requests) expect(r.headers.authorization).toBe(`Bearer ${STANDIN_KEYS.openai}`);
      // A directory that changes nothing writes nothing.
      expect(await fx.version('openai')).toBe(before);
    });

    it('pages the Anthropic directory with after_id, sending x-api-key and anthropic-version', async () => {
      const s = fx.standins.anthropic;
      s.setModels([
        { id: 'claude-opus-4-1-20250805', display_name: 'Claude Opus 4.1' },
        { id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5' },
        { id: 'claude-haiku-4-5-20251001', display_name: 'Claude Haiku 4.5' },
        { id: 'claude-opus-4-1-20250805', display_name: 'A duplicate row' },
        { id: 'claude-3-5-haiku-20241022', display_name: 'Claude Haiku 3.5' },
      ]);
      s.setDirectory({ pageSize: 3 });
      const reply = await discover('anthropic');
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body.models).toEqual([
        { id: 'claude-opus-4-1-20250805', display_name: 'Claude Opus 4.1' },
        { id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5' },
        { id: 'claude-haiku-4-5-20251001', display_name: 'Claude Haiku 4.5' },
        { id: 'claude-3-5-haiku-20241022', display_name: 'Claude Haiku 3.5' },
      ]);
      expect(s.requests.map((r) => r.query)).toEqual([{ limit: '1000' }, { limit: '1000', after_id: 'claude-haiku-4-5-20251001' }]);
      for (const r of s.requests) {
        expect(r.headers['x-api-key']).toBe(STANDIN_KEYS.anthropic);
        expect(r.headers['anthropic-version']).toBe('2023-06-01');
        expect(r.headers.authorization).toBeUndefined();
      }
      expect((await adminRows(h.token, 'anthropic')).filter((r) => r.unavailable_reason !== null)).toEqual([]);
    });

    it('pages the Gemini directory with pageToken and strips the models/ prefix', async () => {
      const s = fx.standins.gemini;
      s.setModels([
        { id: 'gemini-2.5-pro', display_name: 'Gemini 2.5 Pro' },
        { id: 'gemini-2.5-flash', display_name: 'Gemini 2.5 Flash' },
        { id: 'models/gemini-2.5-pro', display_name: 'A duplicate row' },
        { id: 'gemini-2.5-flash-lite', display_name: 'Gemini 2.5 Flash-Lite' },
        { id: 'gemini-embedding-001', display_name: null },
      ]);
      s.setDirectory({ pageSize: 2 });
      const reply = await discover('google');
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body.models).toEqual([
        { id: 'gemini-2.5-pro', display_name: 'Gemini 2.5 Pro' },
        { id: 'gemini-2.5-flash', display_name: 'Gemini 2.5 Flash' },
        { id: 'gemini-2.5-flash-lite', display_name: 'Gemini 2.5 Flash-Lite' },
        { id: 'gemini-embedding-001', display_name: null },
      ]);
      expect(s.requests).toHaveLength(3);
      expect(s.requests[0]?.query).toEqual({ pageSize: '1000' });
      expect(s.requests[1]?.query.pageToken).toEqual(expect.any(String));
      expect(s.requests[2]?.query.pageToken).not.toBe(s.requests[1]?.query.pageToken);
      for (const r of s.requests) {
        expect(r.headers['x-goog-api-key']).toBe(STANDIN_KEYS.gemini);
        expect(r.query.key).toBeUndefined();
      }
      // Every configured Google model is matched by its bare id.
      expect((await adminRows(h.token, 'google')).filter((r) => r.unavailable_reason !== null)).toEqual([]);
    });
  });

  async function catalogIds(token: string, providerId: string): Promise<string[]> {
    return [...new Set((await adminRows(token, providerId)).map((r) => r.model_id))];
  }

  describe('complete-directory rules', () => {
    it('marks a configured model whose effective upstream id is missing invalid, clears a listed one, keeps everything else', async () => {
      const account = await newAccount('openai');
      const { token, accountId } = account;
      await send(token, 'PUT', P('openai', '/model_availability'), {
        model: 'openai/gpt-4.1',
        available: false,
        expected_lock_version: await version(token, 'openai'),
      });
      await send(token, 'PUT', P('openai', '/model_visibility'), {
        model: 'openai/gpt-4.1-mini',
        visible: false,
        expected_lock_version: await version(token, 'openai'),
      });
      await send(token, 'PUT', P('openai', '/model_definition'), {
        model: 'openai/gpt-5',
        definition: { inherit: 'openai-reasoning-chat', display_name: 'GPT-5 (edited)' },
        expected_lock_version: await version(token, 'openai'),
      });
      const before = await policy(accountId, 'openai');
      const keyBefore = await credential(accountId, 'openai');
      // `openai/gpt-4o` is model_id gpt-4o-2024-11-20: a row named `gpt-4o` (its ref's tail) does not match it.
      const listed = (await catalogIds(token, 'openai')).filter((id) => id !== 'gpt-4o-2024-11-20');
      fx.standins.openai.setModels([...listed, 'gpt-4o'].map((id) => ({ id })));

      const reply = await discover('openai', { token });
      expect(reply.status, reply.text).toBe(200);
      expect(ids(reply)).toEqual([...listed, 'gpt-4o']);
      only(fx.standins.openai.requests);

      const after = await policy(accountId, 'openai');
      expect(after?.lock_version).toBe((before?.lock_version ?? NaN) + 1);
      expect(after?.enabled).toBe(before?.enabled);
      const [was, now] = [parseDocument(before?.document ?? ''), parseDocument(after?.document ?? '')];
      expect(was.invalid_models).toEqual(['openai/gpt-4.1']);
      expect(now).toEqual({ ...was, invalid_models: ['openai/gpt-4o'] });
      expect(await credential(accountId, 'openai')).toEqual(keyBefore);

      const rows = Object.fromEntries((await adminRows(token, 'openai')).map((r) => [r.ref, r]));
      expect(rows['openai/gpt-4o']).toMatchObject({ available: false, visible: false, unavailable_reason: 'model_unavailable' });
      expect(rows['openai/gpt-4.1']).toMatchObject({ available: true, visible: true, unavailable_reason: null });
      expect(rows['openai/gpt-4.1-mini']).toMatchObject({ available: false, visible: false });
      const member = (await h.call('GET', '/agent_api/v1/models', { token: account.member })).body.models.map(
        (m: { ref: string }) => m.ref,
      );
      expect(member).toContain('openai/gpt-4.1');
      expect(member).toContain('openai/gpt-5');
      expect(member).not.toContain('openai/gpt-4o');
      expect(member).not.toContain('openai/gpt-4.1-mini');
      const provider = (await h.call('GET', P('openai'), { token })).body;
      expect(provider.model_provider).toMatchObject({ enabled: true, configured: true });
      // No model definition was created or changed.
      expect(provider.configuration.models).toHaveLength(10);
      expect(provider.configuration.models.find((m: { model: string }) => m.model === 'openai/gpt-5').definition).toMatchObject({
        display_name: 'GPT-5 (edited)',
      });
    });

    it('marks every configured model invalid on a complete empty directory and keeps a disabled lane disabled', async () => {
      const { token, accountId } = await newAccount('openai');
      await send(token, 'PUT', P('openai', '/lane'), { enabled: false, expected_lock_version: await version(token, 'openai') });
      const before = await policy(accountId, 'openai');
      fx.standins.openai.setModels([]);
      const reply = await discover('openai', { token });
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body).toEqual({ models: [] });
      const after = await policy(accountId, 'openai');
      expect(after?.lock_version).toBe((before?.lock_version ?? NaN) + 1);
      expect(after?.enabled).toBe(0);
      const refs = (await adminRows(token, 'openai')).map((r) => r.ref);
      expect(refs).toHaveLength(10);
      expect(parseDocument(after?.document ?? '').invalid_models).toEqual(refs);
      // A later complete directory clears them all again.
      fx.standins.openai.reset();
      expect((await discover('openai', { token })).status).toBe(200);
      expect(parseDocument((await policy(accountId, 'openai'))?.document ?? '').invalid_models).toEqual([]);
      expect((await policy(accountId, 'openai'))?.lock_version).toBe((before?.lock_version ?? NaN) + 2);
    });

    it('leaves an untouched provider untouched when nothing is missing, and creates a disabled policy when a mark is needed', async () => {
      const { token, accountId } = await newAccount();
      expect(await version(token, 'local')).toBeNull();
      const complete = await discover('local', { token, command: { expected_lock_version: null } });
      expect(complete.status, complete.text).toBe(200);
      expect(ids(complete)).toEqual(['l-1', 'l-2']);
      // Lane `none`: the request carries no credential.
      expect(only(local.requests).headers.authorization).toBeUndefined();
      expect(await policy(accountId, 'local')).toBeUndefined();

      local.setModels([{ id: 'l-1' }]);
      const marking = await discover('local', { token, command: { expected_lock_version: null } });
      expect(marking.status, marking.text).toBe(200);
      const created = await policy(accountId, 'local');
      expect(created).toMatchObject({ lock_version: 0, enabled: 0 });
      expect(parseDocument(created?.document ?? '')).toMatchObject({ invalid_models: ['local/l-2'], hidden_models: [] });

      // Null now conflicts with the created policy, before any request.
      local.reset();
      const stale = await discover('local', { token, command: { expected_lock_version: null } });
      expect(stale.status).toBe(409);
      expect(stale.body.error.code).toBe('stale_object');
      expect(local.requests).toEqual([]);
    });
  });

  describe('limits', () => {
    it('takes 16 pages and refuses a 17th', async () => {
      const s = fx.standins.anthropic;
      const catalog = (await catalogIds(h.token, 'anthropic')).map((id) => ({ id }));
      s.setDirectory({ pageSize: 1 });
      s.setModels([...catalog, ...extra(16 - catalog.length)]);
      const sixteen = await discover('anthropic');
      expect(sixteen.status, sixteen.text).toBe(200);
      expect(ids(sixteen)).toHaveLength(16);
      expect(s.requests).toHaveLength(16);

      s.reset();
      s.setDirectory({ pageSize: 1 });
      s.setModels([...catalog, ...extra(17 - catalog.length)]);
      const before = await policy(h.accountId, 'anthropic');
      expectFailed(await discover('anthropic'), /more than 16 pages \(incomplete pagination\)/);
      expect(s.requests).toHaveLength(16);
      expect(await policy(h.accountId, 'anthropic')).toEqual(before);
    });

    it('takes 1,024 rows (duplicates counted) and refuses 1,025', async () => {
      const s = fx.standins.gemini;
      const catalog = (await catalogIds(h.token, 'google')).map((id) => ({ id }));
      s.setModels([...catalog, ...extra(1024 - catalog.length - 1), { id: 'x-1' }]);
      const under = await discover('google');
      expect(under.status, under.text).toBe(200);
      expect(ids(under)).toHaveLength(1023);
      expect(s.requests).toHaveLength(2);

      s.reset();
      s.setModels([...catalog, ...extra(1025 - catalog.length)]);
      const before = await policy(h.accountId, 'google');
      expectFailed(await discover('google'), /more than 1024 models/);
      expect(s.requests).toHaveLength(2);
      expect(await policy(h.accountId, 'google')).toEqual(before);
    });

    it('takes exactly 2 MiB across pages and refuses one byte a page more, announced or chunked', async () => {
      const s = fx.standins.openai;
      s.setDirectory({ pageSize: 6, padToBytes: MiB });
      const under = await discover('openai');
      expect(under.status, under.text).toBe(200);
      expect(ids(under).sort()).toEqual((await catalogIds(h.token, 'openai')).sort());
      expect(s.requests).toHaveLength(2);

      const before = await policy(h.accountId, 'openai');
      for (const chunked of [false, true]) {
        s.reset();
        s.setDirectory({ pageSize: 6, padToBytes: MiB + 1, chunked });
        expectFailed(await discover('openai'), /answers exceed 2 MiB/);
        expect(s.requests).toHaveLength(2);
      }
      expect(await policy(h.accountId, 'openai')).toEqual(before);
    });

    it('finishes under the total deadline and fails past it, per page or across pages, headers or body', async () => {
      const s = fx.standins.anthropic;
      const run = async () => probePlane.discoverModels(h.accountId, 'anthropic', await fx.version('anthropic'));
      s.delay(deadlineMs / 2);
      expect((await run()).models).toHaveLength(4);
      expect(s.requests).toHaveLength(1);

      const before = await policy(h.accountId, 'anthropic');
      const slow: [string, () => void, number][] = [
        ['one slow page', () => s.delay(deadlineMs * 1.5), 1],
        ['a slow body', () => s.delay(deadlineMs * 1.5, { phase: 'body' }), 1],
        [
          // Each page well inside the deadline; the third one crosses the total.
          'three pages of 3/8 of the deadline each',
          () => {
            s.setDirectory({ pageSize: 1 });
            s.delay((deadlineMs * 3) / 8, 'always');
          },
          3,
        ],
      ];
      for (const [name, arrange, requests] of slow) {
        s.reset();
        arrange();
        const started = performance.now();
        const error = await rejection(run());
        expect(error.code, name).toBe('validation_failed');
        expect(error.message, name).toMatch(/did not answer within the .* deadline/);
        expect(performance.now() - started, name).toBeLessThan(deadlineMs + 400);
        expect(s.requests, name).toHaveLength(requests);
      }
      expect(await policy(h.accountId, 'anthropic')).toEqual(before);
    });
  });

  describe('failures: 422 validation_failed with the policy byte-identical', () => {
    interface FailureCase {
      name: string;
      dialect: StandinDialect;
      arrange: (s: Standin) => void;
      cause: RegExp;
      requests: number;
      /** Upstream text the answer must not quote. */
      leaks?: string[];
    }
    const cases: FailureCase[] = [
      {
        name: 'a directory page that fails',
        dialect: 'anthropic',
        arrange: (s) => s.setDirectory({ pageSize: 2, fault: { how: 'page_error', afterPages: 1 } }),
        cause: /the directory answered HTTP 500/,
        requests: 2,
        leaks: ['Internal server error'],
      },
      {
        name: 'a page that says more follow without a cursor',
        dialect: 'anthropic',
        arrange: (s) => s.setDirectory({ pageSize: 2, fault: { how: 'missing_cursor', afterPages: 1 } }),
        cause: /page 2 of the directory says more follow without a cursor \(incomplete pagination\)/,
        requests: 2,
      },
      ...(['anthropic', 'openai', 'gemini'] as const).map((d): FailureCase => ({
        name: `a ${d} page that repeats its cursor`,
        dialect: d,
        arrange: (s) => s.setDirectory({ pageSize: 2, fault: { how: 'repeat_cursor', afterPages: 1 } }),
        cause: /repeats a page cursor \(incomplete pagination\)/,
        requests: 2,
      })),
      {
        name: 'an endless directory',
        dialect: 'gemini',
        arrange: (s) => s.setDirectory({ pageSize: 5, fault: { how: 'endless' } }),
        cause: /more than 16 pages \(incomplete pagination\)/,
        requests: 16,
      },
      {
        name: 'an oversized single page',
        dialect: 'openai',
        arrange: (s) => s.setDirectory({ padToBytes: 2 * MiB + 1 }),
        cause: /answers exceed 2 MiB/,
        requests: 1,
      },
      {
        name: 'invalid JSON',
        dialect: 'openai',
        arrange: (s) => s.respond(RAW_ANSWERS.invalidJson()),
        cause: /page 1 of the directory is not the directory format of this provider's api_format/,
        requests: 1,
        leaks: ['{"object"', 'Unexpected', 'JSON at position'],
      },
      {
        name: 'an HTML page with HTTP 200',
        dialect: 'anthropic',
        arrange: (s) => s.respond(RAW_ANSWERS.html200()),
        cause: /page 1 of the directory is not the directory format/,
        requests: 1,
        leaks: ['<html', 'Sign in', '<!DOCTYPE', 'Unexpected token'],
      },
      {
        name: 'a gateway HTML error',
        dialect: 'openai',
        arrange: (s) => s.respond(RAW_ANSWERS.gatewayHtml(502)),
        cause: /the directory answered HTTP 502/,
        requests: 1,
        leaks: ['nginx', 'Bad Gateway'],
      },
      {
        name: 'a connection cut mid-body',
        dialect: 'openai',
        arrange: (s) => s.respond(RAW_ANSWERS.truncated({ object: 'list', data: [{ id: 'gpt-4.1' }] }, 10)),
        cause: /could not be reached/,
        requests: 1,
      },
      {
        name: 'upstream 401 (key refused)',
        dialect: 'openai',
        arrange: (s) => s.fail(PROVIDER_ERRORS.openai.invalidApiKey(STANDIN_KEYS.openai)),
        cause: /the directory refused the saved credential \(HTTP 401\)/,
        requests: 1,
        leaks: ['Incorrect API key', 'platform.openai.com', STANDIN_KEYS.openai.slice(-4)],
      },
      {
        name: 'upstream 400 (Gemini: key not valid)',
        dialect: 'gemini',
        arrange: (s) => s.fail(PROVIDER_ERRORS.gemini.apiKeyInvalid()),
        cause: /the directory answered HTTP 400/,
        requests: 1,
        leaks: ['API key not valid', 'API_KEY_INVALID'],
      },
      {
        name: 'upstream 403',
        dialect: 'anthropic',
        arrange: (s) => s.fail(PROVIDER_ERRORS.anthropic.permissionDenied()),
        cause: /the directory refused the saved credential \(HTTP 403\)/,
        requests: 1,
        leaks: ['does not have permission'],
      },
      {
        name: 'upstream 429',
        dialect: 'anthropic',
        arrange: (s) => s.fail(PROVIDER_ERRORS.anthropic.rateLimited(), 'always'),
        cause: /HTTP 429 \(rate limited\); discovery does not retry/,
        requests: 1,
        leaks: ['exceed the rate limit', 'docs.claude.com'],
      },
      {
        name: 'upstream 500',
        dialect: 'gemini',
        arrange: (s) => s.fail(PROVIDER_ERRORS.gemini.internal(), 'always'),
        cause: /the directory answered HTTP 500/,
        requests: 1,
        leaks: ['An internal error has occurred'],
      },
      {
        name: 'a redirect to another loopback server',
        dialect: 'openai',
        arrange: (s) => s.respond(RAW_ANSWERS.redirect(`${target.baseUrl}/models`, 302)),
        cause: /HTTP 302, a redirect, which discovery does not follow/,
        requests: 1,
      },
      {
        name: 'a redirect to the metadata address',
        dialect: 'gemini',
        arrange: (s) => s.respond(RAW_ANSWERS.redirect('http://169.254.169.254/latest/meta-data/', 307)),
        cause: /HTTP 307, a redirect/,
        requests: 1,
        leaks: ['meta-data'],
      },
    ];

    it.each(cases)('$name', async ({ dialect: d, arrange, cause, requests, leaks }) => {
      const s = fx.standins[d];
      arrange(s);
      const before = await policy(h.accountId, PROVIDER[d]);
      expectFailed(await discover(PROVIDER[d]), cause, leaks);
      expect(s.requests).toHaveLength(requests);
      expect(target.requests).toEqual([]);
      expect(await policy(h.accountId, PROVIDER[d])).toEqual(before);
    });

    it('refuses an OAuth credential lane before any request', async () => {
      const definition = {
        display_name: 'OAuth vendor',
        base_url: fx.standins.anthropic.baseUrl,
        api_format: 'anthropic_messages',
        credentials: 'oauth_tokens',
      };
      await send(h.token, 'PUT', P('oauthco', '/definition'), { definition, expected_lock_version: await version(h.token, 'oauthco') });
      const before = await policy(h.accountId, 'oauthco');
      expectFailed(await discover('oauthco'), /does not support OAuth credential lanes/);
      expect(fx.standins.anthropic.requests).toEqual([]);
      expect(await policy(h.accountId, 'oauthco')).toEqual(before);
    });

    it('refuses a provider whose key was cleared, before any request', async () => {
      const { token, accountId } = await newAccount('openai');
      expect((await h.call('DELETE', P('openai', '/api_key'), { token })).status).toBe(200);
      const before = await policy(accountId, 'openai');
      expectFailed(await discover('openai', { token }), /the provider has no saved credential/);
      expect(fx.standins.openai.requests).toEqual([]);
      expect(await policy(accountId, 'openai')).toEqual(before);
    });

    it('takes marks up to 256 references and refuses one more, after the whole directory arrived', async () => {
      for (const [custom, status] of [
        [246, 200],
        [247, 422],
      ] as const) {
        const { token, accountId } = await newAccount('openai');
        // Custom models, one reference each, written in one step through the store (250 PUT model_definition calls
        // would take seconds); marking them and the catalog's ten invalid needs custom + 10 references.
        const current = await policy(accountId, 'openai');
        const document = parseDocument(current?.document ?? '');
        for (let i = 0; i < custom; i++) document.model_definitions[`openai/bulk-${i}`] = {};
        const key = { accountId, providerId: 'openai' };
        const written = await updatePolicyIfVersion(
          db,
          key,
          current?.lock_version ?? NaN,
          { enabled: true, document: serializeDocument(document) },
          Date.now(),
        );
        expect(written).toBe(true);
        expect(await adminRows(token, 'openai')).toHaveLength(custom + 10);
        fx.standins.openai.setModels([]);
        const before = await policy(accountId, 'openai');
        const reply = await discover('openai', { token });
        only(fx.standins.openai.requests);
        fx.standins.openai.reset();
        if (status === 200) {
          expect(reply.status, reply.text).toBe(200);
          expect(parseDocument((await policy(accountId, 'openai'))?.document ?? '').invalid_models).toHaveLength(256);
          continue;
        }
        expectFailed(reply, /would reference 257 distinct models; the limit is 256/);
        expect(await policy(accountId, 'openai')).toEqual(before);
      }
    });
  });

  describe('versions', () => {
    it('answers 400 parameter_missing without expected_lock_version, before any request', async () => {
      for (const body of [{ command: {} }, {}]) {
        const reply = await h.call('POST', P('openai', '/model_discovery'), { token: h.token, body });
        expect(reply.status, reply.text).toBe(400);
        expect(reply.body.error.code).toBe('parameter_missing');
      }
      expect(fx.standins.openai.requests).toEqual([]);
    });

    it('answers 409 stale_object for a stale version, before any request', async () => {
      const current = (await fx.version('openai')) ?? NaN;
      const before = await policy(h.accountId, 'openai');
      for (const expected of [current + 1, current - 1, null]) {
        const reply = await discover('openai', { command: { expected_lock_version: expected } });
        expect(reply.status, `${expected}: ${reply.text}`).toBe(409);
        expect(reply.body.error.code).toBe('stale_object');
      }
      expect(fx.standins.openai.requests).toEqual([]);
      expect(await policy(h.accountId, 'openai')).toEqual(before);
    });

    it('answers 409 and applies nothing when another edit wins while the directory is in flight', async () => {
      const { token, accountId } = await newAccount('openai');
      const s = fx.standins.openai;
      s.setModels((await catalogIds(token, 'openai')).filter((id) => id !== 'gpt-4.1').map((id) => ({ id })));
      s.delay(1500);
      const inFlight = discover('openai', { token });
      while (s.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      // The fetch is now waiting on the stand-in: nothing may be locked, so this edit goes through at once.
      const hidden = await send(token, 'PUT', P('openai', '/model_visibility'), {
        model: 'openai/gpt-5',
        visible: false,
        expected_lock_version: await version(token, 'openai'),
      });
      const edited = await policy(accountId, 'openai');
      const reply = await inFlight;
      expect(reply.status, reply.text).toBe(409);
      expect(reply.body.error.code).toBe('stale_object');
      only(s.requests);
      expect(await policy(accountId, 'openai')).toEqual(edited);
      expect(parseDocument(edited?.document ?? '')).toMatchObject({ hidden_models: ['openai/gpt-5'], invalid_models: [] });
      expect(hidden.body.model_provider.lock_version).toBe(edited?.lock_version);
    });
    it('answers 409 when another edit wins while the directory is in flight, even if the directory calls for no change', async () => {
      const { token, accountId } = await newAccount('openai');
      const s = fx.standins.openai;
      s.setModels((await catalogIds(token, 'openai')).map((id) => ({ id })));
      s.delay(1500);
      const inFlight = discover('openai', { token });
      while (s.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      await send(token, 'PUT', P('openai', '/model_visibility'), {
        model: 'openai/gpt-5',
        visible: false,
        expected_lock_version: await version(token, 'openai'),
      });
      const edited = await policy(accountId, 'openai');
      const reply = await inFlight;
      expect(reply.status, reply.text).toBe(409);
      expect(reply.body.error.code).toBe('stale_object');
      expect(await policy(accountId, 'openai')).toEqual(edited);
    });
  });

  describe('outbound safety', () => {
    async function customProvider(id: string, baseUrl: string): Promise<void> {
      const definition = { display_name: id, base_url: baseUrl, api_format: 'openai_chat', credentials: 'none' };
      await send(h.token, 'PUT', P(id, '/definition'), { definition, expected_lock_version: await version(h.token, id) });
    }

    it.each([
      ['the metadata address', 'http://169.254.169.254/v1', /the address 169\.254\.169\.254 is not a/],
      ['the metadata host name', 'http://metadata.google.internal/v1', /the host metadata\.google\.internal is a metadata service/],
      ['an IPv4-mapped metadata address', 'http://[::ffff:169.254.169.254]/v1', /refused by outbound safety/],
    ])('refuses %s before connecting', async (_name, baseUrl, cause) => {
      await customProvider('ssrf', baseUrl);
      const before = await policy(h.accountId, 'ssrf');
      const started = performance.now();
      const reply = await discover('ssrf');
      expectFailed(reply, cause);
      expect(reply.body.error.message).toMatch(/refused by outbound safety/);
      // A connection attempt to an unreachable address would wait for a connect timeout; a refusal does not.
      expect(performance.now() - started).toBeLessThan(2000);
      expect(await policy(h.accountId, 'ssrf')).toEqual(before);
    });

    it('refuses a host name that resolves to the metadata address, and reaches one that resolves to an allowed address', async () => {
      await customProvider('dns', `http://metadata.standin.test:${local.port}/v1`);
      const error = await rejection(probePlane.discoverModels(h.accountId, 'dns', await version(h.token, 'dns')));
      expect(error.code).toBe('validation_failed');
      expect(error.message).toMatch(/the host metadata\.standin\.test resolves to 169\.254\.169\.254/);
      expect(local.requests).toEqual([]);

      // The same resolver and port with an allowed answer: the refusal above came from the address, not the setup.
      await customProvider('dns', `http://loopback.standin.test:${local.port}/v1`);
      const reached = await probePlane.discoverModels(h.accountId, 'dns', await version(h.token, 'dns'));
      expect(reached.models.map((m) => m.id)).toEqual(['l-1', 'l-2']);
      expect(only(local.requests).headers.host).toBe(`loopback.standin.test:${local.port}`);
    });
  });

  it('never puts a key in a response, a log line or the database in the clear', async () => {
    for (const d of Object.keys(PROVIDER) as StandinDialect[]) {
      expect((await discover(PROVIDER[d])).status).toBe(200);
      fx.standins[d].fail({ dialect: d, status: 401 });
      expect((await discover(PROVIDER[d])).status).toBe(422);
      // The control: the key did travel to the upstream.
      expect(JSON.stringify(fx.standins[d].requests.map((r) => r.headers))).toContain(STANDIN_KEYS[d]);
    }
    const dump = await databaseText();
    // The control: the dump holds the saved definitions (the stand-ins' URLs).
    expect(dump).toContain(fx.standins.openai.baseUrl);
    for (const key of Object.values(STANDIN_KEYS)) {
      expect(h.transcript.join('\n')).not.toContain(key);
      expect(h.platform.logs.text()).not.toContain(key);
      expect(dump).not.toContain(key);
    }
    expect(h.platform.logs.text()).toContain('model discovery finished');
  });

  /** Every row of every table as text (blobs as latin1), to search for a secret. */
  async function databaseText(): Promise<string> {
    const handle = h.platform.ctx.database.db;
    const tables =
      dialect === 'sqlite'
        ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(handle)
        : await sql<{
            name: string;
          }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(handle);
    const texts: string[] = [];
    for (const { name } of tables.rows) {
      const rows = await sql`select * from ${sql.table(name)}`.execute(handle);
      texts.push(
        JSON.stringify(rows.rows, (_key, value: unknown) =>
          typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'Buffer'
            ? Buffer.from((value as { data: number[] }).data).toString('latin1')
            : value,
        ),
      );
    }
    return texts.join('\n');
  }
});

describe.each(dialects)('model discovery with private upstreams refused on %s', (dialect) => {
  let fx: ProviderStandins;
  beforeAll(async () => {
    fx = await openProviderStandins(dialect, { env: { PLATFORM_UPSTREAM_ALLOW_PRIVATE: 'false' } });
  });
  afterAll(async () => fx.close());

  it('refuses a loopback stand-in by address and by a name that resolves to it, and sends it nothing', async () => {
    const { h, standins } = fx;
    const discover = async () =>
      h.call('POST', P('openai', '/model_discovery'), {
        token: h.token,
        body: { command: { expected_lock_version: await fx.version('openai') } },
      });
    expectFailed(await discover(), /the address 127\.0\.0\.1 is not a public address an upstream may use/);
    await fx.pointAt('openai', `http://localhost:${standins.openai.port}/v1`);
    expectFailed(await discover(), /the host localhost resolves to (127\.0\.0\.1|::1), which is not a public address/);
    expect(standins.openai.requests).toEqual([]);
  });
});
