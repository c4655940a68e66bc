// SQL reads of the OSV corpus (osv.table.ts) for the index loader, the service and the answer pass; the importer's
// writes are in osv.batch-writer.ts. Every function takes the executor first, so callers own their transactions;
// multi-row statements are cut into chunks that stay under both dialects' parameter limits.
import { CompiledQuery, SqliteAdapter, sql, type Kysely, type Transaction } from 'kysely';
import type { OsvTables } from './osv.table.ts';
import type { IndexRowData, RowKind } from './osv.rows.ts';
import type { OsvAffectedRow } from './osv.table.ts';

// A transaction is a Kysely instance too, so one type takes both.
type Db = Kysely<OsvTables>;

/** Rows per multi-row statement: ≤ 8 columns × 500 = 4000 parameters (SQLite allows 32766, PostgreSQL 65535). */
const CHUNK = 500;

/** `items` cut into statements' worth of rows. */
export function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The current corpus generation (0 before any import). */
export async function readGeneration(db: Db): Promise<number> {
  const row = await db.selectFrom('osv_corpus').select('generation').where('id', '=', 1).executeTakeFirst();
  return Number(row?.generation ?? 0);
}

/** A record as the index loader sees it. */
export interface RecordHead {
  id: string;
  modified: string;
  withdrawn: number;
}

/** One page of records in id order after `after` ('' for the first page). */
export async function readRecordHeads(db: Db, after: string, limit: number): Promise<RecordHead[]> {
  return db.selectFrom('osv_records').select(['id', 'modified', 'withdrawn']).where('id', '>', after).orderBy('id').limit(limit).execute();
}

/** Ids of the records written by a generation later than `since` (through the generation index). */
export async function changedRecordIds(db: Db, since: number): Promise<string[]> {
  const rows = await db.selectFrom('osv_records').select('id').where('generation', '>', since).execute();
  return rows.map((r) => r.id);
}

/** Heads of the given records. */
export async function readRecordHeadsOf(db: Db, ids: readonly string[]): Promise<RecordHead[]> {
  const out: RecordHead[] = [];
  for (const part of chunks(ids))
    out.push(...(await db.selectFrom('osv_records').select(['id', 'modified', 'withdrawn']).where('id', 'in', part).execute()));
  return out;
}

/** Index rows of every record with `first <= id <= last`, in id and seq order. */
export async function readIndexRowsBetween(db: Db, first: string, last: string): Promise<OsvAffectedRow[]> {
  return db
    .selectFrom('osv_affected')
    .selectAll()
    .where('vuln_id', '>=', first)
    .where('vuln_id', '<=', last)
    .orderBy('vuln_id')
    .orderBy('seq')
    .execute();
}

/** Index rows of the given records, in id and seq order. */
export async function readIndexRowsOf(db: Db, ids: readonly string[]): Promise<OsvAffectedRow[]> {
  const out: OsvAffectedRow[] = [];
  for (const part of chunks(ids)) {
    out.push(...(await db.selectFrom('osv_affected').selectAll().where('vuln_id', 'in', part).orderBy('vuln_id').orderBy('seq').execute()));
  }
  return out;
}

/** A stored index row back in the shape `computeIndexRows` produced. */
export function indexRowFromStored(row: OsvAffectedRow): IndexRowData {
  const out: IndexRowData = {
    seq: Number(row.seq),
    kind: row.kind as RowKind,
    ecosystem: row.ecosystem,
    name: row.name,
    coarseMin: row.coarse_min,
    coarseMax: row.coarse_max,
  };
  if (row.data !== null) {
    if (row.kind === 'R') {
      const d = JSON.parse(row.data) as { t: string; v: string[] };
      out.types = d.t;
      out.values = d.v;
    } else if (row.kind === 'V') {
      out.versions = JSON.parse(row.data) as string[];
    }
  }
  return out;
}

/** A stored record's JSON text and whether it is withdrawn. */
export async function findRecord(db: Db, id: string): Promise<{ json: string; withdrawn: boolean } | undefined> {
  const row = await db.selectFrom('osv_records').select(['record', 'withdrawn']).where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : { json: row.record, withdrawn: row.withdrawn === 1 };
}

/**
 * A live record as an answer is built from: its stored answer in the form asked for (canonical JSON text or
 * protobuf bytes, osv.answer.ts), or, while it has none yet, the record text as imported (`pending`: converted per
 * call).
 */
export type StoredAnswer =
  | { pending: false; json: string | Buffer; wire?: undefined; size: number }
  | { pending: false; json?: undefined; wire: Buffer; size: number }
  | { pending: true; json: string; wire?: undefined; size: number };

/** Id-list sizes the answer lookup is compiled for: a list is padded to the next one (at most CHUNK). */
const ANSWER_LIST_SIZES = [1, 4, 16, 64, 128, 256, CHUNK];

type AnswerRow = { id: string; answer_size: number | null; answer: Buffer | string | null; record: string | null };

/**
 * The answer lookup for `size` ids in one form, compiled once per database: it runs on every `Query`, and building
 * and compiling the statement anew each time allocated more than the rest of the lookup (padding the id list to a
 * few sizes also keeps the prepared statements few). Padding ids are '' (no record has an empty id).
 */
const answerStatements = new WeakMap<Db, Map<string, string>>();
function answerSql(db: Db, form: 'json' | 'wire', size: number): string {
  let byKey = answerStatements.get(db);
  if (byKey === undefined) {
    byKey = new Map();
    answerStatements.set(db, byKey);
  }
  const key = `${form}:${size}`;
  let text = byKey.get(key);
  if (text === undefined) {
    // SQLite hands the JSON text over as bytes when asked (no UTF-8 decoding into a string, then encoding back for
    // the socket); PostgreSQL would send bytea as hex text, so there the text stays text.
    const column =
      form === 'wire'
        ? sql`answer_wire`
        : db.getExecutor().adapter instanceof SqliteAdapter
          ? sql`cast(answer_json as blob)`
          : sql`answer_json`;
    const missing = form === 'wire' ? sql`answer_wire is null` : sql`answer_json is null`;
    text = db
      .selectFrom('osv_records')
      .select([
        'id',
        'answer_size',
        sql<Buffer | string | null>`${column}`.as('answer'),
        sql<string | null>`case when ${missing} or answer_size is null then record end`.as('record'),
      ])
      .where(
        'id',
        'in',
        Array.from({ length: size }, () => ''),
      )
      // A literal, so the statement's parameters are exactly the ids.
      .where('withdrawn', '=', sql.lit(0))
      .compile().sql;
    byKey.set(key, text);
  }
  return text;
}

/** The answers of several live records in one form (withdrawn and unknown ids are left out). */
export async function findLiveAnswers(db: Db, ids: readonly string[], form: 'json' | 'wire'): Promise<Map<string, StoredAnswer>> {
  const out = new Map<string, StoredAnswer>();
  for (const part of chunks(ids)) {
    const size = ANSWER_LIST_SIZES.find((n) => n >= part.length) ?? CHUNK;
    const parameters: unknown[] = part.slice();
    while (parameters.length < size) parameters.push('');
    const { rows } = await db.executeQuery<AnswerRow>(CompiledQuery.raw(answerSql(db, form, size), parameters));
    for (const row of rows) {
      if (row.answer === null || row.answer_size === null) out.set(row.id, pendingAnswer(row.record));
      else if (form === 'wire') out.set(row.id, { pending: false, wire: row.answer as Buffer, size: row.answer_size });
      else out.set(row.id, { pending: false, json: row.answer, size: row.answer_size });
    }
  }
  return out;
}

function pendingAnswer(record: string | null): StoredAnswer {
  const json = record ?? '{}';
  return { pending: true, json, size: Buffer.byteLength(json) };
}

/** Live records without stored answers, in id order after `after` (the encoding pass, osv.answer.ts). */
export async function recordsWithoutAnswers(
  db: Db,
  after: string,
  limit: number,
): Promise<{ id: string; modified_key: string; record: string }[]> {
  return (
    db
      .selectFrom('osv_records')
      .select(['id', 'modified_key', 'record'])
      // Literal, as the partial index osv_records_unanswered_idx states it: a bound parameter would not let SQLite see
      // that the index covers the query.
      .where(sql<boolean>`answer_wire is null and withdrawn = 0`)
      .where('id', '>', after)
      .orderBy('id')
      .limit(limit)
      .execute()
  );
}

/**
 * Stores the answers of records, each only if the row still holds the copy they were computed from (same
 * `modified_key`, no answers yet): an import that replaced it meanwhile cleared them, and its copy gets its own.
 * The statement is built and compiled once per call and run per record with that record's values: building it
 * anew for each record cost more than running it (a third of the pass's time besides encoding).
 */
export async function storeAnswers(
  trx: Transaction<OsvTables>,
  answers: readonly { id: string; modifiedKey: string; json: string; wire: Uint8Array }[],
): Promise<number> {
  if (answers.length === 0) return 0;
  // The parameters in the compiled order: the three set values, then id and modified_key (the null test is literal).
  const text = trx
    .updateTable('osv_records')
    .set({ answer_json: '', answer_wire: Buffer.alloc(0), answer_size: 0 })
    .where('id', '=', '')
    .where('modified_key', '=', '')
    .where('answer_wire', 'is', null)
    .compile().sql;
  let stored = 0;
  for (const a of answers) {
    const wire = Buffer.from(a.wire.buffer, a.wire.byteOffset, a.wire.byteLength);
    const result = await trx.executeQuery(CompiledQuery.raw(text, [a.json, wire, Buffer.byteLength(a.json), a.id, a.modifiedKey]));
    stored += Number(result.numAffectedRows ?? 0n);
  }
  return stored;
}

/** Alias edges touching any of `ids`: records listing one of them as alias, and the aliases of those records. */
export async function aliasEdges(db: Db, ids: readonly string[]): Promise<{ alias: string; vuln_id: string }[]> {
  const out: { alias: string; vuln_id: string }[] = [];
  for (const part of chunks(ids, 250)) {
    out.push(
      ...(await db
        .selectFrom('osv_aliases')
        .select(['alias', 'vuln_id'])
        .where((eb) => eb.or([eb('alias', 'in', part), eb('vuln_id', 'in', part)]))
        .execute()),
    );
  }
  return out;
}

/** Counts for `platform osv status` and tests. */
export async function corpusCounts(db: Db): Promise<{ records: number; withdrawn: number; rows: number; generation: number }> {
  const r = await db
    .selectFrom('osv_records')
    .select([sql<number>`count(*)`.as('n'), sql<number>`coalesce(sum(withdrawn), 0)`.as('w')])
    .executeTakeFirstOrThrow();
  const a = await db
    .selectFrom('osv_affected')
    .select(sql<number>`count(*)`.as('n'))
    .executeTakeFirstOrThrow();
  return { records: Number(r.n), withdrawn: Number(r.w), rows: Number(a.n), generation: await readGeneration(db) };
}
