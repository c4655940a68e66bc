// Corpus import (docs/osv.md, "Import"): validate each record, compute its index rows, and write records, rows and
// aliases in batches, one transaction each. A batch is all or nothing, so an interrupted import leaves whole
// records only; upserts keep the copy with the newer `modified`, so running the same import again changes nothing.
import type { Kysely } from 'kysely';
import type { Clock } from '../core/clock.ts';
import type { DatabaseHandle } from '../core/db/database.ts';
import type { OsvTables } from './osv.table.ts';
import { readSources, type RawRecord, type SourceKind } from './osv.sources.ts';
import { batchWriterFor } from './osv.batch-writer.ts';
import { preparedOnThread } from './osv.import-thread.ts';
import { isRejected, prepareRecord, type PreparedOrRejected, type PreparedRecord, type RejectedRecord } from './osv.prepare.ts';

export type { RejectedRecord } from './osv.prepare.ts';

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

/**
 * Imports records into the corpus. Each batch runs in one transaction that first raises the corpus generation
 * (replicas see the change on their next poll), then upserts the records and replaces the index rows and aliases
 * of those it wrote. Give the DatabaseHandle (not only its Kysely instance) so a SQLite file gets the fast writer.
 * The records are prepared on this thread; {@link importFiles} prepares them on a thread of their own.
 */
export function importRecords<DB extends OsvTables>(
  database: DatabaseHandle<DB> | Kysely<DB>,
  records: AsyncIterable<RawRecord | RawRecord[]> | Iterable<RawRecord | RawRecord[]>,
  options: ImportOptions = {},
): Promise<ImportReport> {
  return importPrepared(database, preparedInLine(records), options);
}

/**
 * Below this many bytes of input an import prepares its records in line: starting the thread (loading the
 * TypeScript modules it runs, through tsx) takes about half a second, what preparing ~20,000 records takes.
 */
const THREAD_MIN_BYTES = 32 * 1024 * 1024;

/**
 * Imports the records of `files` (listSourceFiles), read and prepared on a worker thread while this one writes:
 * the same import as `importRecords(database, readSources(files))`, on two cores. Inputs under THREAD_MIN_BYTES
 * (by the files' `bytes`) are prepared in line unless `onThread` says otherwise.
 */
export function importFiles<DB extends OsvTables>(
  database: DatabaseHandle<DB> | Kysely<DB>,
  files: readonly { path: string; kind: SourceKind; bytes?: number }[],
  options: ImportOptions & { onThread?: boolean } = {},
): Promise<ImportReport> {
  const bytes = files.reduce((sum, file) => sum + (file.bytes ?? Infinity), 0);
  const onThread = options.onThread ?? bytes >= THREAD_MIN_BYTES;
  return importPrepared(database, onThread ? preparedOnThread(files) : preparedInLine(readSources(files)), options);
}

async function* preparedInLine(
  records: AsyncIterable<RawRecord | RawRecord[]> | Iterable<RawRecord | RawRecord[]>,
): AsyncGenerator<PreparedOrRejected[]> {
  for await (const chunk of records) yield (Array.isArray(chunk) ? chunk : [chunk]).map(prepareRecord);
}

async function importPrepared<DB extends OsvTables>(
  database: DatabaseHandle<DB> | Kysely<DB>,
  records: AsyncGenerator<PreparedOrRejected[]>,
  options: ImportOptions,
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

  async function writeBatch(batch: Map<string, PreparedRecord>): Promise<void> {
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

  let batch = new Map<string, PreparedRecord>();
  const add = async (prepared: PreparedOrRejected): Promise<void> => {
    report.read++;
    if (isRejected(prepared)) {
      reject(prepared);
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
      for (const prepared of chunk) {
        if (options.signal?.aborted) {
          report.interrupted = true;
          break reading;
        }
        await add(prepared);
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
