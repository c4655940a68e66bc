import type { Kysely } from 'kysely';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createAnswerEncoder, type AnswerEncoder } from './osv.answer.ts';
import { createHeapSettler, tuneReplicaHeap } from './osv.heap.ts';
import { startIdleCollection } from './osv.idle-collection.ts';
import type { OsvConfig } from './osv.config.ts';
import { createIndexKeeper, type IndexKeeper } from './osv.loader.ts';
import { createOsvService, type OsvService } from './osv.service.ts';
import type { OsvTables } from './osv.table.ts';

export interface OsvRuntimeDeps {
  db: Kysely<OsvTables>;
  clock: Clock;
  log: Logger;
  config: OsvConfig;
}

/** PlatformOSV as a replica runs it: the service, the keeper of its in-memory index and the answer encoder. */
export interface OsvRuntime {
  service: OsvService;
  keeper: IndexKeeper;
  /** Computes the stored answers of records that have none (osv.answer.ts). */
  answers: AnswerEncoder;
  /** Stops the index refresh, the answer encoder and the idle collections. */
  close(): Promise<void>;
}

/**
 * Builds PlatformOSV and starts its index build at once (queries before it is ready wait for it within their
 * deadline); the corpus generation is then polled every `OSV_REFRESH_INTERVAL_MS`, and the answers of records that
 * have none are computed after each build or refresh. The composition root builds one per process, shared by the
 * gRPC listener and the HTTP mappings, so the index is held once.
 */
export function createOsvRuntime(deps: OsvRuntimeDeps): OsvRuntime {
  const { db, clock, config } = deps;
  const log = deps.log.child({ service: 'osv' });
  // Before the index build allocates: V8's pretenuring decisions are made from what survives from then on.
  log.debug({ flags: tuneReplicaHeap() }, 'OSV heap tuned');
  const answers = createAnswerEncoder({ db, log });
  const settleHeap = createHeapSettler();
  // Between bursts of queries: the collection V8 would otherwise run inside the next burst (osv.idle-collection.ts).
  const stopIdleCollection = startIdleCollection(log);
  let closing: Promise<void> | undefined;
  // After a build or refresh with changes, once the lookups are warmed and the answers stored: one full collection
  // (osv.heap.ts), so the garbage of that work neither stays resident nor is collected later on a query's thread.
  let compaction: Promise<void> | undefined;
  let compactAgain = false;
  const compactWhenSettled = (): void => {
    if (compaction !== undefined) {
      compactAgain = true;
      return;
    }
    compaction = (async () => {
      do {
        compactAgain = false;
        await nextTurn(); // the keeper starts warming after telling us of the change
        await keeper.whenWarm();
        await answers.whenIdle();
      } while (compactAgain && closing === undefined);
      if (closing === undefined) log.info(settleHeap(), 'OSV heap settled');
    })().finally(() => (compaction = undefined));
  };
  const keeper = createIndexKeeper({
    db,
    log,
    intervalMs: config.OSV_REFRESH_INTERVAL_MS,
    onChange: () => {
      answers.kick();
      compactWhenSettled();
    },
  });
  const service = createOsvService({ db, index: keeper, config, clock, log });
  keeper.start();
  return {
    service,
    keeper,
    answers,
    close() {
      closing ??= (async () => {
        stopIdleCollection();
        await keeper.close();
        await answers.close();
        await compaction;
      })();
      return closing;
    },
  };
}
