import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase, type DatabaseHandle, type Dialect } from '../../src/core/db/database.ts';
import { migrate } from '../../src/core/db/migrator.ts';
import type { PlatformDatabase } from '../../src/app/database.ts';
import { PLATFORM_MIGRATIONS } from '../../src/app/migrations.ts';

const pgUrl = process.env.TEST_DATABASE_URL;

if (process.env.CI === 'true' && !pgUrl) {
  throw new Error('CI=true but TEST_DATABASE_URL is not set: PostgreSQL tests must run under CI');
}
if (!pgUrl && !(globalThis as { __pgWarned?: boolean }).__pgWarned) {
  (globalThis as { __pgWarned?: boolean }).__pgWarned = true;
  console.warn('\n*** TEST_DATABASE_URL is not set: PostgreSQL store tests are SKIPPED (SQLite only). ***\n');
}

/** The dialects every store test runs on: SQLite always, PostgreSQL when `TEST_DATABASE_URL` is set. */
export const dialects: Dialect[] = pgUrl ? ['sqlite', 'postgres'] : ['sqlite'];

export interface TestDatabase extends DatabaseHandle<PlatformDatabase> {
  /** The URL another process (a spawned CLI or server) can use to reach the same database. */
  url: string;
  /** PostgreSQL: the connection options that select this test's schema. */
  schema?: string;
}

/**
 * A fresh, migrated database owned by one test: a new SQLite file in a temp dir, or a new PostgreSQL schema.
 * `close()` drops it, so runs never collide.
 */
export async function openTestDatabase(dialect: Dialect, options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  let handle: DatabaseHandle<PlatformDatabase>;
  let url: string;
  let cleanup: () => Promise<void>;
  let schema: string | undefined;
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'platform-test-'));
    url = `sqlite:${join(dir, 'test.db')}`;
    handle = await openDatabase(url);
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  } else {
    if (!pgUrl) throw new Error('TEST_DATABASE_URL is not set');
    schema = `t_${randomBytes(6).toString('hex')}`;
    handle = await openDatabase(pgUrl, { schema, poolSize: 5 });
    const parsed = new URL(pgUrl);
    parsed.searchParams.set('options', `-c search_path=${schema}`);
    url = parsed.toString();
    cleanup = async () => {
      const client = new pg.Client({ connectionString: pgUrl });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    };
  }
  if (options.migrate !== false) await migrate(handle, PLATFORM_MIGRATIONS);
  const close = handle.close.bind(handle);
  return {
    ...handle,
    url,
    ...(schema ? { schema } : {}),
    async close() {
      await close();
      await cleanup();
    },
  };
}
