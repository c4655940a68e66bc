/* eslint-disable @typescript-eslint/no-unsafe-member-access -- response bodies are untyped JSON; the assertions pin their shape */
// What the inference path keeps between requests (the projection by its snapshot key, opened credentials by their
// sealed value, configured cost units) must never outlive a write made elsewhere. Each case warms the serving
// replica's caches with a call, changes the Account through a second model plane on its own connection (another
// replica, or the CLI), and checks that the very next request sees the change — on SQLite and PostgreSQL.
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminTables } from '../../src/admin/admin.table.ts';
import { createModelPlane, type ModelPlane } from '../../src/admin/model-plane.ts';
import { createUpstreamClient, type UpstreamClient } from '../../src/admin/upstream/upstream-client.ts';
import type { PlatformDatabase } from '../../src/app/database.ts';
import { narrowTables, openDatabase, type DatabaseHandle } from '../../src/core/db/database.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { dialects } from '../support/databases.ts';
import { addHuman, type Reply } from './admin-harness.ts';
import { openProviderStandins, STANDIN_KEYS, type ProviderStandins } from './provider-standins.ts';

const MODEL = 'openai/gpt-4.1';
const PATH = '/agent_api/v1/inference_requests';
const USER = [{ role: 'user', content: 'Say ok.' }];

describe.each(dialects)('inference after a write by another replica on %s', (dialect) => {
  let f: ProviderStandins;
  let member: Awaited<ReturnType<typeof addHuman>>;
  let second: DatabaseHandle<PlatformDatabase>;
  let upstream: UpstreamClient;
  let other: ModelPlane;
  beforeAll(async () => {
    f = await openProviderStandins(dialect, { standin: { reply: 'OK' } });
    member = await addHuman(f.h, 'member');
    second = await openDatabase<PlatformDatabase>(f.h.platform.database.url);
    upstream = createUpstreamClient({ allowPrivate: true });
    const ctx = f.h.platform.ctx;
    const db: Kysely<AdminTables> = narrowTables(second.db);
    other = createModelPlane({
      db,
      dialect: ctx.database.dialect,
      clock: ctx.clock,
      log: silentLogger(),
      secretKeys: ctx.secretKeys,
      catalogDir: ctx.config.admin.PLATFORM_CATALOG_DIR,
      upstream,
    });
  });
  afterAll(async () => {
    await upstream.close();
    await second.close();
    await f.close();
  });

  const infer = (): Promise<Reply> => f.h.call('POST', PATH, { token: member.member, body: { model: MODEL, messages: USER } });

  it('a model hidden elsewhere is refused on the very next request, and served again once visible', async () => {
    expect((await infer()).status).toBe(200);
    await other.setVisibility(f.h.accountId, 'openai', MODEL, false, await f.version('openai'));
    const refused = await infer();
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body.error.message).toContain('model_hidden');
    await other.setVisibility(f.h.accountId, 'openai', MODEL, true, await f.version('openai'));
    expect((await infer()).status).toBe(200);
  });

  it('an API key replaced elsewhere is the one the very next upstream request carries', async () => {
    expect((await infer()).status).toBe(200);
    f.standins.openai.reset();
    await other.putApiKey(f.h.accountId, 'openai', 'sk-replaced-elsewhere-0123456789');
    const rejected = await infer();
    // The stand-in refuses any key but its own: the call fails upstream, having carried the new key.
    expect(rejected.status, rejected.text).not.toBe(200);
    expect(f.standins.openai.requests[0]?.headers.authorization).toBe('Bearer sk-replaced-elsewhere-0123456789');
    await other.putApiKey(f.h.accountId, 'openai', STANDIN_KEYS.openai);
    expect((await infer()).status).toBe(200);
  });

  it('a cost unit configured elsewhere prices the very next request', async () => {
    const before = await infer();
    expect(before.status).toBe(200);
    expect(before.body.cost).toBeNull();
    await other.costUnit.configure(f.h.accountId, 'USD');
    const after = await infer();
    expect(after.body.cost).toMatchObject({ unit: 'USD' });
  });
});
