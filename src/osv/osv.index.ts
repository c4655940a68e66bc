// The in-memory index every replica serves queries from (osv-facts.md §4.1). It holds only what matching needs:
// per ecosystem key and name, the index rows in ascending id order (so pages are id ranges and a deadline can stop
// anywhere), the `modified` of each live record (QueryBatch answers from memory), and the commit hashes of GIT
// ranges. It is built from the stored index rows at start and then kept current by applying the records an import
// changed (`applyVuln`), without a restart and without a second copy of the whole index.
import { comparatorFor, ecosystemBase, type VersionOrder } from './ecosystems/index.ts';
import type { IndexRowData, RowKind } from './osv.rows.ts';

/** Compares strings in Unicode code point order, which is UTF-8 byte order (SQLite BINARY, PostgreSQL "C"). */
export function compareIds(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (U+D800–DFFF) encode code points above U+FFFF, which sort after U+E000–U+FFFF in code point order.
    if (x >= 0xd800 && x <= 0xdfff && y >= 0xe000) return 1;
    if (y >= 0xd800 && y <= 0xdfff && x >= 0xe000) return -1;
    return x - y;
  }
  return a.length - b.length;
}

/** What the index knows about an ecosystem string: its comparator and the keys its rows are filed under. */
export interface EcoInfo {
  readonly name: string;
  readonly order: VersionOrder | undefined;
  /** The full ecosystem, its base and, for Ubuntu, the variant without `:Pro`/`:LTS` (§4.1), without repeats. */
  readonly keys: readonly string[];
}

/** A live (non-withdrawn) record: its id, `modified`, and the rows it owns. */
export interface VulnEntry {
  readonly id: string;
  modified: string;
  rows: IndexRow[];
  /** Commit hashes of its GIT ranges (null: none, the common case). */
  commits: string[] | null;
}

/** Lazily computed fuzzy forms of a row's versions (string mode, §4.2 step 7). */
export interface FuzzyForms {
  readonly tags: ReadonlySet<string>;
  readonly canonical: ReadonlySet<string>;
}

/** One index row in memory. Event values and versions are shared (interned) strings. */
export interface IndexRow {
  readonly vuln: VulnEntry;
  readonly eco: EcoInfo;
  readonly name: string;
  readonly kind: RowKind;
  readonly coarseMin: string | null;
  readonly coarseMax: string | null;
  readonly types: string | null;
  readonly values: readonly string[] | null;
  readonly versions: readonly string[] | null;
  fuzzy: FuzzyForms | undefined;
}

/**
 * Derived data kept per row list by the matcher (the string-mode lookup of a large package). An entry is dropped
 * whenever its list changes, so it is rebuilt from the current rows on next use.
 */
export const listCaches = new WeakMap<readonly IndexRow[], unknown>();

/** Ubuntu releases are also filed without `:Pro` and `:LTS` (`Ubuntu:Pro:18.04:LTS` → `Ubuntu:18.04`). */
function ecosystemKeys(ecosystem: string): string[] {
  const keys = [ecosystem];
  const base = ecosystemBase(ecosystem);
  if (base !== ecosystem) keys.push(base);
  if (base === 'Ubuntu') {
    const variant = ecosystem
      .split(':')
      .filter((part, i) => i === 0 || (part !== 'Pro' && part !== 'LTS'))
      .join(':');
    if (!keys.includes(variant)) keys.push(variant);
  }
  return keys;
}

function upperBound(list: readonly IndexRow[], id: string): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareIds((list[mid] as IndexRow).vuln.id, id) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function lowerBound(list: readonly IndexRow[], id: string): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareIds((list[mid] as IndexRow).vuln.id, id) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Position of the first row whose id sorts after `id` (the start of the page after a cursor). */
export function firstAfter(list: readonly IndexRow[], id: string | undefined): number {
  return id === undefined ? 0 : upperBound(list, id);
}

/** Statistics for logs and the benchmark. */
export interface IndexStats {
  vulns: number;
  rows: number;
  packages: number;
  commits: number;
}

/**
 * The corpus index. Reads (`packageRows`, `nameRows`, `commitVulns`, `vuln`) are synchronous; so is each
 * `applyVuln`, so a query never sees half of a record's change.
 */
export class CorpusIndex {
  /** Corpus generation this index reflects (osv_corpus.generation when it was last brought up to date). */
  generation = 0;
  private readonly vulns = new Map<string, VulnEntry>();
  private readonly byEco = new Map<string, Map<string, IndexRow[]>>();
  private readonly commits = new Map<string, VulnEntry[]>();
  private readonly ecos = new Map<string, EcoInfo>();
  /** Interned strings of versions, event values and names; dropped after a build (`seal`). */
  private strings: Map<string, string> | undefined = new Map();
  private rowCount = 0;

  /** Rows filed under `ecosystem` (a full ecosystem, a base or an Ubuntu variant) and `name`, in id order. */
  packageRows(ecosystem: string, name: string): readonly IndexRow[] | undefined {
    return this.byEco.get(ecosystem)?.get(name);
  }

  /**
   * Every row with this name in any ecosystem, in id order (queries without an ecosystem, §4.2 step 3). OSV.dev
   * calls these queries unsupported and they are rare, so the list is merged from the per-ecosystem lists on demand
   * instead of keeping a second index by name.
   */
  nameRows(name: string): readonly IndexRow[] | undefined {
    const lists: IndexRow[][] = [];
    for (const ecosystem of this.ecos.keys()) {
      const list = this.byEco.get(ecosystem)?.get(name);
      // Only rows filed under their own full ecosystem, so a row is taken once.
      if (list !== undefined) lists.push(list.filter((row) => row.eco.name === ecosystem));
    }
    if (lists.length === 0) return undefined;
    if (lists.length === 1) return lists[0];
    const rows = lists.flat();
    const order = new Map<IndexRow, number>();
    rows.forEach((row, i) => order.set(row, i));
    // Stable by id: rows of one record keep their order.
    return rows.sort((a, b) => compareIds(a.vuln.id, b.vuln.id) || (order.get(a) as number) - (order.get(b) as number));
  }

  /** Live records whose GIT ranges name this (lower-case) commit, in id order. */
  /** Every row list of at least `minRows` rows filed under an ecosystem key, with that key. */
  *listsOfAtLeast(minRows: number): Generator<[ecosystemKey: string, rows: readonly IndexRow[]]> {
    for (const [key, names] of this.byEco) {
      for (const rows of names.values()) if (rows.length >= minRows) yield [key, rows];
    }
  }

  commitVulns(commit: string): readonly VulnEntry[] | undefined {
    return this.commits.get(commit);
  }

  /** A live record by id. */
  vuln(id: string): VulnEntry | undefined {
    return this.vulns.get(id);
  }

  stats(): IndexStats {
    let packages = 0;
    for (const m of this.byEco.values()) packages += m.size;
    return { vulns: this.vulns.size, rows: this.rowCount, packages, commits: this.commits.size };
  }

  private intern(s: string): string {
    const table = this.strings;
    if (table === undefined) return s;
    const known = table.get(s);
    if (known !== undefined) return known;
    table.set(s, s);
    return s;
  }

  private ecoInfo(ecosystem: string): EcoInfo {
    let info = this.ecos.get(ecosystem);
    if (info === undefined) {
      info = { name: ecosystem, order: comparatorFor(ecosystem), keys: ecosystemKeys(ecosystem) };
      this.ecos.set(ecosystem, info);
    }
    return info;
  }

  /**
   * Replaces everything known about record `id`: `rows` are its stored index rows (empty for a record without
   * packages), or null when the record is withdrawn or gone. Rows are filed in id order, so a build that applies
   * records in ascending id order only ever appends.
   */
  applyVuln(id: string, modified: string, rows: readonly IndexRowData[] | null): void {
    const old = this.vulns.get(id);
    if (old !== undefined) this.removeVuln(old);
    if (rows === null) return;
    const entry: VulnEntry = { id, modified, rows: [], commits: null };
    this.vulns.set(id, entry);
    for (const data of rows) {
      if (data.kind === 'C') {
        (entry.commits ??= []).push(data.name);
        insertSorted(
          getOrCreate(this.commits, data.name, () => []),
          entry,
        );
        continue;
      }
      const eco = this.ecoInfo(data.ecosystem);
      const name = this.intern(data.name);
      const row: IndexRow = {
        vuln: entry,
        eco,
        name,
        kind: data.kind,
        coarseMin: data.coarseMin === null ? null : this.intern(data.coarseMin),
        coarseMax: data.coarseMax === null ? null : this.intern(data.coarseMax),
        types: data.types === undefined ? null : this.intern(data.types),
        values: data.values === undefined ? null : data.values.map((v) => this.intern(v)),
        versions: data.versions === undefined ? null : data.versions.map((v) => this.intern(v)),
        fuzzy: undefined,
      };
      entry.rows.push(row);
      this.rowCount++;
      for (const key of eco.keys)
        insertRow(
          getOrCreate(
            getOrCreate(this.byEco, key, () => new Map<string, IndexRow[]>()),
            name,
            () => [],
          ),
          row,
        );
    }
  }

  private removeVuln(entry: VulnEntry): void {
    this.vulns.delete(entry.id);
    for (const row of entry.rows) {
      for (const key of row.eco.keys) {
        const names = this.byEco.get(key);
        const list = names?.get(row.name);
        if (names === undefined || list === undefined) continue;
        removeRows(list, entry);
        if (list.length === 0) {
          names.delete(row.name);
          if (names.size === 0) this.byEco.delete(key);
        }
      }
      this.rowCount--;
    }
    for (const commit of entry.commits ?? []) {
      const list = this.commits.get(commit);
      if (list === undefined) continue;
      const i = list.indexOf(entry);
      if (i !== -1) list.splice(i, 1);
      if (list.length === 0) this.commits.delete(commit);
    }
    entry.rows = [];
    entry.commits = null;
  }

  /** Starts sharing equal strings between the records applied until `seal()` (a refresh batch). */
  startInterning(): void {
    this.strings ??= new Map();
  }

  /** Ends a bulk build or refresh: the intern table is dropped (kept, it would only grow). */
  seal(): void {
    this.strings = undefined;
  }
}

function getOrCreate<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}

/** Files a row after every row of an id at or below its own (rows of one record keep their order). */
function insertRow(list: IndexRow[], row: IndexRow): void {
  listCaches.delete(list);
  const last = list[list.length - 1];
  if (last === undefined || compareIds(last.vuln.id, row.vuln.id) <= 0) {
    // The same row may be filed twice under one key when two of its keys coincide; keys are deduplicated, but
    // a record can list one package twice, which is two rows and correct.
    list.push(row);
    return;
  }
  list.splice(upperBound(list, row.vuln.id), 0, row);
}

function removeRows(list: IndexRow[], entry: VulnEntry): void {
  listCaches.delete(list);
  const start = lowerBound(list, entry.id);
  let end = start;
  while (end < list.length && (list[end] as IndexRow).vuln === entry) end++;
  if (end > start) list.splice(start, end - start);
}

function insertSorted(list: VulnEntry[], entry: VulnEntry): void {
  const last = list[list.length - 1];
  if (last === undefined || compareIds(last.id, entry.id) < 0) {
    list.push(entry);
    return;
  }
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareIds((list[mid] as VulnEntry).id, entry.id) < 0) lo = mid + 1;
    else hi = mid;
  }
  if (list[lo] !== entry) list.splice(lo, 0, entry);
}
