import { sql, type Kysely, type Transaction } from 'kysely';
import type { Dialect, DatabaseHandle } from './database.ts';

/**
 * A versioned migration. Names sort in the order they apply (`YYYYMMDD_NNNN_subject`); a landed migration is never
 * edited. `up` runs inside a transaction with the migration's bookkeeping row, so a migration that fails leaves
 * the database exactly as it was (both SQLite and PostgreSQL have transactional DDL).
 */
export interface Migration {
  name: string;
  // Migrations see the database as it was when they were written, not today's typed schema.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  up(db: Transaction<any>, dialect: Dialect): Promise<void>;
}

export interface MigrationReport {
  applied: string[];
  alreadyApplied: number;
}

const TABLE = 'platform_migrations';

async function appliedNames(db: Kysely<unknown>): Promise<Set<string>> {
  const rows = await sql<{ name: string }>`select name from ${sql.table(TABLE)}`.execute(db);
  return new Set(rows.rows.map((r) => r.name));
}

/**
 * Applies every pending migration of `migrations` (the application's list, src/app/migrations.ts) in name order.
 * Safe to run from several replicas at once on PostgreSQL.
 */
export async function migrate<DB>(handle: DatabaseHandle<DB>, migrations: readonly Migration[]): Promise<MigrationReport> {
  const db = handle.db as unknown as Kysely<unknown>;
  const ordered = [...migrations].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const names = new Set<string>();
  for (const m of ordered) {
    if (names.has(m.name)) throw new Error(`duplicate migration name ${m.name}`);
    names.add(m.name);
  }
  await db.transaction().execute(async (trx) => {
    if (handle.dialect === 'postgres') await sql`select pg_advisory_xact_lock(7402119)`.execute(trx);
    await sql`create table if not exists ${sql.table(TABLE)} (name text primary key, applied_at bigint not null)`.execute(trx);
  });
  const before = await appliedNames(db);
  const applied: string[] = [];
  for (const migration of ordered) {
    if (before.has(migration.name)) continue;
    const ran = await db.transaction().execute(async (trx) => {
      // Another replica may have applied it since we looked; the lock serialises the check with the work. On
      // SQLite a no-op write takes the file's write lock up front (another process waits on busy_timeout).
      if (handle.dialect === 'postgres') await sql`select pg_advisory_xact_lock(7402119)`.execute(trx);
      else await sql`update ${sql.table(TABLE)} set name = name where 0`.execute(trx);
      if ((await appliedNames(trx)).has(migration.name)) return false;
      await migration.up(trx, handle.dialect);
      await sql`insert into ${sql.table(TABLE)} (name, applied_at) values (${migration.name}, ${Date.now()})`.execute(trx);
      return true;
    });
    if (ran) applied.push(migration.name);
  }
  return { applied, alreadyApplied: before.size };
}

/** Names of migrations not yet applied, for `platform migrate --status`. */
export async function pendingMigrations<DB>(handle: DatabaseHandle<DB>, migrations: readonly Migration[]): Promise<string[]> {
  const db = handle.db as unknown as Kysely<unknown>;
  let done: Set<string>;
  try {
    done = await appliedNames(db);
  } catch {
    done = new Set();
  }
  return migrations
    .map((m) => m.name)
    .filter((n) => !done.has(n))
    .sort();
}
