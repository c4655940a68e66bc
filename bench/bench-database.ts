import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Dialect } from '../src/core/db/database.ts';

/** PostgreSQL for the benches: BENCH_DATABASE_URL, else TEST_DATABASE_URL, else the local default. */
const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A database URL of its own for one bench run, and how to remove it afterwards. */
export interface BenchDatabase {
  url: string;
  cleanup: () => Promise<void>;
}

/**
 * A fresh database for `dialect`: a SQLite file in a temp directory, or a new PostgreSQL schema selected through the
 * URL's `search_path`. Undefined, with a warning, when PostgreSQL cannot be reached (the run skips that dialect).
 */
export async function benchDatabase(dialect: Dialect): Promise<BenchDatabase | undefined> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'bench-db-'));
    return { url: `sqlite:${join(dir, 'bench.db')}`, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: PG_URL });
  try {
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
  } catch (error) {
    console.warn(`*** PostgreSQL at ${PG_URL} is not reachable (${(error as Error).message}); skipping the PostgreSQL run ***`);
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
  const parsed = new URL(PG_URL);
  parsed.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: parsed.toString(),
    cleanup: async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}
