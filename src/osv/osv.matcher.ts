// Deciding "affected" the way OSV.dev does (osv-facts.md §4.2, `vulnerability_matching.go`): rows of the queried
// package in id order; no version → every row; otherwise the ecosystem's comparator (versions list first, then the
// reverse walk over the sorted events), or string and fuzzy tag matching where there is no comparator or the
// version does not parse. A record matches when any of its rows does; each id is returned once.
import { comparatorFor, type VersionOrder } from './ecosystems/index.ts';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { compareIds, firstAfter, listCaches, type CorpusIndex, type FuzzyForms, type IndexRow, type VulnEntry } from './osv.index.ts';
import { eventVersionText, normalizeRepo } from './osv.rows.ts';

// ---------------------------------------------------------------------------------------------------------------
// Fuzzy tag matching (§4.2 step 7)

const TAG_TOKEN = /(?<![A-Za-z])(?:rc|alpha|beta|preview)\d*|\d+/giu;

/**
 * The numeric and pre-release runs of a tag joined with `-` (`v6.0.0-alpha1` → `6-0-0-alpha1`, `22.3rc1` →
 * `22-3-rc1`, `android-10.0.0_r10` → `10-0-0-10`); a leading `.` counts as `0.`; a tag without digits is kept.
 */
export function normalizeTag(tag: string): string {
  const text = /^\.\d/u.test(tag) ? `0${tag}` : tag;
  if (!/\d/u.test(text)) return tag;
  const tokens = text.match(TAG_TOKEN);
  return tokens === null ? tag : tokens.join('-');
}

/** Lower-case, runs of `-`, `_`, `.` as one `.`, without separators or blanks at either end. */
export function canonicalizeVersion(version: string): string {
  return version
    .toLowerCase()
    .replace(/[-_.]+/gu, '.')
    .replace(/^[\s.]+|[\s.]+$/gu, '');
}

/**
 * Removes a leading `<org>-` or `<repo>-` from each tag of a GIT repository (`openj9-0.8.0` and
 * `eclipse-openj9-0.8.0` → `0.8.0` for github.com/eclipse-openj9/openj9), so project names with digits do not
 * disturb `normalizeTag`.
 */
export function stripRepoPrefix(versions: readonly string[], repo: string): string[] {
  if (repo === '') return [...versions];
  const parts = normalizeRepo(repo).split('/').filter(Boolean);
  const repoName = parts.length >= 2 ? (parts[parts.length - 1] as string).toLowerCase() : '';
  const org = parts.length >= 3 ? (parts[parts.length - 2] as string).toLowerCase() : '';
  const prefixes = [org, repoName].filter((p) => p !== '').flatMap((p) => [`${p}-`, `${p}_`]);
  return versions.map((tag) => {
    const lower = tag.toLowerCase();
    for (const prefix of prefixes) if (lower.startsWith(prefix) && tag.length > prefix.length) return tag.slice(prefix.length);
    return tag;
  });
}

function fuzzyForms(row: IndexRow): FuzzyForms {
  if (row.fuzzy !== undefined) return row.fuzzy;
  const versions = row.versions ?? [];
  const tags = row.eco.name === 'GIT' ? stripRepoPrefix(versions, row.name) : versions;
  const forms: FuzzyForms = { tags: new Set(tags.map(normalizeTag)), canonical: new Set(tags.map(canonicalizeVersion)) };
  row.fuzzy = forms;
  return forms;
}

/** String mode: exact membership, then the fuzzy forms. Events are not used (§4.2 step 7). */
function stringMatch(row: IndexRow, version: string, tag: string, canonical: string): boolean {
  const versions = row.versions;
  if (versions === null || versions.length === 0) return false;
  if (versions.includes(version)) return true;
  const forms = fuzzyForms(row);
  return forms.tags.has(tag) || forms.canonical.has(canonical);
}

// ---------------------------------------------------------------------------------------------------------------
// Parsed-version cache

const CACHE_LIMIT = 250_000;

/**
 * Parsed versions per comparator, so the events and versions of popular packages are parsed once rather than on
 * every query. Two generations approximate LRU: when the young map is full it becomes the old one.
 * Hand-written rather than `lru-cache` because this lookup runs for every event and version a query compares (a
 * popular package: thousands per query, a QueryBatch(1000) millions) and the single-Query p99 over gRPC has little
 * margin (README "Benchmarks"): measured on this machine with 20,000 versions and 5M lookups, 27-38 ns per lookup
 * here against 93-140 ns through `LRUCache.get`/`set` with the same bound.
 */
class ParseCache {
  private young = new Map<string, unknown>();
  private old = new Map<string, unknown>();
  constructor(private readonly order: VersionOrder) {}

  parse(version: string): unknown {
    const y = this.young.get(version);
    if (y !== undefined || this.young.has(version)) return y;
    let value = this.old.get(version);
    if (value === undefined && !this.old.has(version)) value = this.order.parse(version);
    if (this.young.size >= CACHE_LIMIT) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(version, value);
    return value;
  }
}

const caches = new Map<VersionOrder, ParseCache>();

function cacheFor(order: VersionOrder): ParseCache {
  let cache = caches.get(order);
  if (cache === undefined) {
    cache = new ParseCache(order);
    caches.set(order, cache);
  }
  return cache;
}

// ---------------------------------------------------------------------------------------------------------------
// Row evaluation

/** A query version prepared for one comparator. */
interface Prepared {
  order: VersionOrder;
  cache: ParseCache;
  parsed: unknown;
  coarse: string | undefined;
}

/** Everything about a package query that does not depend on the row, computed once. */
export interface VersionQuery {
  /** The query's ecosystem ('' = every ecosystem, each row judged by its own comparator). */
  ecosystem: string;
  /** '' = no version: every row of the package matches. */
  version: string;
}

export class RowMatcher {
  private readonly version: string;
  private readonly any: boolean;
  private readonly git: boolean;
  private readonly crossEcosystem: boolean;
  /** §4.2 step 6: a bare `Alpine` or `Ubuntu` query matches enumerated versions only. */
  private readonly versionsOnly: boolean;
  /** The query's comparator mode (undefined: string mode, or per-row when the ecosystem is empty). */
  private readonly prepared: Prepared | undefined;
  private readonly perOrder = new Map<VersionOrder, Prepared | null>();
  private tagForm: string | undefined;
  private canonicalForm: string | undefined;

  constructor(query: VersionQuery) {
    this.version = query.version;
    this.any = query.version === '';
    this.git = query.ecosystem === 'GIT';
    this.crossEcosystem = query.ecosystem === '';
    this.versionsOnly = query.ecosystem === 'Alpine' || query.ecosystem === 'Ubuntu';
    const order = this.git || this.crossEcosystem || this.any ? undefined : comparatorFor(query.ecosystem);
    this.prepared = order === undefined ? undefined : (this.prepare(order) ?? undefined);
  }

  private prepare(order: VersionOrder): Prepared | null {
    const known = this.perOrder.get(order);
    if (known !== undefined) return known;
    const cache = cacheFor(order);
    const parsed = cache.parse(this.version);
    const prepared = parsed === undefined ? null : { order, cache, parsed, coarse: order.coarse?.(parsed) };
    this.perOrder.set(order, prepared);
    return prepared;
  }

  private stringMatch(row: IndexRow): boolean {
    return stringMatch(row, this.version, this.tag(), this.canonical());
  }

  /** The query version as a normalised tag. */
  tag(): string {
    return (this.tagForm ??= normalizeTag(this.version));
  }

  /** The query version in canonical form. */
  canonical(): string {
    return (this.canonicalForm ??= canonicalizeVersion(this.version));
  }

  /** The query version text. */
  text(): string {
    return this.version;
  }

  /**
   * True when every row is judged in string mode (a GIT query, an ecosystem without a comparator, or a version
   * its comparator cannot parse), so only rows listing a matching version can match.
   */
  stringOnly(): boolean {
    return !this.any && !this.crossEcosystem && (this.git || this.prepared === undefined);
  }

  /** Whether one index row matches the query. */
  matches(row: IndexRow): boolean {
    if (this.any) return true;
    if (this.git) return this.stringMatch(row);
    let p: Prepared | undefined;
    if (this.crossEcosystem) {
      const order = row.eco.order;
      p = order === undefined ? undefined : (this.prepare(order) ?? undefined);
    } else {
      p = this.prepared;
    }
    if (p === undefined) return this.stringMatch(row);
    const sameOrder = row.eco.order === p.order;
    // Coarse prefilter (§4.2 step 6): only where the row's bounds were computed with this comparator.
    if (sameOrder && row.coarseMin !== null && p.coarse !== undefined) {
      if (p.coarse < row.coarseMin || p.coarse > (row.coarseMax as string)) return false;
    }
    if (row.versions !== null && versionsContain(row.versions, p, sameOrder)) return true;
    if (this.versionsOnly) return false;
    if (row.types !== null && row.values !== null) return eventsAffect(row.types, row.values, p, sameOrder);
    return false;
  }
}

/**
 * Versions list (§4.2 step 6): a match when a listed version parses and compares equal. Rows keep their parseable
 * versions sorted by their own comparator, so with that comparator this is a binary search.
 */
function versionsContain(versions: readonly string[], p: Prepared, sorted: boolean): boolean {
  const { order, cache, parsed } = p;
  if (!sorted) {
    for (const v of versions) {
      const x = cache.parse(v);
      if (x !== undefined && order.compare(x, parsed) === 0) return true;
    }
    return false;
  }
  let lo = 0;
  let hi = versions.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const x = cache.parse(versions[mid] as string);
    // Unparseable versions were stored after all parseable ones: they count as "above".
    const c = x === undefined ? 1 : order.compare(x, parsed);
    if (c === 0) return true;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

const TYPE_RANK: Record<string, number> = { i: 0, a: 1, f: 2, l: 3 };

/**
 * Events (§4.2 step 6): walk the sorted events from the last to the first, skip those that do not parse, and let
 * the first event ≤ v decide: `introduced` affects; `last_affected` affects only when equal; `fixed` and `limit`
 * do not. No event ≤ v: not affected.
 */
function eventsAffect(types: string, values: readonly string[], p: Prepared, sorted: boolean): boolean {
  const { order, cache, parsed } = p;
  let indexes: number[] | undefined;
  if (!sorted) {
    // The row was sorted with another comparator (a query ecosystem of another family): sort for this one.
    indexes = [];
    const keyed: { i: number; x: unknown }[] = [];
    for (let i = 0; i < values.length; i++) {
      const x = cache.parse(eventVersionText(types[i] as string, values[i] as string));
      if (x !== undefined) keyed.push({ i, x });
    }
    keyed.sort((a, b) => order.compare(a.x, b.x) || (TYPE_RANK[types[a.i] as string] as number) - (TYPE_RANK[types[b.i] as string] as number));
    indexes = keyed.map((k) => k.i);
  }
  const n = indexes === undefined ? values.length : indexes.length;
  for (let k = n - 1; k >= 0; k--) {
    const i = indexes === undefined ? k : (indexes[k] as number);
    const x = cache.parse(eventVersionText(types[i] as string, values[i] as string));
    if (x === undefined) continue;
    const c = order.compare(x, parsed);
    if (c > 0) continue;
    const type = types[i];
    if (type === 'i') return true;
    if (type === 'a') return c === 0;
    return false;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------------------
// Paged matching over the index

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
