import { CompiledQuery, PostgresAdapter, type Kysely } from 'kysely';
import type { ErrorCode } from '../../core/errors.ts';
import type { AdminTables, InferenceUsageTable } from '../admin.table.ts';
import type { Workload } from '../catalog/wires.ts';

/** How a request ended: a success, an upstream failure, the caller gone, or the refusal's error code. */
export type UsageOutcome = 'succeeded' | 'failed' | 'aborted' | ErrorCode;

export interface UsageRecord {
  id: string;
  accountId: string;
  humanId: string;
  credentialId: string;
  model: string;
  modelIdentity: string | null;
  workload: Workload;
  inputTokens: number | null;
  outputTokens: number | null;
  cachedInputTokens: number | null;
  cost: { amount: string; unit: string } | null;
  startedAt: number;
  durationMs: number;
  outcome: UsageOutcome;
  streamed: boolean;
}

/** The columns of a usage row, in the order `usageValues` gives them. */
const USAGE_COLUMNS = [
  'id',
  'account_id',
  'human_id',
  'credential_id',
  'model',
  'model_identity',
  'workload',
  'input_tokens',
  'output_tokens',
  'cached_input_tokens',
  'cost',
  'cost_unit',
  'started_at',
  'duration_ms',
  'outcome',
  'streamed',
] as const satisfies readonly (keyof InferenceUsageTable)[];

function usageValues(record: UsageRecord): (string | number | null)[] {
  return [
    record.id,
    record.accountId,
    record.humanId,
    record.credentialId,
    record.model,
    record.modelIdentity,
    record.workload,
    record.inputTokens,
    record.outputTokens,
    record.cachedInputTokens,
    record.cost?.amount ?? null,
    record.cost?.unit ?? null,
    record.startedAt,
    record.durationMs,
    record.outcome,
    record.streamed ? 1 : 0,
  ];
}

/** The INSERT text for `rows` rows, by dialect and row count (a handful of distinct texts in practice). */
const insertTexts = new Map<string, string>();
function insertText(postgres: boolean, rows: number): string {
  const key = `${postgres ? 'p' : 's'}${rows}`;
  let text = insertTexts.get(key);
  if (text === undefined) {
    const width = USAGE_COLUMNS.length;
    const tuple = (row: number) => `(${USAGE_COLUMNS.map((_, column) => (postgres ? `$${row * width + column + 1}` : '?')).join(', ')})`;
    text = `insert into inference_usage (${USAGE_COLUMNS.join(', ')}) values ${Array.from({ length: rows }, (_, row) => tuple(row)).join(', ')}`;
    if (insertTexts.size < 2 * USAGE_BATCH_ROWS + 2) insertTexts.set(key, text);
  }
  return text;
}

/**
 * Inserts usage rows in one statement (one transaction, one commit). The statement is written out rather than built
 * through the query builder: for a batch of rows the builder's value parsing and compilation cost more CPU than the
 * database took to insert them.
 */
export async function insertUsage(db: Kysely<AdminTables>, ...records: UsageRecord[]): Promise<void> {
  if (records.length === 0) return;
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.executeQuery(CompiledQuery.raw(insertText(postgres, records.length), records.flatMap(usageValues)));
}

/**
 * Rows per statement. 16 columns each: 200 rows bind 3,200 values, far inside PostgreSQL's 65,535 and SQLite's
 * 32,766 bound parameters, and a batch that large only forms when commits are slow.
 */
export const USAGE_BATCH_ROWS = 200;

/** Writes usage rows by group commit; `write` resolves once the row is committed (or rejects with why it was not). */
export interface UsageWriter {
  write(record: UsageRecord): Promise<void>;
}

interface Pending {
  record: UsageRecord;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Group commit for usage rows (issue 16 item 6): rows handed in while a commit is in flight, or in the same turn of
 * the event loop, go out together as one multi-row `INSERT` in one transaction, so under load many requests share one
 * commit (on PostgreSQL one WAL flush) instead of paying one each. At most one batch is in flight; a row that arrives
 * while it is waits for the next. Each caller's promise resolves only after the commit of the batch holding its row,
 * so a request answers after its row is durable exactly as with a lone insert: nothing answered is lost on a crash.
 * When a batch fails (a row the database refuses), its rows are retried one by one so one bad row costs only itself.
 * A lone request waits at most one `setImmediate` longer than before (microseconds when idle).
 */
export function createUsageWriter(db: Kysely<AdminTables>): UsageWriter {
  let queue: Pending[] = [];
  let scheduled = false;
  let inFlight: Promise<void> | undefined;

  async function commit(batch: Pending[]): Promise<void> {
    try {
      await insertUsage(db, ...batch.map((p) => p.record));
      for (const p of batch) p.resolve();
    } catch (error) {
      if (batch.length === 1) return batch[0]!.reject(error);
      for (const p of batch)
        await insertUsage(db, p.record).then(
          () => p.resolve(),
          (single: unknown) => p.reject(single),
        );
    }
  }

  function flush(): void {
    scheduled = false;
    if (inFlight || queue.length === 0) return;
    const batch = queue.slice(0, USAGE_BATCH_ROWS);
    queue = queue.slice(batch.length);
    inFlight = commit(batch).finally(() => {
      inFlight = undefined;
      flush();
    });
  }

  return {
    write(record) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ record, resolve, reject });
        // The next turn, not now: the answers that arrived in this turn join the batch.
        if (!scheduled && !inFlight) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
}
