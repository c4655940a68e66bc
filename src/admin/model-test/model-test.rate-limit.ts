import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { Dialect } from '../../core/db/database.ts';
import { AppError } from '../../core/errors.ts';
import type { AdminTables } from '../admin.table.ts';

/** Spec Limits: 10 model tests per Human per three minutes. */
export const MODEL_TESTS_PER_WINDOW = 10;
export const MODEL_TEST_WINDOW_MS = 3 * 60_000;

/**
 * The model-test limit, counted in the database so that every replica and every credential of a Human share one
 * window (a per-process counter would let N replicas allow N times the limit). A sliding window: an attempt is
 * admitted when fewer than ten of the Human's attempts are younger than three minutes.
 *
 * One short transaction with no network IO counts and records. On PostgreSQL a transaction-scoped advisory lock on
 * the Human serialises concurrent attempts, which READ COMMITTED alone would not (two could each count nine); on
 * SQLite the one connection of the process serialises them (the CLI, the only other process, takes no model tests
 * through this limit).
 */
export function createModelTestRateLimit(deps: { db: Kysely<AdminTables>; dialect: Dialect; clock: Clock }) {
  const { db, dialect, clock } = deps;
  return {
    /** Records an attempt, or throws 429 `rate_limited` with `Retry-After` when the Human's window is full. */
    async admit(humanId: string): Promise<void> {
      const now = clock.now();
      const windowStart = now - MODEL_TEST_WINDOW_MS;
      const refusedFor = await db.transaction().execute(async (trx) => {
        if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtextextended(${`model_test:${humanId}`}, 0))`.execute(trx);
        await trx.deleteFrom('model_test_attempts').where('human_id', '=', humanId).where('attempted_at', '<=', windowStart).execute();
        const recent = await trx
          .selectFrom('model_test_attempts')
          .select('attempted_at')
          .where('human_id', '=', humanId)
          .orderBy('attempted_at', 'desc')
          .limit(MODEL_TESTS_PER_WINDOW)
          .execute();
        if (recent.length < MODEL_TESTS_PER_WINDOW) {
          await trx.insertInto('model_test_attempts').values({ human_id: humanId, attempted_at: now }).execute();
          return null;
        }
        // Refused attempts are not recorded: the window reopens when the oldest of the last ten expires.
        const oldestCounted = Number(recent[MODEL_TESTS_PER_WINDOW - 1]?.attempted_at ?? now);
        return Math.max(1, Math.ceil((oldestCounted + MODEL_TEST_WINDOW_MS - now) / 1000));
      });
      if (refusedFor !== null)
        throw new AppError(
          'rate_limited',
          `at most ${MODEL_TESTS_PER_WINDOW} model tests per Human in three minutes; try again in ${refusedFor} s`,
          { headers: { 'retry-after': String(refusedFor) } },
        );
    },
  };
}
