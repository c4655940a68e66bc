// Builds the in-memory index from the stored index rows at start, and keeps it current: every replica polls the
// corpus generation and applies the records written since (docs/osv.md, "Refresh"). Reading is paged by id, so
// memory never holds more than one page of rows besides the index itself.
import type { Kysely } from 'kysely';
import type { OsvTables } from './osv.table.ts';
import type { Logger } from '../core/logger.ts';
import { compareIds, CorpusIndex } from './osv.index.ts';
import type { IndexRowData } from './osv.rows.ts';
import { warmLookups } from './osv.paging.ts';
import {
  changedRecordIds,
  indexRowFromStored,
  readGeneration,
  readIndexRowsBetween,
  readIndexRowsOf,
  readRecordHeads,
  readRecordHeadsOf,
  type RecordHead,
} from './osv.store.ts';
import type { OsvAffectedRow } from './osv.table.ts';

/** Records per page while loading. */
const PAGE = 2000;

function groupRows(rows: readonly OsvAffectedRow[]): Map<string, IndexRowData[]> {
  const out = new Map<string, IndexRowData[]>();
  for (const row of rows) {
    let list = out.get(row.vuln_id);
    if (list === undefined) {
      list = [];
      out.set(row.vuln_id, list);
    }
    list.push(indexRowFromStored(row));
  }
  return out;
}

function applyPage(index: CorpusIndex, heads: readonly RecordHead[], rows: Map<string, IndexRowData[]>): void {
  for (const head of heads) index.applyVuln(head.id, head.modified, head.withdrawn === 1 ? null : (rows.get(head.id) ?? []));
}

/**
 * Loads the whole corpus into a new index. The generation is read first, so anything committed while loading is
 * picked up again by the next refresh (applying a record twice is harmless).
 */
export async function buildIndex(db: Kysely<OsvTables>, signal?: AbortSignal): Promise<CorpusIndex> {
  const index = new CorpusIndex();
  index.generation = await readGeneration(db);
  let after = '';
  for (;;) {
    signal?.throwIfAborted();
    const heads = await readRecordHeads(db, after, PAGE);
    const first = heads[0];
    const last = heads[heads.length - 1];
    if (first === undefined || last === undefined) break;
    applyPage(index, heads, groupRows(await readIndexRowsBetween(db, first.id, last.id)));
    after = last.id;
  }
  index.seal();
  return index;
}

/**
 * Applies the records written since the index's generation; returns how many records changed (0 when the
 * generation did not move).
 */
async function refreshIndex(db: Kysely<OsvTables>, index: CorpusIndex): Promise<number> {
  const generation = await readGeneration(db);
  if (generation <= index.generation) return 0;
  const ids = (await changedRecordIds(db, index.generation)).sort(compareIds);
  index.startInterning();
  try {
    for (let i = 0; i < ids.length; i += PAGE) {
      const heads = (await readRecordHeadsOf(db, ids.slice(i, i + PAGE))).sort((a, b) => compareIds(a.id, b.id));
      const live = heads.filter((h) => h.withdrawn !== 1).map((h) => h.id);
      applyPage(index, heads, groupRows(await readIndexRowsOf(db, live)));
    }
  } finally {
    index.seal();
  }
  index.generation = generation;
  return ids.length;
}

/** Where the service gets the current index from. */
export interface IndexSource {
  /** The index, once the first build finished. */
  current(): CorpusIndex | undefined;
  /** Resolves with the index when it is ready, or with undefined when `deadline` (epoch ms) passes first. */
  whenReady(deadline: number): Promise<CorpusIndex | undefined>;
}

/** An index source around an index that is already built (tests, benchmarks). */
export function staticIndexSource(index: CorpusIndex): IndexSource {
  return { current: () => index, whenReady: async () => index };
}

/**
 * Whether an error says the database handle was closed under us (the platform is shutting down, or a test closed
 * its database): the keeper then stops instead of retrying for the rest of the process.
 */
export function isClosedDatabaseError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /driver has already been destroyed|after calling end on the pool|database connection is not open/iu.test(message);
}

export interface IndexKeeper extends IndexSource {
  /** Starts the first build and the refresh timer. */
  start(): void;
  /** Checks the generation now and applies changes (also what the timer runs). */
  refresh(): Promise<number>;
  /** Resolves once the background work after the last change (the lookups of large packages) is done. */
  whenWarm(): Promise<void>;
  /** Stops the timer and waits for a running build or refresh. */
  close(): Promise<void>;
}

/**
 * Interned bytes that refreshes must add, and half the table as built, before the keeper builds the index again
 * (`rebuild`). The strings of 500,000 synthetic records take about 47 MiB and a record replaced with a new
 * `modified` adds about 42 bytes, so this is some 1.6 million replacements: a replica holds at most about that much
 * text of replaced records, and a rebuild (tens of seconds of one core at 500,000 records) stays rare.
 */
const REBUILD_MIN_BYTES = 64 * 1024 * 1024;

/**
 * Owns the replica's index: builds it at `start()`, then polls the corpus generation every `intervalMs` and
 * applies what changed, so an import on any host reaches every replica without a restart. `onChange` is told after
 * the first build and after every refresh that changed something.
 */
export function createIndexKeeper(deps: {
  db: Kysely<OsvTables>;
  log: Logger;
  intervalMs: number;
  onChange?: () => void;
  /** A rebuild waits until refreshes have interned more than this many bytes (default REBUILD_MIN_BYTES)… */
  rebuildMinBytes?: number;
  /** …and more than this share of the interned bytes of the last build (default 0.5). */
  rebuildShare?: number;
}): IndexKeeper {
  const { db, log } = deps;
  const rebuildMinBytes = deps.rebuildMinBytes ?? REBUILD_MIN_BYTES;
  const rebuildShare = deps.rebuildShare ?? 0.5;
  let index: CorpusIndex | undefined;
  /** `internedBytes()` of the index when it was built, and what refreshes have interned since. */
  let builtBytes = 0;
  let internedByRefreshes = 0;
  let rebuilding: Promise<void> | undefined;
  let building: Promise<void> | undefined;
  let running: Promise<number> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const controller = new AbortController();
  const waiters = new Set<() => void>();

  function stop(): void {
    closed = true;
    controller.abort();
    if (timer !== undefined) clearInterval(timer);
    for (const wake of waiters) wake();
  }

  async function build(): Promise<void> {
    const started = Date.now();
    for (let attempt = 1; !closed; attempt++) {
      try {
        index = await buildIndex(db, controller.signal);
        builtBytes = index.internedBytes();
        internedByRefreshes = 0;
        log.info({ ms: Date.now() - started, ...index.stats(), generation: index.generation }, 'OSV index built');
        for (const wake of waiters) wake();
        afterChange();
        return;
      } catch (error) {
        if (closed) return;
        if (isClosedDatabaseError(error)) {
          stop();
          return;
        }
        log.error({ err: error, attempt }, 'OSV index build failed; retrying');
        await new Promise((r) => setTimeout(r, Math.min(30_000, 500 * 2 ** attempt)).unref());
      }
    }
  }

  // After every change: the lookups of large packages are prepared in the background (warmLookups),
  // one run at a time, again when a change landed meanwhile; then the owner is told.
  let warming: Promise<void> | undefined;
  let warmAgain = false;
  function afterChange(): void {
    deps.onChange?.();
    if (warming !== undefined) {
      warmAgain = true;
      return;
    }
    warming = (async () => {
      do {
        warmAgain = false;
        const current = index;
        if (current === undefined || closed) return;
        const started = Date.now();
        const warmed = await warmLookups(current, controller.signal);
        // Logged even when nothing was built: operators (and bench:osv) learn when the replica has settled.
        log.info({ string_lookups: warmed.lookups, parsed_lists: warmed.parsedLists, ms: Date.now() - started }, 'OSV lookups warmed');
      } while (warmAgain && !closed);
    })()
      .catch((error: unknown) => log.warn({ err: error }, 'warming OSV lookups failed; they are built on first use'))
      .finally(() => (warming = undefined));
  }

  /**
   * Builds the index again from the database, in the background, and swaps it in: the strings of replaced records
   * are never removed from an index (osv.strings.ts), so without this they would pile up until a restart. The
   * old index answers meanwhile (both are held until the swap); the new one then catches up by refreshing.
   */
  function rebuild(grown: number): void {
    rebuilding = (async () => {
      const started = Date.now();
      const fresh = await buildIndex(db, controller.signal);
      if (closed) return;
      const before = index?.internedBytes() ?? 0;
      index = fresh;
      builtBytes = fresh.internedBytes();
      internedByRefreshes = 0;
      log.info(
        {
          ms: Date.now() - started,
          interned_since_build: grown,
          interned_bytes_before: before,
          interned_bytes: builtBytes,
          ...fresh.stats(),
        },
        'OSV index rebuilt',
      );
      afterChange();
      await refresh();
    })()
      .catch((error: unknown) => {
        if (!closed) log.warn({ err: error }, 'rebuilding the OSV index failed; the current one stays');
      })
      .finally(() => (rebuilding = undefined));
  }

  async function refresh(): Promise<number> {
    if (index === undefined || closed) return 0;
    if (running !== undefined) return running;
    const current = index;
    running = (async () => {
      const started = Date.now();
      try {
        // Counted around the refresh only: lookups and queries intern forms of live strings too, which a rebuild
        // would not free.
        const before = current.internedBytes();
        const changed = await refreshIndex(db, current);
        if (current === index) internedByRefreshes += current.internedBytes() - before;
        if (changed > 0) {
          log.info({ changed, ms: Date.now() - started, generation: current.generation }, 'OSV index refreshed');
          afterChange();
          if (rebuilding === undefined && internedByRefreshes > Math.max(rebuildMinBytes, builtBytes * rebuildShare))
            rebuild(internedByRefreshes);
        }
        return changed;
      } catch (error) {
        if (isClosedDatabaseError(error)) stop();
        else log.warn({ err: error }, 'OSV index refresh failed; will retry');
        return 0;
      } finally {
        running = undefined;
      }
    })();
    return running;
  }

  return {
    current: () => index,
    async whenReady(deadline) {
      if (index !== undefined) return index;
      const wait = deadline - Date.now();
      if (wait <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(t);
          waiters.delete(done);
          resolve();
        };
        const t = setTimeout(done, wait);
        waiters.add(done);
      });
      return index;
    },
    start() {
      if (building !== undefined) return;
      building = build();
      if (deps.intervalMs > 0) {
        timer = setInterval(() => void refresh(), deps.intervalMs);
        timer.unref();
      }
    },
    refresh,
    async whenWarm() {
      while (warming !== undefined) await warming;
    },
    async close() {
      stop();
      await building?.catch(() => undefined);
      await running?.catch(() => undefined);
      // A rebuild stopped by `stop` ends (its own catch logs nothing once closed) before the database may close.
      await rebuilding;
      await warming;
    },
  };
}
