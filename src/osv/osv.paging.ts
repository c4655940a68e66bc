// Paged matching over the index (osv-facts.md §4.2): the rows of the queried package in id order judged by a
// RowMatcher, a record matching when any of its rows does and each id returned once, pages that stop at the page
// size or the deadline with a cursor, string-mode lookups for large packages, and commit queries.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { comparatorFor } from './ecosystems/index.ts';
import { KIND_V, type CorpusIndex, type RowList, type VulnEntry } from './osv.index.ts';
import { versionForms, type RowMatcher } from './osv.matcher.ts';

/** Limits of one page of one query. */
export interface PageLimits {
  /** At most this many ids (3000 single, 1000 per batch item). */
  pageSize: number;
  /** Only ids after this one (the page token's cursor). */
  after: string | undefined;
  /** Epoch ms after which matching stops and returns what it has (§3: partial page plus token). */
  deadline: number;
  now: () => number;
}

export interface MatchPage {
  /** The matched records' numbers in the index, in id order (what the service answers from). */
  readonly records: readonly number[];
  /** The index the record numbers belong to (undefined for an empty page). */
  readonly index: CorpusIndex | undefined;
  /** The matched records as objects (made on first use; the service reads `records` instead). */
  readonly vulns: readonly VulnEntry[];
  /**
   * Where the next page starts (ids after it), when more may remain: after a full page with at least one more
   * match, or when the deadline stopped matching (then possibly with no vulns at all). Undefined when done.
   */
  readonly cursor: string | undefined;
  /** True when the deadline cut the page short. */
  readonly timedOut: boolean;
}

class Page implements MatchPage {
  private entries: VulnEntry[] | undefined;
  constructor(
    readonly index: CorpusIndex | undefined,
    readonly records: number[],
    readonly cursor: string | undefined,
    readonly timedOut: boolean,
  ) {}

  get vulns(): readonly VulnEntry[] {
    const index = this.index;
    return (this.entries ??= index === undefined ? [] : this.records.map((rec) => index.entry(rec)));
  }
}

/** A page without matches. */
export const EMPTY_PAGE: MatchPage = new Page(undefined, [], undefined, false);

const DEADLINE_CHECK_EVERY = 256;

/** Lists at least this long get a string-mode lookup (smaller ones are scanned). */
const STRING_INDEX_MIN_ROWS = 64;

/**
 * Positions in one list by exact version, normalised tag and canonical form, as sorted `stringId * 2^21 + position`
 * numbers (flat, so the lookups of large packages are no more for the collector than the index itself).
 */
interface StringIndex {
  stamp: number;
  exact: Float64Array;
  tag: Float64Array;
  canonical: Float64Array;
}

/** Positions fit in 21 bits; longer lists are scanned. */
const POSITION_BITS = 2 ** 21;

/** Lookups by list number; an entry whose stamp is not its list's current one is stale. */
const lookups = new WeakMap<CorpusIndex, Map<number, StringIndex>>();

function lookupOf(rows: RowList, build: boolean): StringIndex | undefined {
  const { index, list } = rows;
  if (list === -1 || rows.length >= POSITION_BITS) return undefined;
  let byList = lookups.get(index);
  const known = byList?.get(list);
  if (known !== undefined && known.stamp === index.listStamp[list]) return known;
  if (!build) return undefined;
  const exact: number[] = [];
  const tag: number[] = [];
  const canonical: number[] = [];
  for (let i = 0; i < rows.length; i++) {
    const row = rows.rows[i]!;
    if (index.rowKind[row] !== KIND_V) continue;
    index.ensureForms(row, versionForms);
    const start = index.rowItem[row]!;
    for (let k = start; k < start + index.rowItemCount[row]!; k++) {
      exact.push(index.itemStr[k]! * POSITION_BITS + i);
      tag.push(index.itemTag[k]! * POSITION_BITS + i);
      canonical.push(index.itemCanon[k]! * POSITION_BITS + i);
    }
  }
  const sorted = (a: number[]) => Float64Array.from(a).sort();
  const lookup = { stamp: index.listStamp[list]!, exact: sorted(exact), tag: sorted(tag), canonical: sorted(canonical) };
  if (byList === undefined) {
    byList = new Map();
    lookups.set(index, byList);
  }
  byList.set(list, lookup);
  return lookup;
}

/** Adds the positions ≥ `from` filed under string id `id` in `keys` to `out`. */
function positionsOf(keys: Float64Array, id: number, from: number, out: Set<number>): void {
  if (id < 0) return;
  const low = id * POSITION_BITS + from;
  const high = (id + 1) * POSITION_BITS;
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < low) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < keys.length && keys[i]! < high; i++) out.add(keys[i]! - id * POSITION_BITS);
}

/** What `warmLookups` did: string-mode lookups built, and large lists whose versions it parsed. */
export interface WarmReport {
  lookups: number;
  parsedLists: number;
}

/**
 * Prepares, in slices between which the event loop runs, what the first query of a large package (64 rows or
 * more) would otherwise pay for: in GIT and ecosystems without a comparator, the string-mode lookup (a list of
 * 25,000 rows takes about 200 ms to build); elsewhere, the parsed event and listed versions of its rows in the
 * comparator's cache (bounded: at scale this keeps the most recently warmed packages only).
 * Lists of ecosystems with a comparator are in string mode only for unparseable versions and build their lookup
 * on first use.
 */
export async function warmLookups(index: CorpusIndex, signal?: AbortSignal): Promise<WarmReport> {
  const report: WarmReport = { lookups: 0, parsedLists: 0 };
  let sliceStart = performance.now();
  for (const [key, rows] of index.listsOfAtLeast(STRING_INDEX_MIN_ROWS)) {
    if (signal?.aborted) break;
    if (key === 'GIT' || comparatorFor(key) === undefined) {
      if (lookupOf(rows, false) !== undefined) continue;
      lookupOf(rows, true);
      report.lookups++;
    } else {
      parseRowVersions(rows);
      report.parsedLists++;
    }
    if (performance.now() - sliceStart > WARM_SLICE_MS) {
      await yieldToEventLoop();
      sliceStart = performance.now();
    }
  }
  return report;
}

/** Puts the versions and event values of `rows` in their comparators' parse caches. */
function parseRowVersions(rows: RowList): void {
  const index = rows.index;
  for (let i = 0; i < rows.length; i++) {
    const row = rows.rows[i]!;
    const order = index.ecosystems[index.rowEco[row]!]!.order;
    if (order === undefined) continue;
    const cache = index.parseCache(order);
    const start = index.rowItem[row]!;
    for (let k = start; k < start + index.rowItemCount[row]!; k++) cache.parse(index.itemStr[k]!);
  }
}

/** Work between yields while warming lookups: short enough not to hold queries up noticeably. */
const WARM_SLICE_MS = 5;

/** Ascending positions ≥ `from` of the rows that can match in string mode (undefined: scan them all). */
function stringCandidates(rows: RowList, matcher: RowMatcher, from: number): number[] | undefined {
  const lookup = lookupOf(rows, true);
  if (lookup === undefined) return undefined;
  const strings = rows.index.strings;
  const merged = new Set<number>();
  positionsOf(lookup.exact, strings.find(matcher.text()), from, merged);
  positionsOf(lookup.tag, strings.find(matcher.tag()), from, merged);
  positionsOf(lookup.canonical, strings.find(matcher.canonical()), from, merged);
  return [...merged].sort((a, b) => a - b);
}

/** Matches a package query (§4.2): `rows` are the candidate rows in id order. */
export function matchRows(rows: RowList | undefined, matcher: RowMatcher, limits: PageLimits): MatchPage {
  if (rows === undefined) return EMPTY_PAGE;
  const { index, rows: list } = rows;
  const records: number[] = [];
  const start = index.firstAfter(list, limits.after);
  // In string mode a large package is looked up by version instead of scanned; the rows skipped cannot match.
  const positions = rows.length >= STRING_INDEX_MIN_ROWS && matcher.stringOnly(index) ? stringCandidates(rows, matcher, start) : undefined;
  const count = positions === undefined ? list.length - start : positions.length;
  let lastMatched = -1;
  let checks = 0;
  for (let k = 0; k < count; k++) {
    const i = positions === undefined ? start + k : positions[k]!;
    const row = list[i]!;
    const rec = index.rowRec[row]!;
    if (rec === lastMatched) continue;
    if (++checks % DEADLINE_CHECK_EVERY === 0 && limits.now() > limits.deadline) {
      // Every record before this row's one was judged (matched ones are in `records`), so the next page starts
      // after the last of them; '' when nothing was judged yet (the client starts over).
      return new Page(index, records, judgedBefore(rows, i, start) ?? limits.after ?? '', true);
    }
    if (!matcher.matchesAt(index, row)) continue;
    if (records.length === limits.pageSize) {
      // A further match exists: the page is full and the client should ask for the next one.
      return new Page(index, records, index.recordId(records[records.length - 1]!), false);
    }
    records.push(rec);
    lastMatched = rec;
  }
  return new Page(index, records, undefined, false);
}

/** The id of the last record whose rows all lie before position `i` (and at or after `start`). */
function judgedBefore(rows: RowList, i: number, start: number): string | undefined {
  const { index, rows: list } = rows;
  const current = index.rowRec[list[i]!];
  let q = i - 1;
  while (q >= start && index.rowRec[list[q]!] === current) q--;
  return q >= start ? index.recordId(index.rowRec[list[q]!]!) : undefined;
}

/** Matches a commit query: live records whose GIT ranges name the commit, in id order, paged the same way. */
export function matchCommit(index: CorpusIndex, commit: string, limits: PageLimits): MatchPage {
  const all = index.commitRecords(commit);
  if (all === undefined) return EMPTY_PAGE;
  const records: number[] = [];
  for (let i = index.firstAfter(all, limits.after, true); i < all.length; i++) {
    if (records.length === limits.pageSize) return new Page(index, records, index.recordId(records[records.length - 1]!), false);
    records.push(all[i]!);
  }
  return new Page(index, records, undefined, false);
}
