// Deciding whether one index row is "affected" the way OSV.dev does (osv-facts.md §4.2, `vulnerability_matching.go`):
// no version → every row; otherwise the ecosystem's comparator (versions list first, then the reverse walk over the
// sorted events), or string and fuzzy tag matching where there is no comparator or the version does not parse.
// Walking a package's rows page by page is osv.paging.ts.
import { comparatorFor, type VersionOrder } from './ecosystems/index.ts';
import type { FuzzyForms, IndexRow } from './osv.index.ts';
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

/** A row's versions as normalised tags and canonical forms, computed once per row. */
export function fuzzyForms(row: IndexRow): FuzzyForms {
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
export class ParseCache {
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

/** The process-wide parse cache of a comparator. */
export function cacheFor(order: VersionOrder): ParseCache {
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
    keyed.sort(
      (a, b) => order.compare(a.x, b.x) || (TYPE_RANK[types[a.i] as string] as number) - (TYPE_RANK[types[b.i] as string] as number),
    );
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
