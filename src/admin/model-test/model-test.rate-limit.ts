import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { Dialect } from '../../core/db/database.ts';
import { AppError } from '../../core/errors.ts';
import type { AdminTables } from '../admin.table.ts';
import { readModelTestWindow, recordModelTest } from './model-test.rate-limit.store.ts';

/** Spec Limits: 10 model tests per Human per three minutes. */
export const MODEL_TESTS_PER_WINDOW = 10;
export const MODEL_TEST_WINDOW_MS = 3 * 60_000;

/**
 * The model-test limit, counted in the database so that every replica and every credential of a Human share one
 * window (a per-process counter would let N replicas allow N times the limit). A sliding window: a test is admitted
 * when fewer than ten of the Human's tests started in the last three minutes.
 *
 * One row per Human holds the times of its recent tests. An admitted test costs one conditional upsert (see
 * model-test.rate-limit.store.ts), atomic on its own, so no transaction, no lock beyond the statement and no retry
 * loop; a refused one adds a read to say when the window reopens.
 */
export function createModelTestRateLimit(deps: { db: Kysely<AdminTables>; dialect: Dialect; clock: Clock }) {
  const { db, dialect, clock } = deps;

  return {
    /** Records a test, or throws 429 `rate_limited` with `Retry-After` when the Human's window is full. */
    async admit(humanId: string): Promise<void> {
      const now = clock.now();
      const windowStart = now - MODEL_TEST_WINDOW_MS;
      if (await recordModelTest(db, dialect, humanId, now, windowStart, MODEL_TESTS_PER_WINDOW)) return;
      // Refused tests are not recorded: the window reopens when the oldest of the last ten expires.
      const times = recent(await readModelTestWindow(db, humanId), windowStart);
      // Undefined when slots expired between the two statements: the window has room again already.
      const oldest = times[times.length - MODEL_TESTS_PER_WINDOW];
      const wait = oldest === undefined ? 1 : Math.max(1, Math.ceil((oldest + MODEL_TEST_WINDOW_MS - now) / 1000));
      throw new AppError(
        'rate_limited',
        `at most ${MODEL_TESTS_PER_WINDOW} model tests per Human in three minutes; try again in ${wait} s`,
        {
          headers: { 'retry-after': String(wait) },
        },
      );
    },
  };
}

/** The times of a stored window after `windowStart`, oldest first. */
function recent(text: string | undefined, windowStart: number): number[] {
  if (text === undefined) return [];
  const times = JSON.parse(text) as unknown;
  return Array.isArray(times) ? times.filter((t): t is number => typeof t === 'number' && t > windowStart).sort((x, y) => x - y) : [];
}
