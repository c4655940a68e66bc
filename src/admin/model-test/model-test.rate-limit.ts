import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import type { AdminTables } from '../admin.table.ts';

/** Spec Limits: 10 model tests per Human per three minutes. */
export const MODEL_TESTS_PER_WINDOW = 10;
export const MODEL_TEST_WINDOW_MS = 3 * 60_000;

/** Compare-and-set attempts before giving up (only reached when one Human starts tests in a tight race). */
const ATTEMPTS = 8;

/**
 * The model-test limit, counted in the database so that every replica and every credential of a Human share one
 * window (a per-process counter would let N replicas allow N times the limit). A sliding window: a test is admitted
 * when fewer than ten of the Human's tests started in the last three minutes.
 *
 * One row per Human holds the times of its recent tests. A test reads the row and replaces it only if it is still
 * what was read (`UPDATE … WHERE attempts = ?`, or an insert that conflicts), so two replicas racing for the tenth
 * slot cannot both win; the loser reads again. Two statements in the common case, no transaction and no lock, the
 * same on SQLite and PostgreSQL.
 */
export function createModelTestRateLimit(deps: { db: Kysely<AdminTables>; clock: Clock }) {
  const { db, clock } = deps;

  function recent(text: string | undefined, windowStart: number): number[] {
    if (text === undefined) return [];
    const times = JSON.parse(text) as unknown;
    return Array.isArray(times) ? times.filter((t): t is number => typeof t === 'number' && t > windowStart) : [];
  }

  return {
    /** Records a test, or throws 429 `rate_limited` with `Retry-After` when the Human's window is full. */
    async admit(humanId: string): Promise<void> {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const now = clock.now();
        const row = await db.selectFrom('model_test_windows').select('attempts').where('human_id', '=', humanId).executeTakeFirst();
        const times = recent(row?.attempts, now - MODEL_TEST_WINDOW_MS);
        if (times.length >= MODEL_TESTS_PER_WINDOW) {
          // Refused tests are not recorded: the window reopens when the oldest of the last ten expires.
          const oldest = times[times.length - MODEL_TESTS_PER_WINDOW] ?? now;
          const wait = Math.max(1, Math.ceil((oldest + MODEL_TEST_WINDOW_MS - now) / 1000));
          throw new AppError(
            'rate_limited',
            `at most ${MODEL_TESTS_PER_WINDOW} model tests per Human in three minutes; try again in ${wait} s`,
            {
              headers: { 'retry-after': String(wait) },
            },
          );
        }
        const next = JSON.stringify([...times, now]);
        const written = row
          ? Number(
              (
                await db
                  .updateTable('model_test_windows')
                  .set({ attempts: next })
                  .where('human_id', '=', humanId)
                  .where('attempts', '=', row.attempts)
                  .executeTakeFirst()
              ).numUpdatedRows,
            ) === 1
          : Number(
              (
                await db
                  .insertInto('model_test_windows')
                  .values({ human_id: humanId, attempts: next })
                  .onConflict((oc) => oc.column('human_id').doNothing())
                  .executeTakeFirst()
              ).numInsertedOrUpdatedRows ?? 0n,
            ) === 1;
        if (written) return;
      }
      throw new AppError('rate_limited', 'model tests of this Human are starting too fast to count; try again', {
        headers: { 'retry-after': '1' },
      });
    },
  };
}
