// Group commit of usage rows (issue 16 item 6; src/admin/inference/usage.store.ts createUsageWriter) on SQLite and
// PostgreSQL: concurrent rows share a statement, each writer hears back only once its row is committed (read from a
// second connection, as another replica or a restarted process would), and a row the database refuses fails alone.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminTables } from '../../src/admin/admin.table.ts';
import { createUsageWriter, USAGE_BATCH_ROWS, type UsageRecord } from '../../src/admin/inference/usage.store.ts';
import type { PlatformDatabase } from '../../src/app/database.ts';
import { narrowTables, openDatabase, type DatabaseHandle } from '../../src/core/db/database.ts';
import { dialects, openTestDatabase, type TestDatabase } from '../support/databases.ts';

function record(id = randomUUID()): UsageRecord {
  return {
    id,
    accountId: 'account-1',
    humanId: 'human-1',
    credentialId: 'credential-1',
    model: 'openai/gpt-4.1',
    modelIdentity: 'gpt-4.1',
    workload: 'text_generation',
    inputTokens: 3,
    outputTokens: 5,
    cachedInputTokens: null,
    cost: null,
    startedAt: Date.now(),
    durationMs: 1,
    outcome: 'succeeded',
    streamed: false,
  };
}

describe.each(dialects)('usage rows by group commit on %s', (dialect) => {
  let database: TestDatabase;
  let other: DatabaseHandle<PlatformDatabase>;
  let db: Kysely<AdminTables>;
  let inserts = 0;
  beforeAll(async () => {
    database = await openTestDatabase(dialect);
    other = await openDatabase<PlatformDatabase>(database.url);
    // Counts the statements the writer sends (it sends nothing but inserts; the checks read through `other`). A
    // plugin sees every statement's result, prewritten ones included.
    db = narrowTables<PlatformDatabase, AdminTables>(database.db).withPlugin({
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        inserts++;
        return args.result;
      },
    });
  });
  afterAll(async () => {
    await other.close();
    await database.close();
  });

  /** Whether the row is committed: read through the second connection. */
  async function committed(id: string): Promise<boolean> {
    const row = await other.db.selectFrom('inference_usage').select('id').where('id', '=', id).executeTakeFirst();
    return row !== undefined;
  }

  it('writes rows handed in together with one statement, and resolves each only once its row is committed', async () => {
    const writer = createUsageWriter(db);
    inserts = 0;
    const records = Array.from({ length: 50 }, () => record());
    const seen = await Promise.all(records.map(async (r) => writer.write(r).then(() => committed(r.id))));
    expect(seen.every(Boolean)).toBe(true);
    expect(inserts).toBe(1);
  });

  it('sends rows that arrive while a batch is in flight in the next batch, and splits batches at the row limit', async () => {
    const writer = createUsageWriter(db);
    inserts = 0;
    const first = writer.write(record());
    // Let the first batch start, then hand in more than one statement holds.
    await new Promise((resolve) => setImmediate(resolve));
    const later = Array.from({ length: USAGE_BATCH_ROWS + 1 }, () => record());
    await Promise.all([first, ...later.map((r) => writer.write(r))]);
    expect(inserts).toBe(3);
    for (const r of [later[0]!, later.at(-1)!]) expect(await committed(r.id)).toBe(true);
  });

  it('a row the database refuses fails alone; the rest of its batch is committed', async () => {
    const writer = createUsageWriter(db);
    const existing = record();
    await writer.write(existing);
    const good = [record(), record()];
    const results = await Promise.allSettled([
      writer.write(good[0]!),
      writer.write({ ...record(), id: existing.id }),
      writer.write(good[1]!),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    for (const r of good) expect(await committed(r.id)).toBe(true);
  });
});
