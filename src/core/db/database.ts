import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql, type SqliteDatabase } from 'kysely';
import { LRUCache } from 'lru-cache';
import pg from 'pg';
import type { CoreTables } from './schema.ts';

export type Dialect = 'sqlite' | 'postgres';

/**
 * An open database: the Kysely instance, which dialect it speaks, and how to close it. `DB` is the tables its
 * holder sees: core's own by default; the application opens it with every service's (src/app/database.ts).
 */
export interface DatabaseHandle<DB = CoreTables> {
  readonly db: Kysely<DB>;
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
  /** PostgreSQL only: told about connections the server dropped (restart, failover, idle timeout). */
  onConnectionError?: (error: Error) => void;
}

export function dialectOf(url: string): Dialect {
  if (url.startsWith('sqlite:')) return 'sqlite';
  if (/^postgres(ql)?:\/\//.test(url)) return 'postgres';
  throw new Error(`unsupported DATABASE_URL scheme (expected sqlite: or postgres://)`);
}

const SECRET_PARAMS = /^(password|sslpassword|sslkey|passfile)$/i;

/** The URL with every password removed (user info and query parameters alike), safe for logs and errors. */
export function redactDatabaseUrl(url: string): string {
  if (url.startsWith('sqlite:')) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    for (const key of [...parsed.searchParams.keys()]) if (SECRET_PARAMS.test(key)) parsed.searchParams.set(key, '***');
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

const STATEMENT_CACHE_SIZE = 256;

/**
 * The connection as Kysely sees it, with prepared statements kept by SQL text. Kysely's SQLite driver prepares
 * every query anew, and compiling a statement costs about as much as running a small indexed one: on the hot reads
 * (credential lookup, catalog state) that was half the database time. Reuse is safe because better-sqlite3 runs
 * one statement at a time on this single connection (Kysely holds it under a mutex) and re-prepares a statement
 * itself when the schema changes. Bounded, because some statements (IN lists) vary in text.
 */
function withStatementCache(connection: SQLite.Database): SqliteDatabase {
  const statements = new LRUCache<string, SQLite.Statement>({ max: STATEMENT_CACHE_SIZE });
  return {
    close: () => connection.close(),
    prepare(text: string) {
      let statement = statements.get(text);
      if (!statement) {
        statement = connection.prepare(text);
        statements.set(text, statement);
      }
      return statement;
    },
  };
}

const PG_INT8 = 20;

/** SQL texts registered by `preparedOnPostgres`, with the statement name each is prepared under. */
const preparedNames = new Map<string, string>();

/**
 * Marks a hot statement to be sent as a named prepared statement on PostgreSQL and returns its text unchanged; the
 * stores call it once per text, at load. An unnamed statement is parsed and planned on every execution: for the
 * catalog state read (a three-way union) that was more than half of its 0.35 ms round trip, against 0.16 ms
 * prepared (bench/model-probe.bench.ts). Each pooled connection prepares a text on first use and keeps it while the
 * connection lives; the name is derived from the text, so the same name never means two statements. Only texts with
 * explicit column lists belong here: a prepared `select *` fails once a migration changes the table's columns.
 * (A transaction-mode connection pooler in front of PostgreSQL must support named statements, as PgBouncer 1.21+
 * does with `max_prepared_statements`.)
 */
export function preparedOnPostgres(text: string): string {
  if (!preparedNames.has(text)) preparedNames.set(text, `p_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`);
  return text;
}

/**
 * The pool's connection class: Kysely sends `query(text, values)`; a registered text goes out under its name instead,
 * so PostgreSQL parses and plans it once per connection.
 */
class PreparingClient extends pg.Client {
  // pg's `query` has a dozen overloads; this forwards every call unchanged except the one shape Kysely uses.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
  override query(...received: any[]): any {
    const args: unknown[] = received;
    const [text, values] = args;
    const name = typeof text === 'string' && args.length === 2 && Array.isArray(values) ? preparedNames.get(text) : undefined;
    if (name === undefined) return (super.query as (...forwarded: unknown[]) => unknown)(...args);
    return super.query({ name, text: text as string, values: values as unknown[] });
  }
}
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Opens the database named by `url` (`sqlite:<path>`, `sqlite::memory:` or `postgres://…`). SQLite runs in WAL
 * mode with a busy timeout so a CLI command and a running server can share the file.
 */
export async function openDatabase<DB = CoreTables>(url: string, options: OpenDatabaseOptions = {}): Promise<DatabaseHandle<DB>> {
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
    const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(connection) }) });
    return { db, dialect, location: url, close: () => db.destroy() };
  }

  const schema = options.schema;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
  if (schema !== undefined) {
    const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    } finally {
      await admin.end();
    }
  }
  const pool = new pg.Pool({
    Client: PreparingClient,
    connectionString: url,
    max: options.poolSize ?? 10,
    // A silent network must not hang start-up or /readyz forever.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
    // Our bigint columns hold epoch milliseconds and counters well inside 2^53; read them as numbers.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === PG_INT8
          ? (value: string) => Number(value)
          : (pg.types.getTypeParser(oid, format) as unknown)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client the server dropped emits 'error' on the pool; unhandled, that would end the process. The pool
  // discards the client and opens a new one for the next query.
  pool.on('error', (error) => options.onConnectionError?.(error));
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect, location: redactDatabaseUrl(url), close: () => db.destroy() };
}

/**
 * The same connection typed with only the tables `Sub` names, for a service whose stores see their own tables.
 * Kysely's database type is invariant (it appears in transaction callbacks), so a connection typed with every
 * table is not assignable to `Kysely<AdminTables>`; narrowing is sound because a query written against some of the
 * tables runs unchanged on a database that has more. `Full extends Sub` keeps it from inventing tables; `Sub` is
 * inferred from where the result goes.
 */
export function narrowTables<Full extends Sub, Sub>(db: Kysely<Full>): Kysely<Sub> {
  return db as unknown as Kysely<Sub>;
}

/** True when the database answers a trivial query; used by `/readyz`. */
export async function isDatabaseReachable<DB>(handle: DatabaseHandle<DB>): Promise<boolean> {
  try {
    await sql`select 1`.execute(handle.db);
    return true;
  } catch {
    return false;
  }
}
