import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects, openTestDatabase, type TestDatabase } from '../../test/support/databases.ts';
import { migrate, pendingMigrations, type Migration } from '../core/db/migrator.ts';
import { PLATFORM_MIGRATIONS as MIGRATIONS } from './migrations.ts';

async function tableExists(db: TestDatabase, name: string): Promise<boolean> {
  const query =
    db.dialect === 'sqlite'
      ? sql<{ n: number }>`select count(*) as n from sqlite_master where type = 'table' and name = ${name}`
      : sql<{
          n: number;
        }>`select count(*)::int as n from information_schema.tables where table_schema = current_schema() and table_name = ${name}`;
  const result = await query.execute(db.db);
  return Number(result.rows[0]?.n) > 0;
}

describe.each(dialects)('migrations on %s', (dialect) => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  it('applies every migration once and is idempotent', async () => {
    database = await openTestDatabase(dialect, { migrate: false });
    expect(await pendingMigrations(database, MIGRATIONS)).toEqual(MIGRATIONS.map((m) => m.name).sort());
    const first = await migrate(database, MIGRATIONS);
    expect(first.applied.length).toBe(MIGRATIONS.length);
    expect(await tableExists(database, 'humans')).toBe(true);
    const second = await migrate(database, MIGRATIONS);
    expect(second.applied).toEqual([]);
    expect(await pendingMigrations(database, MIGRATIONS)).toEqual([]);
  });

  it('leaves the database as it was when a migration fails midway', async () => {
    database = await openTestDatabase(dialect);
    const broken: Migration = {
      name: '29991231_9999_broken',
      async up(db) {
        await db.schema.createTable('half_done').addColumn('id', 'text').execute();
        await sql`insert into half_done (id) values ('x')`.execute(db);
        throw new Error('boom');
      },
    };
    await expect(migrate(database, [...MIGRATIONS, broken])).rejects.toThrow('boom');
    expect(await tableExists(database, 'half_done')).toBe(false);
    expect(await pendingMigrations(database, [...MIGRATIONS, broken])).toEqual(['29991231_9999_broken']);
  });

  it('two concurrent migrators apply each migration exactly once', async () => {
    database = await openTestDatabase(dialect, { migrate: false });
    const reports = await Promise.all([migrate(database, MIGRATIONS), migrate(database, MIGRATIONS)]);
    const applied = reports.flatMap((r) => r.applied).sort();
    expect(applied).toEqual(MIGRATIONS.map((m) => m.name).sort());
  });
});
