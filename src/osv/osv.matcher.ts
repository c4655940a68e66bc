// Deciding whether one index row is "affected" the way OSV.dev does (osv-facts.md §4.2, `vulnerability_matching.go`):
// no version → every row; otherwise the ecosystem's comparator (versions list first, then the reverse walk over the
// sorted events), or string and fuzzy tag matching where there is no comparator or the version does not parse.
// Walking a package's rows page by page is osv.paging.ts.
//
// Two forms of the same rules: `matchesAt` judges a row of the flat index (osv.index.ts), which is what the service
// runs; `matches` judges a plain row object built from the stored row data (`plainRow`), the reference the
// differential tests hold the index to (test/osv/osv.flat-index.test.ts).
import { comparatorFor, type VersionOrder } from './ecosystems/index.ts';
import { KIND_R, KIND_V, type CorpusIndex, type EcoInfo, type IdParseCache } from './osv.index.ts';
import { eventVersionText, normalizeRepo, type IndexRowData, type RowKind } from './osv.rows.ts';
import { keyOf } from './osv.strings.ts';

/** Fuzzy forms of a plain row's versions (string mode, §4.2 step 7). */
export interface FuzzyForms {
  readonly tags: ReadonlySet<string>;
  readonly canonical: ReadonlySet<string>;
}

/** One index row as a plain object: the reference form of `matches`. */
export interface PlainRow {
  readonly eco: { readonly name: string; readonly order: VersionOrder | undefined };
  readonly name: string;
  readonly kind: RowKind;
  readonly coarseMin: string | null;
  readonly coarseMax: string | null;
  readonly types: string | null;
  readonly values: readonly string[] | null;
  readonly versions: readonly string[] | null;
  fuzzy: FuzzyForms | undefined;
}

/** The plain row of stored row data. */
export function plainRow(data: IndexRowData): PlainRow {
  return {
    eco: { name: data.ecosystem, order: comparatorFor(data.ecosystem) },
    name: data.name,
    kind: data.kind,
    coarseMin: data.coarseMin,
    coarseMax: data.coarseMax,
    types: data.types ?? null,
    values: data.values ?? null,
    versions: data.versions ?? null,
    fuzzy: undefined,
  };
}

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

/** The normalised tag and canonical form of each version of a row (GIT tags without their repository's prefix). */
export function versionForms(
  versions: readonly string[],
  rowName: string,
  eco: { readonly name: string },
): { tags: string[]; canonical: string[] } {
  const tags = eco.name === 'GIT' ? stripRepoPrefix(versions, rowName) : versions;
  return { tags: tags.map(normalizeTag), canonical: tags.map(canonicalizeVersion) };
}

/** A plain row's versions as normalised tags and canonical forms, computed once per row. */
function fuzzyForms(row: PlainRow): FuzzyForms {
  if (row.fuzzy !== undefined) return row.fuzzy;
  const { tags, canonical } = versionForms(row.versions ?? [], row.name, row.eco);
  const forms: FuzzyForms = { tags: new Set(tags), canonical: new Set(canonical) };
  row.fuzzy = forms;
  return forms;
}

/** String mode: exact membership, then the fuzzy forms. Events are not used (§4.2 step 7). */
function stringMatch(row: PlainRow, version: string, tag: string, canonical: string): boolean {
  const versions = row.versions;
  if (versions === null || versions.length === 0) return false;
  if (versions.includes(version)) return true;
  const forms = fuzzyForms(row);
  return forms.tags.has(tag) || forms.canonical.has(canonical);
}

// ---------------------------------------------------------------------------------------------------------------
// Parsed-version cache

/** Bounded: the parsed forms are heap objects a full collection marks (the flat index has its own, osv.index.ts). */
const CACHE_LIMIT = 16_384;

/**
 * Parsed versions per comparator, for plain rows (`matches`), so the events and versions of a package are parsed
 * once rather than on every row. Two generations approximate LRU: when the young map is full it becomes the old one.
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

/** Parses versions for one comparator: by text (plain rows) or by the index's string id (flat rows). */
interface Parser<K> {
  parse(key: K): unknown;
}

/** A query version prepared for one comparator. */
interface Prepared<K> {
  order: VersionOrder;
  cache: Parser<K>;
  parsed: unknown;
  coarse: string | undefined;
}

/** `Prepared` for the flat index: the coarse key as bytes, compared with the stored bounds in place. */
interface FlatPrepared extends Prepared<number> {
  coarseKey: Uint8Array | undefined;
}

/** Everything about a package query that does not depend on the row, computed once. */
export interface VersionQuery {
  /** The query's ecosystem ('' = every ecosystem, each row judged by its own comparator). */
  ecosystem: string;
  /** '' = no version: every row of the package matches. */
  version: string;
}

/** The query version's string ids in one index (-1: not in the index, so no stored version equals it). */
interface QueryIds {
  exact: number;
  tag: number;
  canonical: number;
  /** The table size when tag and canonical were looked up (fuzzy forms are added to it on first use). */
  size: number;
}

export class RowMatcher {
  private readonly version: string;
  private readonly any: boolean;
  private readonly git: boolean;
  private readonly crossEcosystem: boolean;
  /** §4.2 step 6: a bare `Alpine` or `Ubuntu` query matches enumerated versions only. */
  private readonly versionsOnly: boolean;
  /** The query's comparator (undefined: string mode, or per row when the ecosystem is empty). */
  private readonly order: VersionOrder | undefined;
  private readonly perOrder = new Map<VersionOrder, Prepared<string> | null>();
  private flatIndex: CorpusIndex | undefined;
  private readonly flatPerOrder = new Map<VersionOrder, FlatPrepared | null>();
  private ids: QueryIds | undefined;
  private tagForm: string | undefined;
  private canonicalForm: string | undefined;

  constructor(query: VersionQuery) {
    this.version = query.version;
    this.any = query.version === '';
    this.git = query.ecosystem === 'GIT';
    this.crossEcosystem = query.ecosystem === '';
    this.versionsOnly = query.ecosystem === 'Alpine' || query.ecosystem === 'Ubuntu';
    this.order = this.git || this.crossEcosystem || this.any ? undefined : comparatorFor(query.ecosystem);
  }

  private prepare(order: VersionOrder): Prepared<string> | null {
    const known = this.perOrder.get(order);
    if (known !== undefined) return known;
    const cache = cacheFor(order);
    const parsed = cache.parse(this.version);
    const prepared = parsed === undefined ? null : { order, cache, parsed, coarse: order.coarse?.(parsed) };
    this.perOrder.set(order, prepared);
    return prepared;
  }

  private flatPrepare(index: CorpusIndex, order: VersionOrder): FlatPrepared | null {
    if (index !== this.flatIndex) {
      this.flatIndex = index;
      this.flatPerOrder.clear();
      this.ids = undefined;
    }
    const known = this.flatPerOrder.get(order);
    if (known !== undefined) return known;
    const cache: IdParseCache = index.parseCache(order);
    // A version the index holds is parsed through its cache (a popular version is parsed once).
    const id = index.strings.find(this.version);
    const parsed = id === -1 ? order.parse(this.version) : cache.parse(id);
    let prepared: FlatPrepared | null = null;
    if (parsed !== undefined) {
      const coarse = order.coarse?.(parsed);
      prepared = { order, cache, parsed, coarse, coarseKey: coarse === undefined ? undefined : keyOf(coarse) };
    }
    this.flatPerOrder.set(order, prepared);
    return prepared;
  }

  private stringMatch(row: PlainRow): boolean {
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
  stringOnly(index?: CorpusIndex): boolean {
    if (this.any || this.crossEcosystem) return false;
    if (this.git || this.order === undefined) return true;
    return (index === undefined ? this.prepare(this.order) : this.flatPrepare(index, this.order)) === null;
  }

  /** Whether one plain row matches the query. */
  matches(row: PlainRow): boolean {
    if (this.any) return true;
    if (this.git) return this.stringMatch(row);
    const order = this.crossEcosystem ? row.eco.order : this.order;
    const p = order === undefined ? undefined : (this.prepare(order) ?? undefined);
    if (p === undefined) return this.stringMatch(row);
    const sameOrder = row.eco.order === p.order;
    // Coarse prefilter (§4.2 step 6): only where the row's bounds were computed with this comparator.
    if (sameOrder && row.coarseMin !== null && p.coarse !== undefined) {
      if (p.coarse < row.coarseMin || p.coarse > (row.coarseMax as string)) return false;
    }
    if (row.versions !== null && versionsContain(row.versions.length, (i) => row.versions![i]!, p, sameOrder)) return true;
    if (this.versionsOnly) return false;
    if (row.types !== null && row.values !== null) {
      const { types, values } = row;
      return eventsAffect(
        values.length,
        (i) => types.charCodeAt(i),
        (i) => eventVersionText(types[i]!, values[i]!),
        p,
        sameOrder,
      );
    }
    return false;
  }

  /** Whether row number `row` of the flat index matches the query: `matches` over the index's columns. */
  matchesAt(index: CorpusIndex, row: number): boolean {
    if (this.any) return true;
    if (this.git) return this.stringMatchAt(index, row);
    const eco: EcoInfo = index.ecosystems[index.rowEco[row]!]!;
    const order = this.crossEcosystem ? eco.order : this.order;
    const p = order === undefined ? undefined : (this.flatPrepare(index, order) ?? undefined);
    if (p === undefined) return this.stringMatchAt(index, row);
    const sameOrder = eco.order === p.order;
    const strings = index.strings;
    const min = index.rowCoarseMin[row]!;
    if (sameOrder && min !== -1 && p.coarseKey !== undefined) {
      if (strings.compareKey(min, p.coarseKey) > 0 || strings.compareKey(index.rowCoarseMax[row]!, p.coarseKey) < 0) return false;
    }
    const kind = index.rowKind[row];
    const start = index.rowItem[row]!;
    const count = index.rowItemCount[row]!;
    const items = index.itemStr;
    if (kind === KIND_V && versionsContain(count, (i) => items[start + i]!, p, sameOrder)) return true;
    if (this.versionsOnly) return false;
    if (kind === KIND_R) {
      const types = index.itemType;
      return eventsAffect(
        count,
        (i) => types[start + i]!,
        (i) => items[start + i]!,
        p,
        sameOrder,
      );
    }
    return false;
  }

  /** String mode on a flat row: the same membership and fuzzy tests as `stringMatch`, on string ids. */
  private stringMatchAt(index: CorpusIndex, row: number): boolean {
    if (index.rowKind[row] !== KIND_V) return false;
    const start = index.rowItem[row]!;
    const end = start + index.rowItemCount[row]!;
    if (end === start) return false;
    if (index !== this.flatIndex) {
      this.flatIndex = index;
      this.flatPerOrder.clear();
      this.ids = undefined;
    }
    const strings = index.strings;
    const ids = (this.ids ??= { exact: strings.find(this.version), tag: -1, canonical: -1, size: -1 });
    for (let i = start; i < end; i++) if (index.itemStr[i] === ids.exact) return true;
    index.ensureForms(row, versionForms);
    if (ids.size !== strings.size) {
      // Forms interned since the last look-up may include the query's own.
      ids.tag = strings.find(this.tag());
      ids.canonical = strings.find(this.canonical());
      ids.size = strings.size;
    }
    for (let i = start; i < end; i++) if (index.itemTag[i] === ids.tag || index.itemCanon[i] === ids.canonical) return true;
    return false;
  }
}

/**
 * Versions list (§4.2 step 6): a match when a listed version parses and compares equal. Rows keep their parseable
 * versions sorted by their own comparator, so with that comparator this is a binary search.
 */
function versionsContain<K>(n: number, key: (i: number) => K, p: Prepared<K>, sorted: boolean): boolean {
  const { order, cache, parsed } = p;
  if (!sorted) {
    for (let i = 0; i < n; i++) {
      const x = cache.parse(key(i));
      if (x !== undefined && order.compare(x, parsed) === 0) return true;
    }
    return false;
  }
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const x = cache.parse(key(mid));
    // Unparseable versions were stored after all parseable ones: they count as "above".
    const c = x === undefined ? 1 : order.compare(x, parsed);
    if (c === 0) return true;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

const CODE_I = 'i'.charCodeAt(0);
const CODE_A = 'a'.charCodeAt(0);
/** Tie order of event types when a row is sorted for another comparator (letter code → rank). */
const TYPE_RANK = new Map<number, number>([
  [CODE_I, 0],
  [CODE_A, 1],
  ['f'.charCodeAt(0), 2],
  ['l'.charCodeAt(0), 3],
]);

/**
 * Events (§4.2 step 6): walk the sorted events from the last to the first, skip those that do not parse, and let
 * the first event ≤ v decide: `introduced` affects; `last_affected` affects only when equal; `fixed` and `limit`
 * do not. No event ≤ v: not affected. `type(i)` is the event's letter code, `key(i)` what the parser reads.
 */
function eventsAffect<K>(n: number, type: (i: number) => number, key: (i: number) => K, p: Prepared<K>, sorted: boolean): boolean {
  const { order, cache, parsed } = p;
  let indexes: number[] | undefined;
  if (!sorted) {
    // The row was sorted with another comparator (a query ecosystem of another family): sort for this one.
    const keyed: { i: number; x: unknown }[] = [];
    for (let i = 0; i < n; i++) {
      const x = cache.parse(key(i));
      if (x !== undefined) keyed.push({ i, x });
    }
    keyed.sort((a, b) => order.compare(a.x, b.x) || TYPE_RANK.get(type(a.i))! - TYPE_RANK.get(type(b.i))!);
    indexes = keyed.map((k) => k.i);
  }
  const count = indexes === undefined ? n : indexes.length;
  for (let k = count - 1; k >= 0; k--) {
    const i = indexes === undefined ? k : indexes[k]!;
    const x = cache.parse(key(i));
    if (x === undefined) continue;
    const c = order.compare(x, parsed);
    if (c > 0) continue;
    const t = type(i);
    if (t === CODE_I) return true;
    if (t === CODE_A) return c === 0;
    return false;
  }
  return false;
}
