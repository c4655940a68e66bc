// Paged matching over the index (osv-facts.md §4.2): the rows of the queried package in id order judged by a
// RowMatcher, a record matching when any of its rows does and each id returned once, pages that stop at the page
// size or the deadline with a cursor, string-mode lookups for large packages, and commit queries.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { comparatorFor } from './ecosystems/index.ts';
import { compareIds, firstAfter, listCaches, type CorpusIndex, type IndexRow, type VulnEntry } from './osv.index.ts';
import { cacheFor, fuzzyForms, type RowMatcher } from './osv.matcher.ts';
import { eventVersionText } from './osv.rows.ts';

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
  vulns: VulnEntry[];
  /**
   * Where the next page starts (ids after it), when more may remain: after a full page with at least one more
   * match, or when the deadline stopped matching (then possibly with no vulns at all). Undefined when done.
   */
  cursor: string | undefined;
  /** True when the deadline cut the page short. */
  timedOut: boolean;
}

const DEADLINE_CHECK_EVERY = 256;

/** Lists at least this long get a string-mode lookup (smaller ones are scanned). */
const STRING_INDEX_MIN_ROWS = 64;

/** Positions of the rows of one list by exact version, normalised tag and canonical form. */
interface StringIndex {
  exact: Map<string, number[]>;
  tag: Map<string, number[]>;
  canonical: Map<string, number[]>;
}

function addPosition(map: Map<string, number[]>, key: string, position: number): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [position]);
  else if (list[list.length - 1] !== position) list.push(position);
}

function stringIndexOf(rows: readonly IndexRow[]): StringIndex {
  const cached = listCaches.get(rows) as StringIndex | undefined;
  if (cached !== undefined) return cached;
  const index: StringIndex = { exact: new Map(), tag: new Map(), canonical: new Map() };
  rows.forEach((row, i) => {
    if (row.versions === null || row.versions.length === 0) return;
    for (const v of row.versions) addPosition(index.exact, v, i);
    const forms = fuzzyForms(row);
    for (const t of forms.tags) addPosition(index.tag, t, i);
    for (const c of forms.canonical) addPosition(index.canonical, c, i);
  });
  listCaches.set(rows, index);
  return index;
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
 * comparator's cache (a package of a few hundred records took 3–5 ms more on its first query than on the next).
 * Lists of ecosystems with a comparator are in string mode only for unparseable versions and build their lookup
 * on first use.
 */
export async function warmLookups(index: CorpusIndex, signal?: AbortSignal): Promise<WarmReport> {
  const report: WarmReport = { lookups: 0, parsedLists: 0 };
  let sliceStart = performance.now();
  for (const [key, rows] of index.listsOfAtLeast(STRING_INDEX_MIN_ROWS)) {
    if (signal?.aborted) break;
    if (key === 'GIT' || comparatorFor(key) === undefined) {
      if (listCaches.has(rows)) continue;
      stringIndexOf(rows);
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
function parseRowVersions(rows: readonly IndexRow[]): void {
  for (const row of rows) {
    const order = row.eco.order;
    if (order === undefined) continue;
    const cache = cacheFor(order);
    for (const v of row.versions ?? []) cache.parse(v);
    if (row.types === null || row.values === null) continue;
    for (let i = 0; i < row.values.length; i++) cache.parse(eventVersionText(row.types[i] as string, row.values[i] as string));
  }
}

/** Work between yields while warming lookups: short enough not to hold queries up noticeably. */
const WARM_SLICE_MS = 5;

/** Ascending positions ≥ `from` of the rows that can match in string mode. */
function stringCandidates(rows: readonly IndexRow[], matcher: RowMatcher, from: number): number[] {
  const index = stringIndexOf(rows);
  const merged = new Set<number>();
  for (const list of [index.exact.get(matcher.text()), index.tag.get(matcher.tag()), index.canonical.get(matcher.canonical())]) {
    for (const p of list ?? []) if (p >= from) merged.add(p);
  }
  return [...merged].sort((a, b) => a - b);
}

/** Matches a package query (§4.2): `rows` are the candidate rows in id order. */
export function matchRows(rows: readonly IndexRow[] | undefined, matcher: RowMatcher, limits: PageLimits): MatchPage {
  const vulns: VulnEntry[] = [];
  if (rows === undefined) return { vulns, cursor: undefined, timedOut: false };
  const start = firstAfter(rows, limits.after);
  // In string mode a large package is looked up by version instead of scanned; the rows skipped cannot match.
  const positions = matcher.stringOnly() && rows.length >= STRING_INDEX_MIN_ROWS ? stringCandidates(rows, matcher, start) : undefined;
  const count = positions === undefined ? rows.length - start : positions.length;
  let lastMatched: VulnEntry | undefined;
  let checks = 0;
  for (let k = 0; k < count; k++) {
    const i = positions === undefined ? start + k : (positions[k] as number);
    const row = rows[i] as IndexRow;
    if (row.vuln === lastMatched) continue;
    if (++checks % DEADLINE_CHECK_EVERY === 0 && limits.now() > limits.deadline) {
      // Every record before this row's one was judged (matched ones are in `vulns`), so the next page starts
      // after the last of them; '' when nothing was judged yet (the client starts over).
      return { vulns, cursor: judgedBefore(rows, i, start) ?? limits.after ?? '', timedOut: true };
    }
    if (!matcher.matches(row)) continue;
    if (vulns.length === limits.pageSize) {
      // A further match exists: the page is full and the client should ask for the next one.
      return { vulns, cursor: (vulns[vulns.length - 1] as VulnEntry).id, timedOut: false };
    }
    vulns.push(row.vuln);
    lastMatched = row.vuln;
  }
  return { vulns, cursor: undefined, timedOut: false };
}

/** The id of the last record whose rows all lie before position `i` (and at or after `start`). */
function judgedBefore(rows: readonly IndexRow[], i: number, start: number): string | undefined {
  const current = (rows[i] as IndexRow).vuln;
  let q = i - 1;
  while (q >= start && (rows[q] as IndexRow).vuln === current) q--;
  return q >= start ? (rows[q] as IndexRow).vuln.id : undefined;
}

/** Matches a commit query: live records whose GIT ranges name the commit, in id order, paged the same way. */
export function matchCommit(index: CorpusIndex, commit: string, limits: PageLimits): MatchPage {
  const all = index.commitVulns(commit) ?? [];
  const vulns: VulnEntry[] = [];
  let start = 0;
  if (limits.after !== undefined) {
    const after = limits.after;
    while (start < all.length && compareIds((all[start] as VulnEntry).id, after) <= 0) start++;
  }
  for (let i = start; i < all.length; i++) {
    if (vulns.length === limits.pageSize) return { vulns, cursor: (vulns[vulns.length - 1] as VulnEntry).id, timedOut: false };
    vulns.push(all[i] as VulnEntry);
  }
  return { vulns, cursor: undefined, timedOut: false };
}
