// Batch writers for the importer (osv.importer.ts): one transaction per batch that raises the generation, upserts
// the records and replaces the index rows and aliases of those written; each dialect gets its fastest writer.
import SQLite from 'better-sqlite3';
import { sql, type Kysely, type Transaction } from 'kysely';
import { narrowTables, type DatabaseHandle } from '../core/db/database.ts';
import type { OsvTables } from './osv.table.ts';
import type { StoredIndexRow } from './osv.rows.ts';
import { chunks } from './osv.store.ts';

// A transaction is a Kysely instance too, so one type takes both.
type Db = Kysely<OsvTables>;

/**
 * Raises the corpus generation and returns the new value. Called first in every import transaction: it takes
 * the row lock (PostgreSQL) or the write lock (SQLite) at once, so concurrent importers commit in generation order.
 */
async function nextGeneration(trx: Transaction<OsvTables>, now: number): Promise<number> {
  const row = await trx
    .updateTable('osv_corpus')
    .set((eb) => ({ generation: eb('generation', '+', 1), updated_at: now }))
    .where('id', '=', 1)
    .returning('generation')
    .executeTakeFirstOrThrow();
  return Number(row.generation);
}

/** Code-unit order: near enough to the database's byte order to keep consecutive inserts on neighbouring pages. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A record row to write. */
export interface RecordWrite {
  id: string;
  modified: string;
  modifiedKey: string;
  withdrawn: boolean;
  json: string;
}

/**
 * Inserts records or replaces stored ones whose `modified` is older (osv-facts.md: the newer copy wins; an equal
 * one is left alone, so re-running an import changes nothing). Returns the ids actually written.
 */
async function upsertRecords(
  trx: Transaction<OsvTables>,
  records: readonly RecordWrite[],
  generation: number,
  now: number,
): Promise<Set<string>> {
  const written = new Set<string>();
  for (const part of chunks(records)) {
    const rows = await trx
      .insertInto('osv_records')
      .values(
        part.map((r) => ({
          id: r.id,
          modified: r.modified,
          modified_key: r.modifiedKey,
          withdrawn: r.withdrawn ? 1 : 0,
          record: r.json,
          imported_at: now,
          generation,
        })),
      )
      .onConflict((oc) =>
        oc
          .column('id')
          .doUpdateSet((eb) => ({
            modified: eb.ref('excluded.modified'),
            modified_key: eb.ref('excluded.modified_key'),
            withdrawn: eb.ref('excluded.withdrawn'),
            record: eb.ref('excluded.record'),
            // The answers were computed from the copy being replaced (osv.answer.ts computes the new ones).
            answer_json: null,
            answer_wire: null,
            answer_size: null,
            imported_at: eb.ref('excluded.imported_at'),
            generation: eb.ref('excluded.generation'),
          }))
          .where('osv_records.modified_key', '<', (eb) => eb.ref('excluded.modified_key')),
      )
      .returning('id')
      .execute();
    for (const row of rows) written.add(row.id);
  }
  return written;
}

/** Stored `modified_key` of the given ids (to tell "older than stored" from "unchanged" in import reports). */
async function storedModifiedKeys(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const part of chunks(ids)) {
    const rows = await db.selectFrom('osv_records').select(['id', 'modified_key']).where('id', 'in', part).execute();
    for (const row of rows) out.set(row.id, row.modified_key);
  }
  return out;
}

/** Replaces the index rows of `ids` with `rows` (withdrawn records get none). */
async function replaceIndexRows(
  trx: Transaction<OsvTables>,
  ids: readonly string[],
  rows: readonly { vulnId: string; row: StoredIndexRow }[],
): Promise<void> {
  for (const part of chunks(ids)) await trx.deleteFrom('osv_affected').where('vuln_id', 'in', part).execute();
  for (const part of chunks(rows)) {
    await trx
      .insertInto('osv_affected')
      .values(
        part.map(({ vulnId, row }) => ({
          vuln_id: vulnId,
          seq: row.seq,
          kind: row.kind,
          ecosystem: row.ecosystem,
          name: row.name,
          coarse_min: row.coarseMin,
          coarse_max: row.coarseMax,
          data: row.data,
        })),
      )
      .execute();
  }
}

/** Replaces the aliases of `ids`. */
async function replaceAliases(
  trx: Transaction<OsvTables>,
  ids: readonly string[],
  aliases: readonly { vulnId: string; alias: string }[],
): Promise<void> {
  for (const part of chunks(ids)) await trx.deleteFrom('osv_aliases').where('vuln_id', 'in', part).execute();
  for (const part of chunks(aliases)) {
    await trx
      .insertInto('osv_aliases')
      .values(part.map((a) => ({ alias: a.alias, vuln_id: a.vulnId })))
      .onConflict((oc) => oc.columns(['alias', 'vuln_id']).doNothing())
      .execute();
  }
}

/** One record of an import batch with what goes beside it. */
interface BatchItem {
  write: RecordWrite;
  rows: readonly StoredIndexRow[];
  aliases: readonly string[];
}

/** What a committed batch did: the stored `modified_key` of ids seen before, and the ids written. */
interface BatchOutcome {
  stored: Map<string, string>;
  written: Set<string>;
}

export interface BatchWriter {
  write(items: readonly BatchItem[], now: number): Promise<BatchOutcome>;
  close(): Promise<void>;
}

/** The portable writer: multi-row statements through Kysely (PostgreSQL, in-memory SQLite). */
function kyselyBatchWriter(db: Kysely<OsvTables>): BatchWriter {
  return {
    async write(items, now) {
      return db.transaction().execute(async (trx) => {
        const generation = await nextGeneration(trx, now);
        const stored = await storedModifiedKeys(
          trx,
          items.map((p) => p.write.id),
        );
        const written = await upsertRecords(
          trx,
          items.map((p) => p.write),
          generation,
          now,
        );
        const ids = items.filter((p) => written.has(p.write.id));
        await replaceIndexRows(
          trx,
          ids.map((p) => p.write.id),
          ids.flatMap((p) => p.rows.map((row) => ({ vulnId: p.write.id, row }))),
        );
        await replaceAliases(
          trx,
          ids.map((p) => p.write.id),
          ids.flatMap((p) => p.aliases.map((alias) => ({ vulnId: p.write.id, alias }))),
        );
        return { stored, written };
      });
    },
    async close() {},
  };
}

/**
 * The secondary indexes of the corpus tables (as the migrations create them; the same text on both dialects), which a
 * bulk load into an empty corpus builds once at its end instead of updating per row: each batch would otherwise dirty thousands of randomly placed
 * index pages, all written to the WAL again at every commit. `test/osv/osv.import.test.ts` holds these texts to
 * the migrations' own.
 */
export const DEFERRED_INDEXES: readonly { name: string; sql: string }[] = [
  { name: 'osv_records_generation_idx', sql: 'CREATE INDEX "osv_records_generation_idx" on "osv_records" ("generation")' },
  {
    name: 'osv_records_unanswered_idx',
    sql: 'CREATE INDEX "osv_records_unanswered_idx" on "osv_records" ("id") where "answer_wire" is null and "withdrawn" = 0',
  },
  { name: 'osv_aliases_vuln_idx', sql: 'CREATE INDEX "osv_aliases_vuln_idx" on "osv_aliases" ("vuln_id")' },
];

/** `CREATE INDEX …` as `CREATE INDEX IF NOT EXISTS …` (both dialects take it). */
function createIfMissing(text: string): string {
  return text.replace(/^CREATE INDEX /u, 'CREATE INDEX IF NOT EXISTS ');
}

/** Creates the deferred indexes that are missing (after a bulk load, or one that was killed before its end). */
function ensureDeferredIndexes(connection: SQLite.Database): void {
  const present = new Set(
    (connection.prepare("select name from sqlite_master where type = 'index'").all() as { name: string }[]).map((r) => r.name),
  );
  for (const index of DEFERRED_INDEXES) if (!present.has(index.name)) connection.exec(index.sql);
}

/**
 * The SQLite writer: the same statements, prepared once on a connection of its own and run row by row inside one
 * transaction, which better-sqlite3 does several times faster than large multi-row statements (the import target
 * is 10,000 records/s). A second connection to the file is safe in WAL mode; the busy timeout covers a server
 * reading meanwhile.
 *
 * Bulk load: when the corpus is empty at the start, the secondary indexes are dropped and built once when the
 * writer closes (an interrupted run's next import, or any later one, builds them first). Durability: batches
 * commit with `synchronous = NORMAL` (the WAL is synced at checkpoints only), and `close` commits its last
 * transaction with `synchronous = FULL`, which syncs the whole WAL: once the import reports, every batch survives
 * a power loss. A crash before that loses at most the batches since the last checkpoint, each whole or not at all.
 */
function sqliteBatchWriter(path: string): BatchWriter {
  const connection = new SQLite(path);
  connection.pragma('journal_mode = WAL');
  connection.pragma('busy_timeout = 5000');
  connection.pragma('synchronous = NORMAL');
  // Bulk writing: a larger page cache, and checkpoints every ~40 MB of WAL instead of every 4 MB (fewer fsyncs).
  connection.pragma('cache_size = -131072');
  connection.pragma('wal_autocheckpoint = 10000');
  const bulk = connection
    .transaction(() => {
      if (connection.prepare('select 1 from osv_records limit 1').get() !== undefined) {
        ensureDeferredIndexes(connection);
        return false;
      }
      for (const index of DEFERRED_INDEXES) connection.exec(`drop index if exists "${index.name}"`);
      return true;
    })
    .immediate();
  const bump = connection.prepare<[number]>(
    'update osv_corpus set generation = generation + 1, updated_at = ? where id = 1 returning generation',
  );
  const touch = connection.prepare('update osv_corpus set updated_at = updated_at where id = 1');
  const find = connection.prepare<[string]>('select modified_key from osv_records where id = ?');
  const upsert = connection.prepare<[string, string, string, number, string, number, number]>(
    `insert into osv_records (id, modified, modified_key, withdrawn, record, imported_at, generation) values (?, ?, ?, ?, ?, ?, ?)
     on conflict (id) do update set modified = excluded.modified, modified_key = excluded.modified_key, withdrawn = excluded.withdrawn,
       record = excluded.record, answer_json = null, answer_wire = null, answer_size = null, imported_at = excluded.imported_at, generation = excluded.generation
     where osv_records.modified_key < excluded.modified_key returning id`,
  );
  const dropRows = connection.prepare<[string]>('delete from osv_affected where vuln_id = ?');
  const addRow = connection.prepare<[string, number, string, string, string, string | null, string | null, string | null]>(
    'insert into osv_affected (vuln_id, seq, kind, ecosystem, name, coarse_min, coarse_max, data) values (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const dropAliases = connection.prepare<[string]>('delete from osv_aliases where vuln_id = ?');
  const addAlias = connection.prepare<[string, string]>('insert into osv_aliases (alias, vuln_id) values (?, ?) on conflict do nothing');
  // `immediate` takes the write lock at BEGIN, as nextGeneration does on the portable path.
  const batch = connection.transaction((items: readonly BatchItem[], now: number): BatchOutcome => {
    const generation = Number((bump.get(now) as { generation: number }).generation);
    const stored = new Map<string, string>();
    const written = new Set<string>();
    const aliases: [string, string][] = [];
    // In key order, so that consecutive inserts descend the same index pages (ids of a batch are distinct).
    for (const item of [...items].sort((a, b) => compareText(a.write.id, b.write.id))) {
      const w = item.write;
      const before = find.get(w.id) as { modified_key: string } | undefined;
      if (before !== undefined) stored.set(w.id, before.modified_key);
      if (upsert.get(w.id, w.modified, w.modifiedKey, w.withdrawn ? 1 : 0, w.json, now, generation) === undefined) continue;
      written.add(w.id);
      if (before !== undefined) {
        dropRows.run(w.id);
        dropAliases.run(w.id);
      }
      for (const row of item.rows) addRow.run(w.id, row.seq, row.kind, row.ecosystem, row.name, row.coarseMin, row.coarseMax, row.data);
      for (const alias of item.aliases) aliases.push([alias, w.id]);
    }
    aliases.sort((a, b) => compareText(a[0], b[0]) || compareText(a[1], b[1]));
    for (const [alias, id] of aliases) addAlias.run(alias, id);
    return { stored, written };
  });
  return {
    async write(items, now) {
      return batch.immediate(items, now);
    },
    async close() {
      try {
        connection.pragma('synchronous = FULL');
        // The indexes of a bulk load, or else a write that changes nothing: either way a commit that syncs the WAL.
        connection.transaction(() => (bulk ? ensureDeferredIndexes(connection) : touch.run())).immediate();
      } finally {
        connection.close();
      }
    },
  };
}

/**
 * JSON texts joined by U+001E for `string_to_array(…, chr(30))` on PostgreSQL: one text parameter sent as it is. As
 * an array parameter, node-postgres escapes every quote of every record into an array literal, which took more of
 * the importer's CPU than everything else it does for a record and made most of its garbage. A JSON text holds no
 * raw control character, so the separator cannot occur inside one; '' stands for null (no JSON text is empty).
 */
function joinedTexts(texts: readonly string[]): string {
  return texts.join('\u001e');
}

/**
 * The PostgreSQL writer: each statement takes its rows as arrays and `unnest`s them, so a batch is six statements
 * whatever its size (multi-row VALUES lists cost a parse and plan per chunk and hit the parameter limit). The
 * large JSON texts (records, row data) travel as one joined text each (`joinedTexts`).
 */
function postgresBatchWriter(db: Kysely<OsvTables>): BatchWriter {
  // Bulk load as on SQLite: into an empty corpus, the secondary indexes are dropped before the first batch (in a
  // transaction of its own, so readers are not held on its lock) and built once at the end.
  let bulk: Promise<boolean> | undefined;
  const start = () =>
    (bulk ??= db.transaction().execute(async (trx) => {
      const filled = await sql`select 1 from osv_records limit 1`.execute(trx);
      if (filled.rows.length > 0) {
        for (const index of DEFERRED_INDEXES) await sql.raw(createIfMissing(index.sql)).execute(trx);
        return false;
      }
      for (const index of DEFERRED_INDEXES) await sql.raw(`drop index if exists "${index.name}"`).execute(trx);
      return true;
    }));
  return {
    async close() {
      if (bulk !== undefined && (await bulk)) {
        for (const index of DEFERRED_INDEXES) await sql.raw(createIfMissing(index.sql)).execute(db);
      }
    },
    async write(items, now) {
      await start();
      return db.transaction().execute(async (trx) => {
        const generation = await nextGeneration(trx, now);
        const ids = items.map((p) => p.write.id);
        const before = await sql<{
          id: string;
          modified_key: string;
        }>`select id, modified_key from osv_records where id = any(${ids}::text[])`.execute(trx);
        const stored = new Map(before.rows.map((r) => [r.id, r.modified_key]));
        const upserted = await sql<{ id: string }>`
          insert into osv_records (id, modified, modified_key, withdrawn, record, imported_at, generation)
          select id, modified, modified_key, withdrawn, record, ${now}::bigint, ${generation}::bigint
          from unnest(${ids}::text[], ${items.map((p) => p.write.modified)}::text[], ${items.map((p) => p.write.modifiedKey)}::text[],
                      ${items.map((p) => (p.write.withdrawn ? 1 : 0))}::int[], string_to_array(${joinedTexts(items.map((p) => p.write.json))}::text, chr(30)))
            as t(id, modified, modified_key, withdrawn, record)
          on conflict (id) do update set modified = excluded.modified, modified_key = excluded.modified_key, withdrawn = excluded.withdrawn,
            record = excluded.record, answer_json = null, answer_wire = null, answer_size = null, imported_at = excluded.imported_at, generation = excluded.generation
          where osv_records.modified_key < excluded.modified_key
          returning id`.execute(trx);
        const written = new Set(upserted.rows.map((r) => r.id));
        const done = items.filter((p) => written.has(p.write.id));
        const doneIds = done.map((p) => p.write.id);
        if (doneIds.length > 0) {
          await sql`delete from osv_affected where vuln_id = any(${doneIds}::text[])`.execute(trx);
          await sql`delete from osv_aliases where vuln_id = any(${doneIds}::text[])`.execute(trx);
          const rows = done.flatMap((p) => p.rows.map((row) => ({ id: p.write.id, row })));
          if (rows.length > 0) {
            await sql`
              insert into osv_affected (vuln_id, seq, kind, ecosystem, name, coarse_min, coarse_max, data)
              select vuln_id, seq, kind, ecosystem, name, coarse_min, coarse_max, nullif(data, '')
              from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.row.seq)}::int[], ${rows.map((r) => r.row.kind)}::text[],
                          ${rows.map((r) => r.row.ecosystem)}::text[], ${rows.map((r) => r.row.name)}::text[], ${rows.map((r) => r.row.coarseMin)}::text[],
                          ${rows.map((r) => r.row.coarseMax)}::text[], string_to_array(${joinedTexts(rows.map((r) => r.row.data ?? ''))}::text, chr(30)))
                as t(vuln_id, seq, kind, ecosystem, name, coarse_min, coarse_max, data)`.execute(trx);
          }
          const aliases = done.flatMap((p) => p.aliases.map((alias) => ({ alias, id: p.write.id })));
          if (aliases.length > 0) {
            await sql`
              insert into osv_aliases (alias, vuln_id)
              select * from unnest(${aliases.map((a) => a.alias)}::text[], ${aliases.map((a) => a.id)}::text[])
              on conflict do nothing`.execute(trx);
          }
        }
        return { stored, written };
      });
    },
  };
}

/**
 * The fastest writer for a database: SQLite files get their own prepared-statement connection, PostgreSQL the
 * array-based statements; a bare Kysely instance (or in-memory SQLite) the portable multi-row statements.
 */
export function batchWriterFor<DB extends OsvTables>(database: DatabaseHandle<DB> | Kysely<DB>): BatchWriter {
  if ('dialect' in database) {
    if (database.dialect === 'postgres') return postgresBatchWriter(narrowTables(database.db));
    const path = database.location.startsWith('sqlite:') ? database.location.slice('sqlite:'.length) : '';
    if (path !== ':memory:' && path !== '') return sqliteBatchWriter(path);
    return kyselyBatchWriter(narrowTables(database.db));
  }
  return kyselyBatchWriter(narrowTables(database));
}
