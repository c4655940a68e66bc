import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteChangeStamp } from './change-stamp.ts';
import { openDatabase } from './database.ts';

describe('sqliteChangeStamp', () => {
  const dir = mkdtempSync(join(tmpdir(), 'change-stamp-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('stays equal across reads and moves on a write by this connection or another one', async () => {
    const url = `sqlite:${join(dir, 'stamp.db')}`;
    const ours = await openDatabase(url);
    const theirs = await openDatabase(url);
    try {
      await sql`create table t (v integer)`.execute(ours.db);
      const first = await sqliteChangeStamp(ours.db);
      await sql`select count(*) from t`.execute(ours.db);
      expect(await sqliteChangeStamp(ours.db)).toBe(first);

      await sql`insert into t values (1)`.execute(ours.db);
      const afterOwnWrite = await sqliteChangeStamp(ours.db);
      expect(afterOwnWrite).not.toBe(first);

      // Another connection (as a CLI command in another process would) commits: the stamp moves too.
      await sql`update t set v = 2`.execute(theirs.db);
      const afterOtherWrite = await sqliteChangeStamp(ours.db);
      expect(afterOtherWrite).not.toBe(afterOwnWrite);

      // A statement that changes no row leaves it alone.
      await sql`update t set v = 3 where v = 99`.execute(ours.db);
      expect(await sqliteChangeStamp(ours.db)).toBe(afterOtherWrite);
    } finally {
      await theirs.close();
      await ours.close();
    }
  });
});
