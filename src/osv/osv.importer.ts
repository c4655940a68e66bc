// Corpus import (docs/osv.md, "Import"): validate each record, compute its index rows, and write records, rows and
// aliases in batches, one transaction each. A batch is all or nothing, so an interrupted import leaves whole
// records only; upserts keep the copy with the newer `modified`, so running the same import again changes nothing.
import type { Kysely } from 'kysely';
import type { Clock } from '../core/clock.ts';
import type { DatabaseHandle } from '../core/db/database.ts';
import type { OsvTables } from './osv.table.ts';
import { computeIndexRows, type IndexRowData } from './osv.rows.ts';
import { timestampKey, validateOsvRecord, type OsvRecord } from './osv.schema.ts';
import type { RawRecord } from './osv.sources.ts';
import { batchWriterFor, type RecordWrite } from './osv.batch-writer.ts';

/** A record that was not imported, and why. */
export interface RejectedRecord {
  source: string;
  id: string | undefined;
  reason: string;
}

export interface ImportReport {
  /** Records read from the sources (valid or not). */
  read: number;
  /** New ids stored. */
  inserted: number;
  /** Stored ids replaced by a newer `modified`. */
  updated: number;
  /** Same id and `modified` as stored: left alone. */
  unchanged: number;
  /** Older than the stored copy (or than another copy in the same import): left alone. */
  older: number;
  /** Withdrawn records among the inserted and updated ones (stored, but without index rows). */
  withdrawn: number;
  /** Number of records rejected; `rejected` lists the first `maxRejectedListed`. */
  invalid: number;
  rejected: RejectedRecord[];
  batches: number;
  /** True when the signal stopped the import; every finished batch is stored. */
  interrupted: boolean;
  ms: number;
}

export interface ImportProgress {
  read: number;
  written: number;
  invalid: number;
  elapsedMs: number;
}

export interface ImportOptions {
  /** Records per transaction (default 1000). */
  batchSize?: number;
  /** Stops after the batch being written; the report says `interrupted`. */
  signal?: AbortSignal;
  onProgress?: (progress: ImportProgress) => void;
  /** Called for every rejected record as it is found. */
  onRejected?: (rejected: RejectedRecord) => void;
  /** How many rejected records the report lists (default 1000; all are counted). */
  maxRejectedListed?: number;
  clock?: Clock;
}

interface Prepared {
  write: RecordWrite;
  rows: IndexRowData[];
  aliases: string[];
}

/** Validates and prepares one record (`text`: its JSON as read, when compact); otherwise why it is rejected. */
function prepare(value: unknown, text: string | undefined): Prepared | { id: string | undefined; reason: string } {
  const result = validateOsvRecord(value);
  if (!result.ok) return { id: result.id, reason: result.reason };
  const record: OsvRecord = result.record;
  let rows: IndexRowData[];
  try {
    rows = computeIndexRows(record);
  } catch (error) {
    return { id: record.id, reason: `cannot index: ${error instanceof Error ? error.message : String(error)}` };
  }
  return {
    write: {
      id: record.id,
      modified: record.modified,
      modifiedKey: timestampKey(record.modified),
      withdrawn: record.withdrawn !== undefined,
      json: text ?? JSON.stringify(record),
    },
    rows,
    aliases: [...new Set((record.aliases ?? []).filter((a) => a !== '' && a !== record.id))],
  };
}

/**
 * Imports records into the corpus. Each batch runs in one transaction that first raises the corpus generation
 * (replicas see the change on their next poll), then upserts the records and replaces the index rows and aliases
 * of those it wrote. Give the DatabaseHandle (not only its Kysely instance) so a SQLite file gets the fast writer.
 */
export async function importRecords<DB extends OsvTables>(
  database: DatabaseHandle<DB> | Kysely<DB>,
  records: AsyncIterable<RawRecord | RawRecord[]> | Iterable<RawRecord | RawRecord[]>,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const clock = options.clock ?? { now: () => Date.now() };
  const batchSize = options.batchSize ?? 1000;
  const maxListed = options.maxRejectedListed ?? 1000;
  const started = clock.now();
  const report: ImportReport = {
    read: 0,
    inserted: 0,
    updated: 0,
    unchanged: 0,
    older: 0,
    withdrawn: 0,
    invalid: 0,
    rejected: [],
    batches: 0,
    interrupted: false,
    ms: 0,
  };
  let written = 0;

  const reject = (r: RejectedRecord) => {
    report.invalid++;
    if (report.rejected.length < maxListed) report.rejected.push(r);
    options.onRejected?.(r);
  };
  const progress = () => options.onProgress?.({ read: report.read, written, invalid: report.invalid, elapsedMs: clock.now() - started });

  const writer = batchWriterFor(database);

  async function writeBatch(batch: Map<string, Prepared>): Promise<void> {
    const items = [...batch.values()];
    const { stored, written: done } = await writer.write(items, clock.now());
    // Counted once the transaction committed, so a failed batch reports nothing.
    for (const p of items) {
      const before = stored.get(p.write.id);
      if (done.has(p.write.id)) {
        if (before === undefined) report.inserted++;
        else report.updated++;
        if (p.write.withdrawn) report.withdrawn++;
      } else if (before === p.write.modifiedKey) report.unchanged++;
      else report.older++;
    }
    written += items.length;
    report.batches++;
    progress();
  }

  let batch = new Map<string, Prepared>();
  const add = async (raw: RawRecord): Promise<void> => {
    report.read++;
    if ('error' in raw) {
      reject({ source: raw.source, id: undefined, reason: raw.error });
      return;
    }
    const prepared = prepare(raw.value, raw.text);
    if (!('write' in prepared)) {
      reject({ source: raw.source, id: prepared.id, reason: prepared.reason });
      return;
    }
    const id = prepared.write.id;
    const same = batch.get(id);
    if (same !== undefined) {
      // Two copies of one id in a batch: keep the newer (the first of equal ones), count the other as older.
      if (prepared.write.modifiedKey > same.write.modifiedKey) batch.set(id, prepared);
      report.older++;
      return;
    }
    batch.set(id, prepared);
    if (batch.size >= batchSize) {
      await writeBatch(batch);
      batch = new Map();
    }
    if (report.read % 1000 === 0) progress();
  };

  try {
    reading: for await (const chunk of records) {
      for (const raw of Array.isArray(chunk) ? chunk : [chunk]) {
        if (options.signal?.aborted) {
          report.interrupted = true;
          break reading;
        }
        await add(raw);
      }
    }
    // What was read before an interruption is still written: it is a whole batch of whole records.
    if (batch.size > 0) await writeBatch(batch);
  } finally {
    await writer.close();
  }
  report.ms = clock.now() - started;
  progress();
  return report;
}
