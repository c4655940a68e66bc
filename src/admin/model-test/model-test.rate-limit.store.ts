import { CompiledQuery, type Kysely } from 'kysely';
import { preparedOnPostgres, type Dialect } from '../../core/db/database.ts';
import type { AdminTables } from '../admin.table.ts';

/**
 * Records one model test in a Human's window in one statement, if the window has room: an upsert whose update is
 * conditional on the count of recent times. The statement is atomic on both databases (PostgreSQL evaluates the
 * `do update … where` against the latest row under its row lock, so two replicas racing for the last slot cannot
 * both win; SQLite has one writer), so no transaction and no read-then-write are needed.
 *
 * On PostgreSQL the statement commits with `synchronous_commit` off, set for its own implicit transaction only
 * (`set_config(…, true)`; the setting in force at commit decides, per the PostgreSQL manual). That spares the WAL
 * flush (0.2–0.3 ms, and milliseconds at the tail) on every model test. What it risks: a crash of the database server
 * itself within a fraction of a second of a commit forgets that commit. For this row that means a few recent tests
 * are not counted after such a crash, so a Human could run a few more than ten in that window. The limit guards
 * provider spend against repeated clicks, not an invariant: the architecture keeps such limits in Redis when one is
 * configured, which keeps nothing on disk at all. The admission is visible to every replica as soon as the
 * statement returns, exactly as with a synchronous commit; only crash durability differs. Policy and credential writes
 * never use this.
 */
const RECORD_SQL: Record<Dialect, string> = {
  postgres: preparedOnPostgres(
    [
      'insert into model_test_windows as w (human_id, attempts)',
      "select $1, $2 where set_config('synchronous_commit', 'off', true) = 'off'",
      'on conflict (human_id) do update',
      "  set attempts = (select coalesce(json_agg(s.t order by s.t), '[]')::text from (",
      '      select e.v::bigint as t from json_array_elements_text(w.attempts::json) as e(v) where e.v::bigint > $3::bigint',
      '      union all select $4::bigint) as s)',
      '  where (select count(*) from json_array_elements_text(w.attempts::json) as e(v) where e.v::bigint > $3::bigint) < $5::int',
      'returning attempts',
    ].join('\n'),
  ),
  sqlite: [
    'insert into model_test_windows (human_id, attempts) values (?, ?)',
    'on conflict (human_id) do update',
    '  set attempts = (select json_group_array(t) from (',
    '      select value as t from json_each(model_test_windows.attempts) where value > ?',
    '      union all select ? order by 1))',
    '  where (select count(*) from json_each(model_test_windows.attempts) where value > ?) < ?',
    'returning attempts',
  ].join('\n'),
};

/**
 * Appends `now` to the Human's window unless it already holds `limit` times after `windowStart` (times at or before
 * it are dropped on the way). True when the test was recorded, false when the window is full (nothing written).
 */
export async function recordModelTest(
  db: Kysely<AdminTables>,
  dialect: Dialect,
  humanId: string,
  now: number,
  windowStart: number,
  limit: number,
): Promise<boolean> {
  const first = JSON.stringify([now]);
  const params =
    dialect === 'postgres' ? [humanId, first, windowStart, now, limit] : [humanId, first, windowStart, now, windowStart, limit];
  const result = await db.executeQuery<{ attempts: string }>(CompiledQuery.raw(RECORD_SQL[dialect], params));
  return result.rows.length === 1;
}

/** The stored window of a Human (a JSON array of epoch-ms times), if any; read only to say when a full one reopens. */
export async function readModelTestWindow(db: Kysely<AdminTables>, humanId: string): Promise<string | undefined> {
  const row = await db.selectFrom('model_test_windows').select('attempts').where('human_id', '=', humanId).executeTakeFirst();
  return row?.attempts;
}
