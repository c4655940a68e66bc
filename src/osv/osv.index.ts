// The in-memory index every replica serves queries from (osv-facts.md §4.1). It holds only what matching needs:
// per ecosystem key and name, the index rows in ascending id order (so pages are id ranges and a deadline can stop
// anywhere), the `modified` of each live record (QueryBatch answers from memory), and the commit hashes of GIT
// ranges. It is built from the stored index rows at start and then kept current by applying the records an import
// changed (`applyVuln`), without a restart and without a second copy of the whole index.
//
// Everything is flat (issue 20): strings are interned into byte tables (osv.strings.ts), records, rows and their
// events and versions are columns of typed arrays, and the row lists of packages are slices of one Int32Array pool.
// A replica of 500,000 records is then a few dozen typed arrays and a few hundred small objects (ecosystems), so a
// full garbage collection has almost nothing to mark, where one object per row, string and list cost 250–450 ms.
import { comparatorFor, ecosystemBase, type VersionOrder } from './ecosystems/index.ts';
import type { IndexRowData } from './osv.rows.ts';
import { eventVersionText } from './osv.rows.ts';
import { growInt32, growUint8, keyOf, PairMap, StringTable } from './osv.strings.ts';

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
  /** The numbers of `keys` in the index's key table. */
  readonly keyNumbers: readonly number[];
}

/** A live (non-withdrawn) record as a query answer names it. */
export interface VulnEntry {
  readonly id: string;
  readonly modified: string;
}

/** Row kinds as stored in `rowKind` (osv.rows.ts RowKind). */
export const KIND_R = 1;
export const KIND_V = 2;
export const KIND_E = 3;
export const KIND_C = 4;
const KIND_CODE = { R: KIND_R, V: KIND_V, E: KIND_E, C: KIND_C } as const;

/** `itemTag`/`itemCanon` of a version whose fuzzy forms were not computed yet (§4.2 step 7, computed on first use). */
export const FORMS_PENDING = -2;

/** The key number of commit lists (lists of record numbers rather than rows). */
const COMMIT_KEY = 0;

/**
 * The rows filed under one ecosystem key and name, in id order: a view of the index's pool (`list` ≥ 0), or a
 * merged copy for queries without an ecosystem (`list` = -1). Valid until the index next changes.
 */
export interface RowList {
  readonly index: CorpusIndex;
  readonly list: number;
  readonly rows: Int32Array;
  readonly length: number;
}

/** Statistics for logs and the benchmark. */
export interface IndexStats {
  vulns: number;
  rows: number;
  packages: number;
  commits: number;
}

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

/** Parsed versions by string id for one comparator: two generations approximate LRU, and bound the heap it holds. */
export class IdParseCache {
  private young = new Map<number, unknown>();
  private old = new Map<number, unknown>();
  constructor(
    private readonly order: VersionOrder,
    private readonly strings: StringTable,
    private readonly limit: number,
  ) {}

  parse(id: number): unknown {
    const y = this.young.get(id);
    if (y !== undefined || this.young.has(id)) return y;
    let value = this.old.get(id);
    if (value === undefined && !this.old.has(id)) value = this.order.parse(this.strings.text(id));
    if (this.young.size >= this.limit) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(id, value);
    return value;
  }
}

/**
 * Parsed versions kept per comparator and generation. Small on purpose: the parsed forms are heap objects every
 * full collection marks, and parsing a version again costs about a microsecond.
 */
const PARSE_CACHE_LIMIT = 8192;

/**
 * The corpus index. Reads are synchronous; so is each `applyVuln`, so a query never sees half of a record's
 * change. The typed arrays are public for the matcher (osv.matcher.ts, osv.paging.ts), which only reads them.
 */
export class CorpusIndex {
  /** Corpus generation this index reflects (osv_corpus.generation when it was last brought up to date). */
  generation = 0;

  /** Names, versions, event values (as parsed: `eventVersionText`), coarse bounds, `modified`, fuzzy forms. */
  readonly strings = new StringTable();
  /** Record ids; a record's number is its id's number here. */
  readonly ids = new StringTable();

  // Records, by record number.
  recModified = new Int32Array(1024);
  recRowStart = new Int32Array(1024);
  /** -1: not live (withdrawn, removed or never applied). */
  recRowCount = new Int32Array(1024).fill(-1);
  /**
   * `modified` as a protobuf Timestamp, filled by the QueryBatch writer on first use (osv.batch-answer.ts): seconds
   * (NaN: not computed yet) and nanos (-1: the text is not canonical, so the writer takes its general path).
   */
  recSeconds = new Float64Array(1024).fill(NaN);
  recNanos = new Int32Array(1024);

  // Rows, by row number (append-only; rows of replaced records stay until `seal` compacts them).
  rowRec = new Int32Array(1024);
  rowEco = new Int32Array(1024);
  rowName = new Int32Array(1024);
  rowKind = new Uint8Array(1024);
  /** String ids of the coarse bounds, -1 for none. */
  rowCoarseMin = new Int32Array(1024);
  rowCoarseMax = new Int32Array(1024);
  /** The row's events (`R`) or versions (`V`): items rowItem .. rowItem + rowItemCount. */
  rowItem = new Int32Array(1024);
  rowItemCount = new Int32Array(1024);

  // Items (events and versions), by item number.
  /** String id: the version, or the event value as it is parsed (`eventVersionText`). */
  itemStr = new Int32Array(4096);
  /** Event type letter code (`i`, `a`, `f`, `l`); 0 for versions. */
  itemType = new Uint8Array(4096);
  /** Fuzzy forms of a version (normalised tag, canonical form): string ids, or FORMS_PENDING. */
  itemTag = new Int32Array(4096);
  itemCanon = new Int32Array(4096);

  // Lists (rows of a key and name; records of a commit), by list number, as slices of `pool`.
  pool = new Int32Array(1 << 16);
  listStart = new Int32Array(1024);
  listLen = new Int32Array(1024);
  private listCap = new Int32Array(1024);
  private listKey = new Int32Array(1024);
  private listName = new Int32Array(1024);
  /** Raised on every change of a list (derived lookups of it are then stale). */
  listStamp = new Int32Array(1024);

  /** Ecosystems by number, as `rowEco` refers to them. */
  readonly ecosystems: EcoInfo[] = [];
  private readonly ecoNumbers = new Map<string, number>();
  private readonly keyNames: string[] = ['\u0000commit'];
  private readonly keyNumbers = new Map<string, number>();
  private readonly lists = new PairMap();

  private rowCount = 0;
  private itemCount = 0;
  private listCount = 0;
  private poolUsed = 0;
  private poolWaste = 0;
  private liveVulns = 0;
  private liveRows = 0;
  private deadRows = 0;
  private packageLists = 0;
  private commitLists = 0;
  private readonly parseCaches = new Map<VersionOrder, IdParseCache>();

  // -------------------------------------------------------------------------------------------------------------
  // Reads

  /** Rows filed under `ecosystem` (a full ecosystem, a base or an Ubuntu variant) and `name`, in id order. */
  packageRows(ecosystem: string, name: string): RowList | undefined {
    const key = this.keyNumbers.get(ecosystem);
    const nameId = this.strings.find(name);
    if (key === undefined || nameId === -1) return undefined;
    const list = this.lists.get(key, nameId);
    return list === -1 || this.listLen[list] === 0 ? undefined : this.listView(list);
  }

  private listView(list: number): RowList {
    const start = this.listStart[list]!;
    const length = this.listLen[list]!;
    return { index: this, list, rows: this.pool.subarray(start, start + length), length };
  }

  /**
   * Every row with this name in any ecosystem, in id order (queries without an ecosystem, §4.2 step 3). OSV.dev
   * calls these queries unsupported and they are rare, so the list is merged from the per-ecosystem lists on demand
   * instead of keeping a second index by name.
   */
  nameRows(name: string): RowList | undefined {
    const nameId = this.strings.find(name);
    if (nameId === -1) return undefined;
    const merged: number[] = [];
    let lists = 0;
    for (let eco = 0; eco < this.ecosystems.length; eco++) {
      const list = this.lists.get(this.ecosystems[eco]!.keyNumbers[0]!, nameId);
      if (list === -1 || this.listLen[list] === 0) continue;
      lists++;
      const start = this.listStart[list]!;
      const end = start + this.listLen[list]!;
      // Only rows filed under their own full ecosystem, so a row is taken once.
      for (let i = start; i < end; i++) if (this.rowEco[this.pool[i]!] === eco) merged.push(this.pool[i]!);
    }
    if (lists === 0) return undefined;
    if (lists > 1) {
      // Stable by id: rows of one record keep their order (row numbers of a record ascend in its own order).
      merged.sort((a, b) => this.ids.compare(this.rowRec[a]!, this.rowRec[b]!) || a - b);
    }
    const rows = Int32Array.from(merged);
    return { index: this, list: -1, rows, length: rows.length };
  }

  /** Every row list of at least `minRows` rows filed under an ecosystem key, with that key. */
  *listsOfAtLeast(minRows: number): Generator<[ecosystemKey: string, rows: RowList]> {
    for (let list = 0; list < this.listCount; list++) {
      if (this.listKey[list] === COMMIT_KEY || this.listLen[list]! < minRows) continue;
      yield [this.keyNames[this.listKey[list]!]!, this.listView(list)];
    }
  }

  /** Record numbers of the live records whose GIT ranges name this (lower-case) commit, in id order. */
  commitRecords(commit: string): Int32Array | undefined {
    const nameId = this.strings.find(commit);
    if (nameId === -1) return undefined;
    const list = this.lists.get(COMMIT_KEY, nameId);
    if (list === -1 || this.listLen[list] === 0) return undefined;
    return this.pool.subarray(this.listStart[list], this.listStart[list]! + this.listLen[list]!);
  }

  /** A live record by id. */
  vuln(id: string): VulnEntry | undefined {
    const rec = this.ids.find(id);
    return rec === -1 || this.recRowCount[rec] === -1 ? undefined : this.entry(rec);
  }

  /** The id and `modified` of record number `rec`. */
  entry(rec: number): VulnEntry {
    return { id: this.ids.text(rec), modified: this.strings.text(this.recModified[rec]!) };
  }

  /** The id of record number `rec`. */
  recordId(rec: number): string {
    return this.ids.text(rec);
  }

  /** The `modified` of record number `rec`. */
  recordModified(rec: number): string {
    return this.strings.text(this.recModified[rec]!);
  }

  /** Position of the first of `rows` whose record id sorts after `id` (the start of the page after a cursor). */
  firstAfter(rows: Int32Array, id: string | undefined, ofRecords = false): number {
    if (id === undefined) return 0;
    const key = keyOf(id);
    let lo = 0;
    let hi = rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const rec = ofRecords ? rows[mid]! : this.rowRec[rows[mid]!]!;
      if (this.ids.compareKey(rec, key) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The parse cache of a comparator, keyed by this index's string ids. */
  parseCache(order: VersionOrder): IdParseCache {
    let cache = this.parseCaches.get(order);
    if (cache === undefined) {
      cache = new IdParseCache(order, this.strings, PARSE_CACHE_LIMIT);
      this.parseCaches.set(order, cache);
    }
    return cache;
  }

  stats(): IndexStats {
    return { vulns: this.liveVulns, rows: this.liveRows, packages: this.packageLists, commits: this.commitLists };
  }

  /**
   * Bytes of interned strings (ids and every other text). Strings are never removed, so what replaced records
   * alone used stays counted: the keeper compares this with its value after the last build.
   */
  internedBytes(): number {
    return this.strings.usedBytes + this.ids.usedBytes;
  }

  /** Bytes of the typed storage (what the index costs outside the JS object heap). */
  byteSize(): number {
    const arrays = [
      this.recModified,
      this.recRowStart,
      this.recRowCount,
      this.rowRec,
      this.rowEco,
      this.rowName,
      this.rowKind,
      this.rowCoarseMin,
      this.rowCoarseMax,
      this.rowItem,
      this.rowItemCount,
      this.itemStr,
      this.itemType,
      this.itemTag,
      this.itemCanon,
      this.pool,
      this.listStart,
      this.listLen,
      this.listCap,
      this.listKey,
      this.listName,
      this.listStamp,
    ];
    return arrays.reduce((sum, a) => sum + a.byteLength, 0) + this.strings.byteSize + this.ids.byteSize + this.lists.byteSize;
  }

  // -------------------------------------------------------------------------------------------------------------
  // Fuzzy forms (§4.2 step 7)

  /**
   * Makes sure the versions of `row` have their fuzzy forms in `itemTag`/`itemCanon`, computing them with `forms`
   * (which gets the versions and the row's name) the first time.
   */
  ensureForms(row: number, forms: (versions: string[], name: string, eco: EcoInfo) => { tags: string[]; canonical: string[] }): void {
    const start = this.rowItem[row]!;
    const count = this.rowItemCount[row]!;
    if (count === 0 || this.itemTag[start] !== FORMS_PENDING) return;
    const versions: string[] = [];
    for (let i = start; i < start + count; i++) versions.push(this.strings.text(this.itemStr[i]!));
    const { tags, canonical } = forms(versions, this.strings.text(this.rowName[row]!), this.ecosystems[this.rowEco[row]!]!);
    for (let k = 0; k < count; k++) {
      this.itemTag[start + k] = this.strings.intern(tags[k]!);
      this.itemCanon[start + k] = this.strings.intern(canonical[k]!);
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // Changes

  private ecoNumber(ecosystem: string): number {
    let n = this.ecoNumbers.get(ecosystem);
    if (n === undefined) {
      const keys = ecosystemKeys(ecosystem);
      const keyNumbers = keys.map((key) => {
        let k = this.keyNumbers.get(key);
        if (k === undefined) {
          k = this.keyNames.length;
          this.keyNames.push(key);
          this.keyNumbers.set(key, k);
        }
        return k;
      });
      n = this.ecosystems.length;
      this.ecosystems.push({ name: ecosystem, order: comparatorFor(ecosystem), keys, keyNumbers });
      this.ecoNumbers.set(ecosystem, n);
    }
    return n;
  }

  /** The list of (key, name), created empty when new. */
  private listOf(key: number, name: number): number {
    let list = this.lists.get(key, name);
    if (list !== -1) return list;
    list = this.listCount++;
    const need = this.listCount;
    this.listStart = growInt32(this.listStart, need);
    this.listLen = growInt32(this.listLen, need);
    this.listCap = growInt32(this.listCap, need);
    this.listKey = growInt32(this.listKey, need);
    this.listName = growInt32(this.listName, need);
    this.listStamp = growInt32(this.listStamp, need);
    this.listKey[list] = key;
    this.listName[list] = name;
    this.lists.set(key, name, list);
    return list;
  }

  /** Room for one more entry in `list`, moving it to the end of the pool with twice the room when full. */
  private makeRoom(list: number): void {
    const len = this.listLen[list]!;
    const cap = this.listCap[list]!;
    if (len < cap) return;
    const next = Math.max(4, cap * 2);
    this.pool = growInt32(this.pool, this.poolUsed + next);
    const start = this.listStart[list]!;
    this.pool.copyWithin(this.poolUsed, start, start + len);
    this.listStart[list] = this.poolUsed;
    this.listCap[list] = next;
    this.poolUsed += next;
    this.poolWaste += cap;
  }

  /** The record an entry of `list` belongs to (package lists hold rows, commit lists records). */
  private recordOf(list: number, entry: number): number {
    return this.listKey[list] === COMMIT_KEY ? entry : this.rowRec[entry]!;
  }

  /** Files `entry` after every entry of a record id at or below its own (rows of one record keep their order). */
  private insert(list: number, entry: number, rec: number): void {
    this.makeRoom(list);
    const start = this.listStart[list]!;
    const len = this.listLen[list]!;
    if (len === 0) {
      if (this.listKey[list] === COMMIT_KEY) this.commitLists++;
      else this.packageLists++;
    }
    let at = len;
    if (len > 0 && this.ids.compare(this.recordOf(list, this.pool[start + len - 1]!), rec) > 0) {
      let lo = 0;
      let hi = len;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (this.ids.compare(this.recordOf(list, this.pool[start + mid]!), rec) <= 0) lo = mid + 1;
        else hi = mid;
      }
      at = lo;
      this.pool.copyWithin(start + at + 1, start + at, start + len);
    }
    this.pool[start + at] = entry;
    this.listLen[list] = len + 1;
    this.listStamp[list]!++;
  }

  /** Removes every entry of record `rec` from `list`. */
  private remove(list: number, rec: number): void {
    const start = this.listStart[list]!;
    const len = this.listLen[list]!;
    let lo = 0;
    let hi = len;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ids.compare(this.recordOf(list, this.pool[start + mid]!), rec) < 0) lo = mid + 1;
      else hi = mid;
    }
    let end = lo;
    while (end < len && this.recordOf(list, this.pool[start + end]!) === rec) end++;
    if (end === lo) return;
    this.pool.copyWithin(start + lo, start + end, start + len);
    this.listLen[list] = len - (end - lo);
    this.listStamp[list]!++;
    if (this.listLen[list] === 0) {
      if (this.listKey[list] === COMMIT_KEY) this.commitLists--;
      else this.packageLists--;
    }
  }

  private addItem(str: number, type: number): void {
    const item = this.itemCount++;
    if (item >= this.itemStr.length) {
      this.itemStr = growInt32(this.itemStr, item + 1);
      this.itemType = growUint8(this.itemType, item + 1);
      this.itemTag = growInt32(this.itemTag, item + 1);
      this.itemCanon = growInt32(this.itemCanon, item + 1);
    }
    this.itemStr[item] = str;
    this.itemType[item] = type;
    this.itemTag[item] = type === 0 ? FORMS_PENDING : -1;
    this.itemCanon[item] = type === 0 ? FORMS_PENDING : -1;
  }

  private growRows(need: number): void {
    if (need <= this.rowRec.length) return;
    this.rowRec = growInt32(this.rowRec, need);
    this.rowEco = growInt32(this.rowEco, need);
    this.rowName = growInt32(this.rowName, need);
    this.rowKind = growUint8(this.rowKind, need);
    this.rowCoarseMin = growInt32(this.rowCoarseMin, need);
    this.rowCoarseMax = growInt32(this.rowCoarseMax, need);
    this.rowItem = growInt32(this.rowItem, need);
    this.rowItemCount = growInt32(this.rowItemCount, need);
  }

  private growRecords(need: number): void {
    if (need <= this.recModified.length) return;
    this.recModified = growInt32(this.recModified, need);
    this.recRowStart = growInt32(this.recRowStart, need);
    this.recRowCount = growInt32(this.recRowCount, need, -1);
    if (need > this.recSeconds.length) {
      const seconds = new Float64Array(this.recModified.length).fill(NaN);
      seconds.set(this.recSeconds);
      this.recSeconds = seconds;
      this.recNanos = growInt32(this.recNanos, this.recModified.length);
    }
  }

  /**
   * Replaces everything known about record `id`: `rows` are its stored index rows (empty for a record without
   * packages), or null when the record is withdrawn or gone. Rows are filed in id order, so a build that applies
   * records in ascending id order only ever appends.
   */
  applyVuln(id: string, modified: string, rows: readonly IndexRowData[] | null): void {
    const known = this.ids.find(id);
    if (known !== -1 && this.recRowCount[known] !== -1) this.removeVuln(known);
    if (rows === null) return;
    const rec = known !== -1 ? known : this.ids.intern(id);
    this.growRecords(rec + 1);
    this.recModified[rec] = this.strings.intern(modified);
    this.recSeconds[rec] = NaN;
    this.recRowStart[rec] = this.rowCount;
    this.recRowCount[rec] = rows.length;
    this.liveVulns++;
    this.growRows(this.rowCount + rows.length);
    for (const data of rows) {
      const row = this.rowCount++;
      const name = this.strings.intern(data.name);
      this.rowRec[row] = rec;
      this.rowName[row] = name;
      this.rowKind[row] = KIND_CODE[data.kind];
      this.rowItem[row] = this.itemCount;
      this.rowItemCount[row] = 0;
      if (data.kind === 'C') {
        this.rowEco[row] = -1;
        this.rowCoarseMin[row] = -1;
        this.rowCoarseMax[row] = -1;
        this.insert(this.listOf(COMMIT_KEY, name), rec, rec);
        continue;
      }
      const eco = this.ecoNumber(data.ecosystem);
      this.rowEco[row] = eco;
      this.rowCoarseMin[row] = data.coarseMin === null ? -1 : this.strings.intern(data.coarseMin);
      this.rowCoarseMax[row] = data.coarseMax === null ? -1 : this.strings.intern(data.coarseMax);
      if (data.types !== undefined && data.values !== undefined) {
        for (let i = 0; i < data.values.length; i++) {
          const type = data.types[i]!;
          this.addItem(this.strings.intern(eventVersionText(type, data.values[i]!)), type.charCodeAt(0));
        }
        this.rowItemCount[row] = data.values.length;
      } else if (data.versions !== undefined) {
        for (const v of data.versions) this.addItem(this.strings.intern(v), 0);
        this.rowItemCount[row] = data.versions.length;
      }
      this.liveRows++;
      for (const key of this.ecosystems[eco]!.keyNumbers) this.insert(this.listOf(key, name), row, rec);
    }
  }

  private removeVuln(rec: number): void {
    const start = this.recRowStart[rec]!;
    const count = this.recRowCount[rec]!;
    for (let row = start; row < start + count; row++) {
      const name = this.rowName[row]!;
      if (this.rowKind[row] === KIND_C) {
        const list = this.lists.get(COMMIT_KEY, name);
        if (list !== -1) this.remove(list, rec);
        continue;
      }
      for (const key of this.ecosystems[this.rowEco[row]!]!.keyNumbers) {
        const list = this.lists.get(key, name);
        if (list !== -1) this.remove(list, rec);
      }
      this.liveRows--;
    }
    this.deadRows += count;
    this.recRowCount[rec] = -1;
    this.liveVulns--;
  }

  /** Kept for the loader's protocol: strings are always interned now. */
  startInterning(): void {}

  /**
   * Ends a bulk build or refresh: the pool is compacted when moved lists left much of it unused, and rows of
   * replaced records are dropped when they are a quarter of all rows.
   */
  seal(): void {
    if (this.deadRows > 4096 && this.deadRows * 4 > this.rowCount) this.compactRows();
    if (this.poolWaste > 1 << 16 && this.poolWaste * 2 > this.poolUsed) this.compactPool();
  }

  private compactPool(): void {
    let total = 0;
    for (let list = 0; list < this.listCount; list++) total += this.listLen[list]!;
    const pool = new Int32Array(Math.max(1024, total + (total >>> 3)));
    let at = 0;
    for (let list = 0; list < this.listCount; list++) {
      const start = this.listStart[list]!;
      const len = this.listLen[list]!;
      pool.set(this.pool.subarray(start, start + len), at);
      this.listStart[list] = at;
      this.listCap[list] = len;
      at += len;
    }
    this.pool = pool;
    this.poolUsed = at;
    this.poolWaste = 0;
  }

  private compactRows(): void {
    const renumber = new Int32Array(this.rowCount).fill(-1);
    const live = this.rowCount - this.deadRows;
    const next = new CorpusIndexColumns(live, this.itemCount);
    let row = 0;
    let item = 0;
    for (let rec = 0; rec < this.ids.size; rec++) {
      const count = this.recRowCount[rec]!;
      if (count === -1) continue;
      const start = this.recRowStart[rec]!;
      this.recRowStart[rec] = row;
      for (let old = start; old < start + count; old++, row++) {
        renumber[old] = row;
        next.rowRec[row] = rec;
        next.rowEco[row] = this.rowEco[old]!;
        next.rowName[row] = this.rowName[old]!;
        next.rowKind[row] = this.rowKind[old]!;
        next.rowCoarseMin[row] = this.rowCoarseMin[old]!;
        next.rowCoarseMax[row] = this.rowCoarseMax[old]!;
        const from = this.rowItem[old]!;
        const n = this.rowItemCount[old]!;
        next.rowItem[row] = item;
        next.rowItemCount[row] = n;
        next.itemStr.set(this.itemStr.subarray(from, from + n), item);
        next.itemType.set(this.itemType.subarray(from, from + n), item);
        next.itemTag.set(this.itemTag.subarray(from, from + n), item);
        next.itemCanon.set(this.itemCanon.subarray(from, from + n), item);
        item += n;
      }
    }
    // Lists keep their order and length and rows their items, so what is kept by list position (the string-mode
    // lookups of osv.paging.ts, by their list's stamp) stays right: the stamps stay, and warmed lookups with them.
    for (let list = 0; list < this.listCount; list++) {
      if (this.listKey[list] === COMMIT_KEY) continue;
      const start = this.listStart[list]!;
      for (let i = start; i < start + this.listLen[list]!; i++) this.pool[i] = renumber[this.pool[i]!]!;
    }
    Object.assign(this, next);
    this.rowCount = row;
    this.itemCount = item;
    this.deadRows = 0;
  }
}

/** Fresh row and item columns of the given sizes (for compaction). */
class CorpusIndexColumns {
  rowRec: Int32Array;
  rowEco: Int32Array;
  rowName: Int32Array;
  rowKind: Uint8Array;
  rowCoarseMin: Int32Array;
  rowCoarseMax: Int32Array;
  rowItem: Int32Array;
  rowItemCount: Int32Array;
  itemStr: Int32Array;
  itemType: Uint8Array;
  itemTag: Int32Array;
  itemCanon: Int32Array;
  constructor(rows: number, items: number) {
    const r = Math.max(1024, rows + (rows >>> 3));
    const i = Math.max(4096, items + (items >>> 3));
    this.rowRec = new Int32Array(r);
    this.rowEco = new Int32Array(r);
    this.rowName = new Int32Array(r);
    this.rowKind = new Uint8Array(r);
    this.rowCoarseMin = new Int32Array(r);
    this.rowCoarseMax = new Int32Array(r);
    this.rowItem = new Int32Array(r);
    this.rowItemCount = new Int32Array(r);
    this.itemStr = new Int32Array(i);
    this.itemType = new Uint8Array(i);
    this.itemTag = new Int32Array(i);
    this.itemCanon = new Int32Array(i);
  }
}
