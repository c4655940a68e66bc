import { CompiledQuery, type Kysely } from 'kysely';

// `total_changes()` moves with every row this connection inserts, updates or deletes (committed or not);
// `data_version` moves whenever another connection (a CLI command, another process) commits to the file.
const STAMP_SQL = 'select total_changes() as changes, data_version as version from pragma_data_version';

/**
 * SQLite only: a value that differs whenever the database may have changed since it was last taken. A reader can
 * keep what it derived from the database next to the stamp it took *before* reading, and reuse it while a new stamp
 * is equal: the next read still sees every write committed before it (ours or another process's), at the cost of
 * one trivial statement instead of the real query. Conservative: a rolled-back write also moves the stamp.
 */
export async function sqliteChangeStamp<DB>(db: Kysely<DB>): Promise<string> {
  const result = await db.executeQuery<{ changes: number; version: number }>(CompiledQuery.raw(STAMP_SQL, []));
  const row = result.rows[0];
  if (!row) throw new Error('pragma_data_version returned no row');
  return `${row.changes}:${row.version}`;
}
