// A full collection of the replica's heap once it has been idle for a moment and its old generation has grown, so
// that the next burst of queries does not pay for it (docs/osv.md, "Collecting while idle"). While serving, a replica
// promotes a few MB of per-call objects per thousand queries, and V8 starts marking for its own full collection when
// the old generation is 17-34 MB above the ~58-61 MB live heap (`--trace-incremental-marking` at 500,000 records:
// "Start (task) … 77MB / 116MB", "92MB / 137MB"). That collection ends in a pause of 5-30 ms on whichever request is
// running, most of it V8's atomic phases (clearing the external string table and weak references, sweeping array
// buffers, joining its helper threads) waiting for a core on the shared 2-core machines; no V8 flag tried made it
// shorter. Run while no request is served, a collection pauses nothing, and the next burst starts with all of V8's
// headroom. What it costs: a forced collection is not incremental (50-70 ms of the thread at 500,000 records), and
// a request that arrives during it waits for it. Under unbroken load there is no idle moment, and V8 collects as
// before.
import { getHeapSpaceStatistics } from 'node:v8';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../core/logger.ts';
import { compactHeap } from './osv.heap.ts';

export interface IdleCollectionPolicy {
  /** How often the event loop's utilisation and the heap are sampled. */
  tickMs: number;
  /** How long the loop must have been quiet before collecting. */
  quietMs: number;
  /**
   * The share of the last `quietMs` the loop may have been busy and still count as quiet: an idle platform's loop is
   * busy 0.1-3% of each 25 ms, now and then 10-17% (its timers, V8's tasks), so no single tick is a measure.
   */
  quietUtilization: number;
  /** Old-generation growth over the smallest size seen since the last collection that makes one worth its pause. */
  growthBytes: number;
  /** Least time between two idle collections. */
  minIntervalMs: number;
}

/**
 * One second of quiet: long beside a query (about 1 ms), short beside the time between two scans of a client, and
 * past the pauses inside one scan. 4 MiB of growth: a burst of a few hundred queries qualifies, a handful does not;
 * V8 would collect after some 17-34 MB, so an idle collection comes first even after a short burst. At most one a
 * second, each 50-70 ms of an otherwise idle thread. A tick costs about 3 µs (the heap's space statistics and the
 * loop's utilisation).
 */
export const IDLE_COLLECTION_POLICY: IdleCollectionPolicy = {
  tickMs: 25,
  quietMs: 1_000,
  quietUtilization: 0.05,
  growthBytes: 4 * 1024 * 1024,
  minIntervalMs: 1_000,
};

export interface HeapSample {
  /** `performance.now()` of the sample. */
  at: number;
  /** The event loop's utilisation since the previous sample, 0-1. */
  utilization: number;
  /** Bytes used by the old generation's spaces (all but the young generation's). */
  oldGenerationBytes: number;
}

export interface IdleCollectionJudge {
  /** Takes one sample; whether to collect now. */
  observe(sample: HeapSample): boolean;
  /** Records a collection that ended at `at` and left `oldGenerationBytes`. */
  collected(at: number, oldGenerationBytes: number): void;
}

/**
 * The decision alone, from samples taken every `tickMs`. Quiet is the mean utilisation of the last `quietMs` of
 * ticks. The smallest old generation seen since the last idle collection stands for the live heap: V8's own full
 * collections drop the size, and between collections it only grows.
 */
export function createIdleCollectionJudge(policy: IdleCollectionPolicy): IdleCollectionJudge {
  const window = Math.max(1, Math.ceil(policy.quietMs / policy.tickMs));
  const recent: number[] = [];
  let lowest = Number.POSITIVE_INFINITY;
  let lastCollectionAt = Number.NEGATIVE_INFINITY;
  return {
    observe(sample) {
      lowest = Math.min(lowest, sample.oldGenerationBytes);
      recent.push(sample.utilization);
      if (recent.length > window) recent.shift();
      if (recent.length < window) return false;
      const busy = recent.reduce((sum, utilization) => sum + utilization, 0) / window;
      return (
        busy <= policy.quietUtilization &&
        sample.oldGenerationBytes - lowest >= policy.growthBytes &&
        sample.at - lastCollectionAt >= policy.minIntervalMs
      );
    },
    collected(at, oldGenerationBytes) {
      lastCollectionAt = at;
      lowest = oldGenerationBytes;
      // The ticks before it are spent; quiet is counted afresh.
      recent.length = 0;
    },
  };
}

const YOUNG_SPACES = new Set(['new_space', 'new_large_object_space']);

function oldGenerationBytes(): number {
  let bytes = 0;
  for (const space of getHeapSpaceStatistics()) if (!YOUNG_SPACES.has(space.space_name)) bytes += space.space_used_size;
  return bytes;
}

/**
 * Samples the process every `policy.tickMs` (an unref'd timer) and runs `compactHeap` when the judge says so, with
 * a log line of what it freed. Returns the stop function.
 */
export function startIdleCollection(log: Pick<Logger, 'info'>, policy: IdleCollectionPolicy = IDLE_COLLECTION_POLICY): () => void {
  const judge = createIdleCollectionJudge(policy);
  // The heap as it starts, so growth is counted from here, not from the first tick (after what the caller did next).
  judge.observe({ at: performance.now(), utilization: 1, oldGenerationBytes: oldGenerationBytes() });
  let loop = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, loop);
    loop = now;
    const before = oldGenerationBytes();
    if (!judge.observe({ at: performance.now(), utilization, oldGenerationBytes: before })) return;
    const compaction = compactHeap();
    const after = oldGenerationBytes();
    judge.collected(performance.now(), after);
    const MiB = 1024 * 1024;
    log.info(
      { ...compaction, old_generation_before_mib: Math.round(before / MiB), old_generation_after_mib: Math.round(after / MiB) },
      'OSV heap collected while idle',
    );
  }, policy.tickMs);
  timer.unref();
  return () => clearInterval(timer);
}
