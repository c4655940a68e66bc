// PlatformOSV's Query, QueryBatch and GetVuln with OSV.dev's semantics (osv-facts.md §1–§5): requests checked by
// osv.query.ts, results in ascending id order and each id once, pages of 3000 (1000 per batch item) with opaque
// tokens that carry the last id (so they survive restarts and refreshes), time budgets of 20 s / 35 s that return a
// partial page with a token, and withdrawn records never matched.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../core/clock.ts';
import type { OsvTables } from './osv.table.ts';
import { AppError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { EncodedMessage } from '../grpc/index.ts';
import type { OsvConfig } from './osv.config.ts';
import { compareIds, type CorpusIndex } from './osv.index.ts';
import type { IndexSource } from './osv.loader.ts';
import type { MatchPage } from './osv.paging.ts';
import { encodePageToken, FIRST_PAGE_TOKEN, matchQuery, parseBatch, parseQuery, parseVulnId, type ParsedQuery } from './osv.query.ts';
import { ByteArena, encodeBatchItem, encodeBatchResult, type BatchResultJson } from './osv.batch-answer.ts';
import { aliasEdges, findLiveAnswers, findRecord, type StoredAnswer } from './osv.store.ts';

// ---------------------------------------------------------------------------------------------------------------
// Response shapes (canonical proto3 JSON of platform.v1, as the RPC layer hands them over)

/** A full OSV record (Query, GetVuln) or `{id, modified}` (QueryBatch). */
export type VulnJson = Record<string, unknown>;

export interface VulnerabilityListJson {
  vulns?: VulnJson[];
  next_page_token?: string;
}

/** A Query answer whose records come as stored bytes (`EncodedMessage`), objects only for rows without them. */
export interface EncodedVulnerabilityList {
  vulns?: (VulnJson | EncodedMessage)[];
  next_page_token?: string;
}

export interface BatchVulnerabilityListJson {
  results?: BatchResultJson[];
}

/** A QueryBatch answer whose results come written in the form the transport sends (`EncodedMessage`). */
export interface EncodedBatchVulnerabilityList {
  results?: EncodedMessage[];
}

// ---------------------------------------------------------------------------------------------------------------
// The service

export interface OsvServiceDeps {
  db: Kysely<OsvTables>;
  index: IndexSource;
  config: Pick<
    OsvConfig,
    | 'OSV_QUERY_PAGE_SIZE'
    | 'OSV_BATCH_PAGE_SIZE'
    | 'OSV_BATCH_MAX_RESULTS'
    | 'OSV_QUERY_TIMEOUT_MS'
    | 'OSV_BATCH_TIMEOUT_MS'
    | 'OSV_RESPONSE_SOFT_LIMIT_BYTES'
  >;
  clock: Clock;
  log: Logger;
}

/** Per-call context from the transport. */
interface CallOptions {
  /** Epoch ms by which the answer is due (the client's deadline, capped by the server). */
  deadline?: number;
  signal?: AbortSignal;
}

/** Which stored form of a record an encoded Query answer carries: the JSON text (HTTP) or the protobuf bytes (gRPC). */
type AnswerForm = 'json' | 'wire';

/** Matching work between yields to the event loop in a batch, so one large batch does not stall other requests. */
const SLICE_MS = 10;

export interface OsvService {
  query(request: unknown, options?: CallOptions): Promise<VulnerabilityListJson>;
  /** `query` for a transport: records come in the stored `form` it sends, so the answer is spliced from bytes. */
  queryEncoded(request: unknown, form: AnswerForm, options?: CallOptions): Promise<EncodedVulnerabilityList>;
  queryBatch(request: unknown, options?: CallOptions): Promise<BatchVulnerabilityListJson>;
  /** `queryBatch` for a transport: each result written in the `form` it sends (osv.batch-answer.ts). */
  queryBatchEncoded(request: unknown, form: AnswerForm, options?: CallOptions): Promise<EncodedBatchVulnerabilityList>;
  getVuln(request: unknown, options?: CallOptions): Promise<VulnJson>;
}

/**
 * PlatformOSV over a corpus index (matching) and the database (records for Query and GetVuln). Errors are
 * AppErrors: `parameter_invalid` (INVALID_ARGUMENT, 400), `not_found` (NOT_FOUND, 404), `unavailable` while the
 * first index build runs, `internal` for store failures.
 */
export function createOsvService(deps: OsvServiceDeps): OsvService {
  const { db, config, clock } = deps;
  const parsed = createRecordCache(RECORD_CACHE_SIZE);

  /** The matching deadline: our budget, and a margin before the caller's deadline for hydration and encoding. */
  function budget(timeoutMs: number, options: CallOptions | undefined): number {
    const now = clock.now();
    let deadline = now + timeoutMs;
    if (options?.deadline !== undefined && Number.isFinite(options.deadline)) {
      const left = options.deadline - now;
      const margin = Math.min(1000, Math.max(20, left * 0.1));
      deadline = Math.min(deadline, options.deadline - margin);
    }
    return deadline;
  }

  async function readyIndex(deadline: number): Promise<CorpusIndex> {
    const index = deps.index.current() ?? (await deps.index.whenReady(Math.max(deadline, clock.now() + 1)));
    if (index === undefined) throw new AppError('unavailable', 'the vulnerability index is still loading; retry shortly');
    return index;
  }

  function matchOne(index: CorpusIndex, q: ParsedQuery, pageSize: number, deadline: number): MatchPage {
    return matchQuery(index, q, { pageSize, deadline, now: () => clock.now() });
  }

  function token(q: ParsedQuery, cursor: string | undefined): string | undefined {
    if (cursor === undefined || q.kind === 'nothing') return undefined;
    return encodePageToken(q.kind, cursor);
  }

  /** The answer element of a stored record: bytes spliced as they are, or an object the RPC layer converts. */
  function element(id: string, answer: StoredAnswer, form: AnswerForm | undefined): VulnJson | EncodedMessage {
    if (answer.pending) return parsed(id, answer.json);
    if (answer.wire !== undefined) return new EncodedMessage(undefined, answer.wire);
    return form === 'json' ? new EncodedMessage(answer.json, undefined) : (JSON.parse(answer.json.toString()) as VulnJson);
  }

  async function hydrate(
    page: MatchPage,
    form: AnswerForm | undefined,
  ): Promise<{ records: (VulnJson | EncodedMessage)[]; cutAfter: string | undefined }> {
    const index = page.index;
    const ids = index === undefined ? [] : page.records.map((rec) => index.recordId(rec));
    let stored: Map<string, StoredAnswer>;
    try {
      stored = await findLiveAnswers(db, ids, form ?? 'json');
    } catch (error) {
      throw new AppError('internal', 'error getting vulnerabilities', { cause: error });
    }
    const records: (VulnJson | EncodedMessage)[] = [];
    let size = 0;
    let lastId: string | undefined;
    for (const id of ids) {
      // A record withdrawn since the index was refreshed is skipped, as OSV.dev skips missing ones; one replaced since
      // is answered as stored now (the next refresh matches its new ranges).
      const answer = stored.get(id);
      if (answer === undefined) continue;
      // The JSON size on both transports, so a page ends at the same record whichever one asks.
      const length = answer.size;
      if (lastId !== undefined && size + length > config.OSV_RESPONSE_SOFT_LIMIT_BYTES) {
        // §3 soft size limit: stop the page here; the token resumes after the last record sent.
        return { records, cutAfter: lastId };
      }
      size += length;
      lastId = id;
      records.push(element(id, answer, form));
    }
    return { records, cutAfter: undefined };
  }

  async function query(
    request: unknown,
    form: AnswerForm | undefined,
    options: CallOptions | undefined,
  ): Promise<EncodedVulnerabilityList> {
    const q = parseQuery(request);
    if (q.kind === 'nothing') return {};
    const deadline = budget(config.OSV_QUERY_TIMEOUT_MS, options);
    const index = await readyIndex(deadline);
    const page = matchOne(index, q, config.OSV_QUERY_PAGE_SIZE, deadline);
    const { records, cutAfter } = await hydrate(page, form);
    const out: EncodedVulnerabilityList = {};
    if (records.length > 0) out.vulns = records;
    const next = token(q, cutAfter ?? page.cursor);
    if (next !== undefined) out.next_page_token = next;
    return out;
  }

  /**
   * Matches a batch, handing each item (its page of matches, none when it was not run, and its page token) to
   * `write` as soon as it is matched. Writing there, not after the whole batch, lets each page's arrays die young:
   * a `QueryBatch(1000)` outlives several young-generation collections, and what it held until the end was promoted,
   * filling the old generation towards a full collection on a query's thread.
   */
  async function queryBatch<T>(
    request: unknown,
    options: CallOptions | undefined,
    write: (page: MatchPage | undefined, token: string | undefined) => T,
  ): Promise<T[]> {
    const queries = parseBatch(request);
    if (queries.length === 0) return [];
    const deadline = budget(config.OSV_BATCH_TIMEOUT_MS, options);
    const index = await readyIndex(deadline);
    const items: T[] = [];
    let budgetLeft = config.OSV_BATCH_MAX_RESULTS;
    let sliceStart = clock.now();
    for (const q of queries) {
      if (clock.now() - sliceStart >= SLICE_MS) {
        await yieldToEventLoop();
        sliceStart = clock.now();
      }
      if (options?.signal?.aborted) throw new AppError('unavailable', 'the call was cancelled');
      if (q.kind !== 'nothing' && clock.now() > deadline) {
        // Not started before the deadline: the client asks again for this item from the start (§3).
        items.push(write(undefined, FIRST_PAGE_TOKEN));
        continue;
      }
      if (q.kind !== 'nothing' && budgetLeft === 0) {
        // The answer is full: this item resumes where its page token pointed.
        items.push(write(undefined, encodePageToken(q.kind, q.after ?? '')));
        continue;
      }
      const page = matchOne(index, q, Math.min(config.OSV_BATCH_PAGE_SIZE, budgetLeft), deadline);
      budgetLeft -= page.records.length;
      items.push(write(page, token(q, page.cursor)));
    }
    return items;
  }

  return {
    // Without a form every element is an object (see `element`).
    query: (request, options) => query(request, undefined, options) as Promise<VulnerabilityListJson>,
    queryEncoded: (request, form, options) => query(request, form, options),

    async queryBatch(request, options) {
      const results = await queryBatch(request, options, (page, token) => {
        const item: BatchResultJson = {};
        // Batch hydration is only `{id, modified}`, answered from memory (§3).
        if (page !== undefined && page.records.length > 0) item.vulns = page.vulns.map((v) => ({ id: v.id, modified: v.modified }));
        if (token !== undefined) item.next_page_token = token;
        return item;
      });
      return results.length === 0 ? {} : { results };
    },
    async queryBatchEncoded(request, form, options) {
      // Each item written from the index's bytes (osv.batch-answer.ts), the same bytes as the JSON above converted;
      // the items of one answer share a few buffers.
      const arena = new ByteArena();
      const results = await queryBatch(request, options, (page, token) =>
        page?.index === undefined
          ? encodeBatchResult(token === undefined ? {} : { next_page_token: token }, form)
          : encodeBatchItem(page.index, page.records, token, form, arena),
      );
      return results.length === 0 ? {} : { results };
    },

    async getVuln(request) {
      const id = parseVulnId(request);
      let found;
      try {
        found = await findRecord(db, id);
      } catch (error) {
        throw new AppError('internal', 'error getting vulnerability', { cause: error });
      }
      if (found !== undefined) return JSON.parse(found.json) as VulnJson;
      let group: string[];
      try {
        group = await aliasGroup(db, id);
      } catch (error) {
        throw new AppError('internal', 'error getting vulnerability', { cause: error });
      }
      if (group.length === 0) throw new AppError('not_found', 'Vulnerability not found');
      throw new AppError('not_found', `Vulnerability not found, but the following aliases were: ${group.join(' ')}`);
    },
  };
}

/** Parsed records kept (about 5 KB of JSON each, and what the RPC layer keeps beside each: a few tens of MB). */
const RECORD_CACHE_SIZE = 4000;

/**
 * The parsed record for its stored JSON text, the same object while the text is unchanged (a refresh that
 * modifies a record changes its text), least recently used ones dropped first. The objects are shared between
 * calls and never changed, so the RPC layer may keep their converted forms beside them (`sharedElements`).
 */
function createRecordCache(size: number): (id: string, json: string) => VulnJson {
  const entries = new LRUCache<string, { json: string; record: VulnJson }>({ max: size });
  return (id, json) => {
    const hit = entries.get(id);
    if (hit !== undefined && hit.json === json) return hit.record;
    const entry = { json, record: JSON.parse(json) as VulnJson };
    entries.set(id, entry);
    return entry.record;
  };
}

/** Alias groups are bounded like OSV.dev's, which drops groups that grow unreasonably large. */
const MAX_ALIAS_GROUP = 1000;

/**
 * The alias group of an id (§5): every id connected to it through `aliases` of stored records, transitively,
 * without the id itself, in byte order. Empty when no record names it.
 */
async function aliasGroup(db: Kysely<OsvTables>, id: string): Promise<string[]> {
  const seen = new Set<string>([id]);
  let frontier = [id];
  while (frontier.length > 0 && seen.size < MAX_ALIAS_GROUP) {
    const next: string[] = [];
    for (const edge of await aliasEdges(db, frontier)) {
      for (const node of [edge.alias, edge.vuln_id]) {
        if (!seen.has(node)) {
          seen.add(node);
          next.push(node);
        }
      }
    }
    frontier = next;
  }
  seen.delete(id);
  return [...seen].sort(compareIds);
}
