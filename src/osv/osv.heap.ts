// One full collection of the replica's JavaScript heap once the background work after an index build or a refresh
// with changes is done (docs/osv.md, "Memory"). Building the index, warming lookups and encoding the answers of
// 500,000 records allocate gigabytes of short-lived objects; enough of them outlive two scavenges that the old
// generation grew to ~200 MiB of mostly garbage, and V8 started no full collection before its initial old-generation
// limit (measured with --trace-gc: none in the first 10 minutes of a replica). That heap was resident memory (a third
// of the replica's RSS) and its first full collection fell into the serving period, on a request's thread: a 26.6 ms
// incremental-marking pause on a busy machine. Collected once when the replica has settled, the live heap is ~30 MiB,
// its pages are returned, and V8 sets its old-generation limit from that size, so later full collections mark little.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collector: (() => void) | undefined;

/**
 * V8 settings of a process that serves the index, applied once when PlatformOSV starts (docs/osv.md, "Latency
 * tail"). Allocation-site pretenuring is turned off: V8 watches how many objects of each object and array literal
 * survive a young-generation collection and, above a threshold, allocates that literal straight into the old
 * generation from then on. A `QueryBatch` (tens of milliseconds, its objects alive across collections) and the build's
 * background work made the shared code paths of every call look long-lived (protobuf messages, match pages, the
 * transports' per-call objects), so the objects of every later `Query` went to the old generation and died there.
 * Measured on 500,000 records, one run each, same database, load 7.4–7.8 (four series HTTP idle, gRPC idle, HTTP
 * busy, gRPC busy): promoted per series 16 / 35 / 21 / 34 MB with pretenuring, 11 / 18 / 11 / 10 MB without; median
 * scavenge pause 3.2 / 4.7 / 4.5 / 6.7 ms against 1.5 / 2.3 / 1.9 / 2.8 ms (`--trace-gc-nvp`). The old generation
 * fills about half as fast. What it costs: literals that do live long are copied once more by a scavenge before they
 * are promoted (V8's default before pretenuring existed).
 *
 * The old generation's limit grows by a fixed factor of 2 over the live heap a full collection leaves
 * (`--heap-growing-percent=100`). V8 picks the factor from how fast its collections ran against the program: on the
 * shared machine they look slow because the collector waits for a core, so it set the limit only 3-10 MiB above a
 * ~58 MiB live heap (`--trace-gc`: "Mark-Compact 69 -> 58", "61 -> 57", "59 -> 58" MB within one series) and ran a
 * full collection every few MiB promoted, each another pause to be stretched. With the fixed factor the limit is
 * ~115-130 MiB: in two alternating pairs of runs (load 4.4-5.3) 2 and 2 full collections in the four series against
 * 5 and 4 with V8's factor. What it costs: up to one live heap (~60 MiB) of dead objects in the old generation before
 * a collection frees them; replica RSS after the latency series 515-529 MiB against 494-508 (target < 600 MiB).
 *
 * Process-wide: `platform serve` holds the index, and its other services allocate per request the same way.
 */
const REPLICA_V8_FLAGS = ['--no-allocation-site-pretenuring', '--heap-growing-percent=100'];
let tuned = false;

/** Applies REPLICA_V8_FLAGS once per process; returns them (for the start's log line). */
export function tuneReplicaHeap(): readonly string[] {
  if (!tuned) {
    tuned = true;
    for (const flag of REPLICA_V8_FLAGS) setFlagsFromString(flag);
  }
  return REPLICA_V8_FLAGS;
}

/**
 * V8's full collection. `--expose-gc` is only read when a context is created, so it is set for the moment one
 * context is made to fetch `gc` from, and cleared again: no other context (a worker, a vm script) gets the global.
 */
function fullCollector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed !== undefined) return exposed;
  if (collector === undefined) {
    setFlagsFromString('--expose-gc');
    try {
      collector = runInNewContext('gc') as () => void;
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
  return collector;
}

export interface HeapCompaction {
  ms: number;
  /** `heapUsed` before and after, MiB. */
  heap_before_mib: number;
  heap_after_mib: number;
  /** `heapTotal` (pages V8 holds) before and after, MiB. */
  pages_before_mib: number;
  pages_after_mib: number;
}

/**
 * V8's pages beyond the live heap of the last collection (or beyond nothing, the first time) above which settling
 * collects: a settled replica of 500,000 records holds ~90 MiB of pages around ~55 MiB live, and one that has just
 * stored every answer held ~210 MiB. Below it the collection frees little and is a pause for nothing (235 ms of wall
 * time measured at load 13 for none freed).
 */
const SETTLE_SLACK_BYTES = 128 * 1024 * 1024;

export interface HeapSettled {
  /** Whether a full collection ran (V8's pages were more than SETTLE_SLACK_BYTES above the last live heap). */
  collected: boolean;
  heap_total_mib: number;
  heap_used_mib: number;
  compaction?: HeapCompaction;
}

/** Runs `compactHeap` when V8 holds much more than the live heap it last found; what it found, for the log. */
export function createHeapSettler(slackBytes = SETTLE_SLACK_BYTES): () => HeapSettled {
  let live = 0;
  return () => {
    const MiB = 1024 * 1024;
    const { heapTotal, heapUsed } = process.memoryUsage();
    const settled: HeapSettled = {
      collected: false,
      heap_total_mib: Math.round(heapTotal / MiB),
      heap_used_mib: Math.round(heapUsed / MiB),
    };
    if (heapTotal - live <= slackBytes) return settled;
    settled.collected = true;
    settled.compaction = compactHeap();
    live = process.memoryUsage().heapUsed;
    return settled;
  };
}

/** Runs one full collection now (a pause of the calling thread: tens of milliseconds on a settled replica). */
export function compactHeap(): HeapCompaction {
  const MiB = 1024 * 1024;
  const before = process.memoryUsage();
  const started = performance.now();
  fullCollector()();
  const ms = Math.round(performance.now() - started);
  const after = process.memoryUsage();
  return {
    ms,
    heap_before_mib: Math.round(before.heapUsed / MiB),
    heap_after_mib: Math.round(after.heapUsed / MiB),
    pages_before_mib: Math.round(before.heapTotal / MiB),
    pages_after_mib: Math.round(after.heapTotal / MiB),
  };
}
