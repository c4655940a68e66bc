/* eslint-disable @typescript-eslint/no-unsafe-member-access -- response bodies are untyped JSON (Reply.body); the assertions pin their shape */
import { createUpstreamClient, type UpstreamClient } from '../../src/admin/upstream/upstream-client.ts';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModelPlane, type ModelPlane } from '../../src/admin/model-plane.ts';
import { emptyDocument, parseDocument, serializeDocument } from '../../src/admin/policy/policy.document.ts';
import { findPolicy, insertPolicyIfAbsent } from '../../src/admin/policy/policy.store.ts';
import type { PlatformDatabase } from '../../src/app/database.ts';
import { narrowTables, openDatabase, type DatabaseHandle } from '../../src/core/db/database.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { dialects } from '../support/databases.ts';
import { repoRoot } from '../support/shared.ts';
import { openHarness, P, writeCatalog, type Harness } from './admin-harness.ts';

const WRITERS = 32;
const MODELS = Array.from({ length: WRITERS }, (_, i) => `m-${String(i).padStart(2, '0')}`);
const CATALOG = {
  'race.json': JSON.stringify({
    providers: {
      race: {
        display_name: 'Race',
        base_url: 'https://race.example/v1',
        api_format: 'openai_chat',
        credentials: 'api_key',
        models: Object.fromEntries(MODELS.map((m) => [m, {}])),
      },
    },
  }),
};

function errorCode(result: PromiseSettledResult<unknown>): string | undefined {
  return result.status === 'rejected' ? (result.reason as { code?: string }).code : undefined;
}

describe.each(dialects)('concurrent writers on %s', (dialect) => {
  let h: Harness;
  let catalogDir: string;
  let second: DatabaseHandle<PlatformDatabase>;
  let planeA: ModelPlane;
  let planeB: ModelPlane;
  let upstream: UpstreamClient;
  beforeAll(async () => {
    catalogDir = writeCatalog(CATALOG);
    h = await openHarness(dialect, { catalog: catalogDir });
    // A second, independent connection to the same database: two "replicas" racing.
    second = await openDatabase<PlatformDatabase>(h.platform.database.url);
    const ctx = h.platform.ctx;
    upstream = createUpstreamClient({ allowPrivate: true });
    const deps = { clock: ctx.clock, log: silentLogger(), secretKeys: ctx.secretKeys, catalogDir, upstream };
    planeA = createModelPlane({ ...deps, db: narrowTables(ctx.database.db), dialect: ctx.database.dialect });
    planeB = createModelPlane({ ...deps, db: narrowTables(second.db), dialect: second.dialect });
  });
  afterAll(async () => {
    await upstream.close();
    await second.close();
    await h.close();
  });

  async function newAccount(): Promise<{ token: string; accountId: string }> {
    const owner = await h.platform.ctx.identity.bootstrap({
      accountName: 'Race',
      email: `race-${Math.random().toString(36).slice(2)}@example.test`,
    });
    return { token: owner.platform_token, accountId: owner.account_id };
  }

  it('[ADM-LOCK-6] lets exactly one of two creators insert an absent policy; the other gets 409 stale_object', async () => {
    for (let round = 0; round < 10; round++) {
      const { accountId } = await newAccount();
      const results = await Promise.allSettled([
        planeA.setVisibility(accountId, 'race', 'race/m-00', false, null),
        planeB.setVisibility(accountId, 'race', 'race/m-01', false, null),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.map(errorCode).filter(Boolean)).toEqual(['stale_object']);
      const policy = await findPolicy(narrowTables(h.platform.ctx.database.db), { accountId, providerId: 'race' });
      expect(policy?.lock_version).toBe(0);
      expect(parseDocument(policy?.document ?? '').hidden_models).toHaveLength(1);
    }
    // The store primitive itself: of two inserts, one wins.
    const { accountId } = await newAccount();
    const inserted = await Promise.all([
      insertPolicyIfAbsent(
        narrowTables(h.platform.ctx.database.db),
        { accountId, providerId: 'race' },
        { enabled: true, document: serializeDocument(emptyDocument()) },
        0,
      ),
      insertPolicyIfAbsent(
        narrowTables(second.db),
        { accountId, providerId: 'race' },
        { enabled: false, document: serializeDocument(emptyDocument()) },
        0,
      ),
    ]);
    expect(inserted.filter(Boolean)).toHaveLength(1);
  });

  it('[ADM-READ-5] [ADM-MEM-3] shows every write to the next read on another replica while that replica is busy with concurrent reads', async () => {
    const { accountId } = await newAccount();
    await planeA.setLane(accountId, 'race', true, null);
    // Replica B serves a steady stream of concurrent reads of the same Account (so its reads coalesce) while
    // replica A writes; after each write, a read started on B must show it.
    let stop = false;
    const background = Array.from({ length: 8 }, async () => {
      while (!stop) await planeB.adminModelsJson(accountId, {});
    });
    try {
      for (let i = 0; i < 12; i++) {
        const ref = `race/${MODELS[i] ?? 'm-00'}`;
        await planeA.setVisibility(accountId, 'race', ref, false, i);
        const body = JSON.parse((await planeB.adminModelsJson(accountId, {})).json.toString('utf8')) as {
          models: { ref: string; visible: boolean }[];
        };
        expect(body.models.find((m) => m.ref === ref)?.visible, `read after write ${i}`).toBe(false);
        const provider = (await planeB.providersOf(accountId)).find((p) => p.id === 'race');
        expect(provider?.policy?.lockVersion).toBe(i + 1);
      }
    } finally {
      stop = true;
      await Promise.all(background);
    }
  });

  it('[ADM-LOCK-5] gives one success and one 409 stale_object to two commands racing on one version', async () => {
    const { accountId } = await newAccount();
    await planeA.setLane(accountId, 'race', true, null);
    // Every command is a real change (a same-value command would succeed without a write and race nobody).
    for (let version = 0; version < WRITERS / 2; version++) {
      const a = MODELS[version * 2] ?? 'm-00';
      const b = MODELS[version * 2 + 1] ?? 'm-01';
      const results = await Promise.allSettled([
        planeA.setVisibility(accountId, 'race', `race/${a}`, false, version),
        planeB.setAvailability(accountId, 'race', `race/${b}`, false, version),
      ]);
      expect(
        results.filter((r) => r.status === 'fulfilled'),
        `version ${version}`,
      ).toHaveLength(1);
      expect(results.map(errorCode).filter(Boolean)).toEqual(['stale_object']);
      const policy = await findPolicy(narrowTables(second.db), { accountId, providerId: 'race' });
      expect(policy?.lock_version).toBe(version + 1);
    }
  });

  it('[ADM-LOCK-5] [ADM-CLI-1] gives one success and one conflict to two operator processes racing on one version', async () => {
    const { token, accountId } = await newAccount();
    await h.call('PUT', P('race', '/lane'), { token, body: { command: { enabled: true } } });
    const env = {
      ...process.env,
      DATABASE_URL: h.platform.database.url,
      PLATFORM_DATA_DIR: catalogDir,
      PLATFORM_CATALOG_DIR: catalogDir,
      PLATFORM_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    };
    // Two separate OS processes, each with its own database connection, both sending version 0.
    const run = (ref: string) =>
      new Promise<number>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [join(repoRoot, 'bin', 'platform.js'), 'models', 'hide', '--account', accountId, ref, '--expected-lock-version', '0'],
          { env, stdio: 'ignore' },
        );
        child.once('error', reject);
        child.once('exit', (code) => resolve(code ?? -1));
      });
    const codes = await Promise.all([run('race/m-00'), run('race/m-01')]);
    expect(codes.sort()).toEqual([0, 3]);
    const provider = await h.call('GET', P('race'), { token });
    expect(provider.body.model_provider.lock_version).toBe(1);
    const models = (await h.call('GET', '/api/v1/admin/models', { token })).body.models as { visible: boolean }[];
    const hidden = models.filter((m) => !m.visible);
    expect(hidden).toHaveLength(1);
  }, 90_000);

  it(`[ADM-LOCK-5] loses no update with ${WRITERS} concurrent read-then-write writers over HTTP`, async () => {
    const { token } = await newAccount();
    await h.call('PUT', P('race', '/lane'), { token, body: { command: { enabled: true } } });
    let conflicts = 0;
    let successes = 0;
    const writer = async (model: string) => {
      // Each writer hides its own model: read the version, write with it; on 409 read again (the client's choice;
      // the server never retries).
      for (let attempt = 0; attempt < 500; attempt++) {
        const read = await h.call('GET', P('race'), { token });
        const version = read.body.model_provider.lock_version as number;
        const write = await h.call('PUT', P('race', '/model_visibility'), {
          token,
          body: { command: { model: `race/${model}`, visible: false, expected_lock_version: version } },
        });
        if (write.status === 200) {
          successes++;
          return;
        }
        expect(write.status).toBe(409);
        expect(write.body.error.code).toBe('stale_object');
        conflicts++;
      }
      throw new Error(`writer for ${model} never succeeded`);
    };
    await Promise.all(MODELS.map(writer));
    expect(successes).toBe(WRITERS);
    expect(conflicts).toBeGreaterThan(0);
    const provider = await h.call('GET', P('race'), { token });
    // Every success moved the version by exactly one, and every hide is there: nothing was overwritten.
    expect(provider.body.model_provider.lock_version).toBe(WRITERS);
    const rows = (await h.call('GET', '/api/v1/admin/models', { token })).body.models as { ref: string; visible: boolean }[];
    expect(rows.filter((r) => !r.visible).map((r) => r.ref)).toEqual(MODELS.map((m) => `race/${m}`));
  });
});
