// The answers of each record, computed once and stored beside it (migration 20261121_0040): the canonical proto3
// JSON text of `platform.v1.Vulnerability` (the element of an HTTP answer) and its protobuf bytes (the element of a
// gRPC answer). A Query answer is then spliced from stored bytes (src/grpc/rpc.ts, EncodedMessage) instead of
// converting hundreds of records per call. Imports write records without answers, so importing stays as fast as
// writing; every replica's runtime then encodes what has none, in slices between which queries are served, and
// a record without answers yet is converted per call meanwhile.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { OsvTables } from './osv.table.ts';
import type { Logger } from '../core/logger.ts';
import { fromJson, toBinary, toJsonString, type JsonValue } from '@bufbuild/protobuf';
import { JSON_WRITE } from '../grpc/index.ts';
import { VulnerabilitySchema } from '../grpc/index.ts';
import { isClosedDatabaseError } from './osv.loader.ts';
import type { OsvRecord } from './osv.schema.ts';
import { recordsWithoutAnswers, storeAnswers } from './osv.store.ts';

export interface EncodedAnswer {
  /** Proto3 JSON text, as the generated codec writes it (`toJsonString` with the proto field names). */
  json: string;
  /** Protobuf encoding of the same message. */
  wire: Uint8Array;
}

/**
 * The answer forms of a stored (validated) record, written by the generated codec. Fields the proto does not carry
 * are dropped, empty ones omitted and timestamps normalised, exactly as the RPC layer converts a record per call
 * otherwise.
 */
export function encodeAnswer(record: OsvRecord): EncodedAnswer {
  const message = fromJson(VulnerabilitySchema, record as unknown as JsonValue, { ignoreUnknownFields: true });
  return { json: toJsonString(VulnerabilitySchema, message, JSON_WRITE), wire: toBinary(VulnerabilitySchema, message) };
}

export interface AnswerPass {
  encoded: number;
  /** Records that did not encode (each logged with its id); they stay converted per call. */
  failed: number;
  ms: number;
}

/**
 * Records per slice: about 10 ms of work (a record's answers take about 150 µs to encode with the generated codec
 * and 30 µs to store; `npx tsx bench/osv-answers.bench.ts`), so a query waits at most that long behind the pass.
 */
const SLICE = 64;

/** One pass over the records without answers, in id order, one transaction per slice. */
export async function encodePendingAnswers(
  db: Kysely<OsvTables>,
  options: { signal?: AbortSignal; log?: Logger; slice?: number } = {},
): Promise<AnswerPass> {
  const started = Date.now();
  const pass: AnswerPass = { encoded: 0, failed: 0, ms: 0 };
  let after = '';
  while (!options.signal?.aborted) {
    const rows = await recordsWithoutAnswers(db, after, options.slice ?? SLICE);
    if (rows.length === 0) break;
    const answers: { id: string; modifiedKey: string; json: string; wire: Uint8Array }[] = [];
    for (const row of rows) {
      try {
        answers.push({ id: row.id, modifiedKey: row.modified_key, ...encodeAnswer(JSON.parse(row.record) as OsvRecord) });
      } catch (error) {
        pass.failed++;
        options.log?.warn(
          { id: row.id, reason: error instanceof Error ? error.message : String(error) },
          'OSV record does not encode; it is converted per call',
        );
      }
    }
    pass.encoded += await db.transaction().execute((trx) => storeAnswers(trx, answers));
    after = rows[rows.length - 1]?.id ?? after;
    await yieldToEventLoop();
  }
  pass.ms = Date.now() - started;
  return pass;
}

export interface AnswerEncoder {
  /** Starts a pass, or another one after the running pass (an import landed meanwhile). */
  kick(): void;
  /** Resolves once no pass is running or queued. */
  whenIdle(): Promise<void>;
  close(): Promise<void>;
}

/** Runs passes on demand (the index keeper kicks it after its first build and after each refresh with changes). */
export function createAnswerEncoder(deps: { db: Kysely<OsvTables>; log: Logger }): AnswerEncoder {
  const controller = new AbortController();
  let running: Promise<void> | undefined;
  let again = false;

  async function loop(): Promise<void> {
    do {
      again = false;
      try {
        const pass = await encodePendingAnswers(deps.db, { signal: controller.signal, log: deps.log });
        // Logged even when every record had its answers: the pass only runs after a build or a refresh with changes.
        deps.log.info({ ...pass, per_second: Math.round((pass.encoded * 1000) / Math.max(1, pass.ms)) }, 'OSV answers encoded');
      } catch (error) {
        if (controller.signal.aborted || isClosedDatabaseError(error)) return;
        deps.log.warn({ err: error }, 'OSV answer encoding failed; records are converted per call until the next import or restart');
        return;
      }
    } while (again && !controller.signal.aborted);
  }

  return {
    kick() {
      if (controller.signal.aborted) return;
      if (running) {
        again = true;
        return;
      }
      running = loop().finally(() => (running = undefined));
    },
    async whenIdle() {
      while (running) await running;
    },
    async close() {
      controller.abort();
      await running;
    },
  };
}
