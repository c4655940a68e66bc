import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';

export type Dialect = 'sqlite' | 'postgres';

/** An open database: the Kysely instance, which dialect it speaks, and how to close it. */
export interface DatabaseHandle {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** Where it lives, without credentials (for logs). */
  readonly location: string;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** PostgreSQL only: the schema to work in (tests give each run its own); created when missing. */
  schema?: string;
  /** PostgreSQL only: pool size (default 10). */
  poolSize?: number;
}

export function dialectOf(url: string): Dialect {
  if (url.startsWith('sqlite:')) return 'sqlite';
  if (/^postgres(ql)?:\/\//.test(url)) return 'postgres';
  throw new Error(`unsupported DATABASE_URL scheme (expected sqlite: or postgres://)`);
}

/** The URL with any password removed, safe for logs. */
export function redactDatabaseUrl(url: string): string {
  if (dialectOf(url) === 'sqlite') return url;
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

const PG_INT8 = 20;

/**
 * Opens the database named by `url` (`sqlite:<path>`, `sqlite::memory:` or `postgres://…`). SQLite runs in WAL
 * mode with a busy timeout so a CLI command and a running server can share the file.
 */
export async function openDatabase(url: string, options: OpenDatabaseOptions = {}): Promise<DatabaseHandle> {
  const dialect = dialectOf(url);
  if (dialect === 'sqlite') {
    const path = url.slice('sqlite:'.length);
    const memory = path === ':memory:';
    if (!memory) mkdirSync(dirname(resolve(path)), { recursive: true });
    const connection = new SQLite(memory ? ':memory:' : path);
    connection.pragma('journal_mode = WAL');
    connection.pragma('busy_timeout = 5000');
    connection.pragma('foreign_keys = ON');
    connection.pragma('synchronous = NORMAL');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
    return { db, dialect, location: url, close: () => db.destroy() };
  }

  const schema = options.schema;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
  if (schema !== undefined) {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    } finally {
      await admin.end();
    }
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
    // Our bigint columns hold epoch milliseconds and counters well inside 2^53; read them as numbers.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === PG_INT8 ? (value: string) => Number(value) : (pg.types.getTypeParser(oid, format) as unknown)) as typeof pg.types.getTypeParser,
    },
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect, location: redactDatabaseUrl(url), close: () => db.destroy() };
}

/** True when the database answers a trivial query; used by `/readyz`. */
export async function isDatabaseReachable(handle: DatabaseHandle): Promise<boolean> {
  try {
    await sql`select 1`.execute(handle.db);
    return true;
  } catch {
    return false;
  }
}
