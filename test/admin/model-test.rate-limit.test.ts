// The model-test rate limit's statement (spec Limits: 10 per Human per three minutes), on each database: the sliding
// window, refusals that record nothing, Retry-After, and the race for the last slots between two replicas (two
// connections to one database), which the single conditional upsert must decide without a transaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminTables } from '../../src/admin/admin.table.ts';
import {
  createModelTestRateLimit,
  MODEL_TEST_WINDOW_MS,
  MODEL_TESTS_PER_WINDOW,
} from '../../src/admin/model-test/model-test.rate-limit.ts';
import { readModelTestWindow } from '../../src/admin/model-test/model-test.rate-limit.store.ts';
import type { PlatformDatabase } from '../../src/app/database.ts';
import { fakeClock } from '../../src/core/clock.ts';
import { narrowTables, openDatabase, type DatabaseHandle } from '../../src/core/db/database.ts';
import { AppError } from '../../src/core/errors.ts';
import { dialects, openTestDatabase, type TestDatabase } from '../support/databases.ts';

/** The refusal `admit` throws, with its Retry-After in seconds; undefined when it admitted. */
async function outcome(call: Promise<void>): Promise<{ code: string; retryAfter: number } | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { code: error.code, retryAfter: Number(error.headers?.['retry-after']) };
  }
}

describe.each(dialects)('model-test rate limit on %s', (dialect) => {
  let database: TestDatabase;
  let replica: DatabaseHandle<PlatformDatabase>;
  beforeAll(async () => {
    database = await openTestDatabase(dialect);
    replica = await openDatabase<PlatformDatabase>(database.url);
  });
  afterAll(async () => {
    await replica.close();
    await database.close();
  });
  const db = () => narrowTables<PlatformDatabase, AdminTables>(database.db);

  it('admits ten in a sliding three minutes, refuses the eleventh without recording it, and reopens slot by slot', async () => {
    const clock = fakeClock();
    const limit = createModelTestRateLimit({ db: db(), dialect, clock });
    const start = clock.now();
    for (let i = 0; i < MODEL_TESTS_PER_WINDOW; i++) {
      expect(await outcome(limit.admit('h-slide'))).toBeUndefined();
      clock.advance(1_000);
    }
    const stored = await readModelTestWindow(db(), 'h-slide');
    expect(JSON.parse(stored ?? '[]')).toEqual(Array.from({ length: 10 }, (_, i) => start + i * 1_000));

    // 10 s after the first: it expires 170 s from now.
    expect(await outcome(limit.admit('h-slide'))).toEqual({ code: 'rate_limited', retryAfter: 170 });
    expect(await readModelTestWindow(db(), 'h-slide'), 'a refused test is not recorded').toBe(stored);

    // The window slides: once the first test is three minutes old, exactly one more is admitted.
    clock.set(start + MODEL_TEST_WINDOW_MS - 1);
    expect((await outcome(limit.admit('h-slide')))?.retryAfter).toBe(1);
    clock.set(start + MODEL_TEST_WINDOW_MS);
    expect(await outcome(limit.admit('h-slide'))).toBeUndefined();
    expect(await outcome(limit.admit('h-slide'))).toEqual({ code: 'rate_limited', retryAfter: 1 });
    const slid = JSON.parse((await readModelTestWindow(db(), 'h-slide')) ?? '[]') as number[];
    expect(slid, 'expired times are dropped as new ones are written').toEqual([
      ...Array.from({ length: 9 }, (_, i) => start + (i + 1) * 1_000),
      start + MODEL_TEST_WINDOW_MS,
    ]);

    // Long after, the whole window is free again, and another Human never shared it.
    clock.advance(MODEL_TEST_WINDOW_MS);
    expect(await outcome(limit.admit('h-slide'))).toBeUndefined();
    expect(JSON.parse((await readModelTestWindow(db(), 'h-slide')) ?? '[]')).toEqual([clock.now()]);
    expect(await outcome(limit.admit('h-other'))).toBeUndefined();
  });

  it('gives exactly ten of thirty concurrent tests of one Human across two replicas, wherever its row starts', async () => {
    const clock = fakeClock();
    const here = createModelTestRateLimit({ db: db(), dialect, clock });
    const there = createModelTestRateLimit({ db: narrowTables<PlatformDatabase, AdminTables>(replica.db), dialect, clock });
    for (const [human, before] of [
      ['h-race-new', 0],
      ['h-race-some', 4],
    ] as const) {
      for (let i = 0; i < before; i++) await here.admit(human);
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => outcome((i % 2 ? here : there).admit(human))));
      expect(results.filter((r) => r === undefined)).toHaveLength(MODEL_TESTS_PER_WINDOW - before);
      expect(results.filter((r) => r?.code === 'rate_limited')).toHaveLength(30 - (MODEL_TESTS_PER_WINDOW - before));
      expect(JSON.parse((await readModelTestWindow(db(), human)) ?? '[]')).toHaveLength(MODEL_TESTS_PER_WINDOW);
    }
  });
});
