// One record made ready for the corpus writer (docs/osv.md, "Import"): validated, its index rows computed, its
// stored JSON and aliases settled. The import runs it on a thread of its own (osv.import-thread.ts) or in line.
import { computeIndexRows, storedRow, type StoredIndexRow } from './osv.rows.ts';
import { timestampKey, validateOsvRecord, type OsvRecord } from './osv.schema.ts';
import type { RawRecord } from './osv.sources.ts';
import type { RecordWrite } from './osv.batch-writer.ts';

/** A record that was not imported, and why. */
export interface RejectedRecord {
  source: string;
  id: string | undefined;
  reason: string;
}

/** A valid record as the writer stores it. */
export interface PreparedRecord {
  write: RecordWrite;
  rows: StoredIndexRow[];
  aliases: string[];
}

/** What preparing makes of one record read: the record ready to write, or why it is rejected. */
export type PreparedOrRejected = PreparedRecord | RejectedRecord;

export function isRejected(item: PreparedOrRejected): item is RejectedRecord {
  return !('write' in item);
}

/** Validates and prepares one record read (`raw.text`: its JSON as read, when compact); otherwise why it is rejected. */
export function prepareRecord(raw: RawRecord): PreparedOrRejected {
  if ('error' in raw) return { source: raw.source, id: undefined, reason: raw.error };
  const result = validateOsvRecord(raw.value);
  if (!result.ok) return { source: raw.source, id: result.id, reason: result.reason };
  const record: OsvRecord = result.record;
  let rows: StoredIndexRow[];
  try {
    rows = computeIndexRows(record).map(storedRow);
  } catch (error) {
    return { source: raw.source, id: record.id, reason: `cannot index: ${error instanceof Error ? error.message : String(error)}` };
  }
  return {
    write: {
      id: record.id,
      modified: record.modified,
      modifiedKey: timestampKey(record.modified),
      withdrawn: record.withdrawn !== undefined,
      json: raw.text ?? JSON.stringify(record),
    },
    rows,
    aliases: [...new Set((record.aliases ?? []).filter((a) => a !== '' && a !== record.id))],
  };
}
