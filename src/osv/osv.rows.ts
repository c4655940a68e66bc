// Index rows computed from a record at import (osv-facts.md §4.1, OSV.dev's `computeAffectedVersions`). They are
// stored beside the record, and every replica builds its in-memory index from them, so replicas never re-parse
// records or re-sort versions at start.
import { COARSE_MAX, comparatorFor, normalizePackageName, type VersionOrder } from './ecosystems/index.ts';
import type { OsvRecord } from './osv.schema.ts';

/**
 * The text an event value is parsed as. `introduced: "0"` is the lowest version of every ecosystem (the
 * comparators' `0` sentinel); any other event of `0` is the plain version zero, so prereleases of 0.0.0 (Go
 * pseudo-versions) still sort below a `fixed: "0"` (osv-scalibr's IsAffected cases).
 */
export function eventVersionText(type: string, value: string): string {
  return value === '0' && type !== 'i' ? '0.0.0' : value;
}

/** `R` range, `V` chunk of enumerated versions, `E` package without either, `C` commit hash of a GIT range. */
export type RowKind = 'R' | 'V' | 'E' | 'C';

/** Event type letters in tie-break order (§4.2: introduced < last_affected < fixed < limit). */
const EVENT_TYPE_ORDER = 'ialf';

/** One index row as computed from a record; `osv.batch-writer.ts` persists it, `osv.index.ts` loads it. */
export interface IndexRowData {
  seq: number;
  kind: RowKind;
  ecosystem: string;
  /** Normalised name (PEP 503 for PyPI; host+path for GIT); for `C` rows the lower-case commit hash. */
  name: string;
  /** Coarse bounds over what the row can match (null: no coarse filter for this row). */
  coarseMin: string | null;
  coarseMax: string | null;
  /** `R`: one letter per event (`i`, `a`, `l`, `f`), aligned with `values`, sorted by the ecosystem's order. */
  types?: string;
  values?: string[];
  /** `V`: the versions of this chunk, parseable ones sorted by the ecosystem's order, the rest after them. */
  versions?: string[];
}

/** OSV.dev stores at most this many enumerated versions per index row (`maxVersionsPerEntity`). */
const VERSIONS_PER_ROW = 1000;

/** Coarse bounds of a row that can never match in comparator mode (min above max). */
const NEVER_MIN = '~';
const NEVER_MAX = '';

/**
 * A repository URL as OSV.dev indexes it: host and path, without scheme, credentials, trailing `/` or `.git`
 * (`https://github.com/curl/curl.git` → `github.com/curl/curl`).
 */
export function normalizeRepo(url: string): string {
  let s = url.trim();
  const scheme = s.indexOf('://');
  if (scheme !== -1) s = s.slice(scheme + 3);
  const at = s.indexOf('@');
  const slash = s.indexOf('/');
  if (at !== -1 && (slash === -1 || at < slash)) s = s.slice(at + 1);
  s = s.replace(/\/+$/u, '');
  if (s.endsWith('.git')) s = s.slice(0, -4);
  return s.replace(/\/+$/u, '');
}

const EVENT_LETTER: Record<string, string> = { introduced: 'i', last_affected: 'a', limit: 'l', fixed: 'f' };

interface Parsed<T> {
  value: T;
  parsed: unknown;
}

/** Sorts values by `order`: parseable first in ascending order (ties by `tie`), unparseable after them in input order. */
function sortByOrder<T>(
  items: T[],
  text: (t: T) => string,
  order: VersionOrder | undefined,
  tie?: (a: T, b: T) => number,
): { sorted: T[]; parsed: Parsed<T>[] } {
  if (order === undefined) return { sorted: items, parsed: [] };
  const parsed: Parsed<T>[] = [];
  const rest: T[] = [];
  for (const item of items) {
    const p = order.parse(text(item));
    if (p === undefined) rest.push(item);
    else parsed.push({ value: item, parsed: p });
  }
  parsed.sort((a, b) => order.compare(a.parsed, b.parsed) || (tie ? tie(a.value, b.value) : 0));
  return { sorted: [...parsed.map((p) => p.value), ...rest], parsed };
}

function rangeRow(
  seq: number,
  ecosystem: string,
  name: string,
  events: { type: string; value: string }[],
  order: VersionOrder | undefined,
): IndexRowData {
  const { sorted, parsed } = sortByOrder(
    events,
    (e) => eventVersionText(e.type, e.value),
    order,
    (a, b) => EVENT_TYPE_ORDER.indexOf(a.type) - EVENT_TYPE_ORDER.indexOf(b.type),
  );
  let coarseMin: string | null = null;
  let coarseMax: string | null = null;
  if (order?.coarse !== undefined) {
    // §4.1: min = first introduced, max = last event unless that is an introduced (then unbounded). Only events
    // the comparator parses can ever decide a match, so the bounds are taken over those.
    const firstIntroduced = parsed.find((p) => p.value.type === 'i');
    const last = parsed[parsed.length - 1];
    if (firstIntroduced === undefined || last === undefined) {
      coarseMin = NEVER_MIN;
      coarseMax = NEVER_MAX;
    } else {
      coarseMin = order.coarse(firstIntroduced.parsed);
      coarseMax = last.value.type === 'i' ? COARSE_MAX : order.coarse(last.parsed);
    }
  }
  return {
    seq,
    kind: 'R',
    ecosystem,
    name,
    coarseMin,
    coarseMax,
    types: sorted.map((e) => e.type).join(''),
    values: sorted.map((e) => e.value),
  };
}

function versionRows(seq: number, ecosystem: string, name: string, versions: string[], order: VersionOrder | undefined): IndexRowData[] {
  const { sorted, parsed } = sortByOrder(versions, (v) => v, order);
  const rows: IndexRowData[] = [];
  for (let start = 0; start < sorted.length; start += VERSIONS_PER_ROW) {
    const chunk = sorted.slice(start, start + VERSIONS_PER_ROW);
    let coarseMin: string | null = null;
    let coarseMax: string | null = null;
    if (order?.coarse !== undefined) {
      // Parseable versions come first and in order, so the chunk's bounds are its first and last parseable ones.
      const first = parsed[start];
      const lastIndex = Math.min(start + chunk.length, parsed.length) - 1;
      const last = lastIndex >= start ? parsed[lastIndex] : undefined;
      if (first === undefined || last === undefined) {
        coarseMin = NEVER_MIN;
        coarseMax = NEVER_MAX;
      } else {
        coarseMin = order.coarse(first.parsed);
        coarseMax = order.coarse(last.parsed);
      }
    }
    rows.push({ seq: seq + rows.length, kind: 'V', ecosystem, name, coarseMin, coarseMax, versions: chunk });
  }
  return rows;
}

const COMMIT = /^[0-9a-fA-F]{40}([0-9a-fA-F]{24})?$/u;

/**
 * The index rows of a record (§4.1): none for a withdrawn record; per affected package one `R` row per
 * ECOSYSTEM/SEMVER range with events, `V` rows of ≤1000 enumerated versions, or an `E` row when it has neither;
 * for the first GIT range of an entry a `V` (or `E`) row under ecosystem `GIT` named by the normalised repo, holding
 * the entry's versions (tags); and a `C` row for each commit hash that introduces or is the last affected commit
 * of any GIT range. `fixed` and `limit` commits are where the vulnerability is gone, so they are not indexed.
 */
export function computeIndexRows(record: OsvRecord): IndexRowData[] {
  if (record.withdrawn !== undefined) return [];
  const rows: IndexRowData[] = [];
  const commits = new Set<string>();
  for (const affected of record.affected ?? []) {
    const ranges = affected.ranges ?? [];
    const versions = affected.versions ?? [];
    const pkg = affected.package;
    if (pkg !== undefined) {
      const ecosystem = pkg.ecosystem;
      const name = ecosystem === 'GIT' ? normalizeRepo(pkg.name) : normalizePackageName(ecosystem, pkg.name);
      const order = comparatorFor(ecosystem);
      const before = rows.length;
      for (const range of ranges) {
        if (range.type === 'GIT') continue;
        const events: { type: string; value: string }[] = [];
        for (const event of range.events) {
          for (const [key, value] of Object.entries(event)) {
            const letter = EVENT_LETTER[key];
            if (letter !== undefined && typeof value === 'string' && value !== '') events.push({ type: letter, value });
          }
        }
        if (events.length > 0) rows.push(rangeRow(rows.length, ecosystem, name, events, order));
      }
      if (versions.length > 0) rows.push(...versionRows(rows.length, ecosystem, name, versions, order));
      if (rows.length === before) rows.push({ seq: rows.length, kind: 'E', ecosystem, name, coarseMin: null, coarseMax: null });
    }
    const git = ranges.find((r) => r.type === 'GIT' && typeof r.repo === 'string' && r.repo !== '');
    if (git?.repo !== undefined) {
      const repo = normalizeRepo(git.repo);
      if (versions.length > 0) rows.push(...versionRows(rows.length, 'GIT', repo, versions, undefined));
      else rows.push({ seq: rows.length, kind: 'E', ecosystem: 'GIT', name: repo, coarseMin: null, coarseMax: null });
    }
    for (const range of ranges) {
      if (range.type !== 'GIT') continue;
      for (const event of range.events) {
        for (const value of [event.introduced, event.last_affected]) {
          if (typeof value === 'string' && COMMIT.test(value)) commits.add(value.toLowerCase());
        }
      }
    }
  }
  for (const commit of commits)
    rows.push({ seq: rows.length, kind: 'C', ecosystem: 'GIT', name: commit, coarseMin: null, coarseMax: null });
  return rows;
}

/** The JSON stored in `osv_affected.data` for a row (null for `E` and `C`). */
function rowData(row: IndexRowData): string | null {
  if (row.kind === 'R') return JSON.stringify({ t: row.types, v: row.values });
  if (row.kind === 'V') return JSON.stringify(row.versions);
  return null;
}

/** An index row as the corpus stores it (`osv_affected`): its events or versions as the `data` column's JSON text. */
export type StoredIndexRow = Pick<IndexRowData, 'seq' | 'kind' | 'ecosystem' | 'name' | 'coarseMin' | 'coarseMax'> & {
  data: string | null;
};

export function storedRow(row: IndexRowData): StoredIndexRow {
  return {
    seq: row.seq,
    kind: row.kind,
    ecosystem: row.ecosystem,
    name: row.name,
    coarseMin: row.coarseMin,
    coarseMax: row.coarseMax,
    data: rowData(row),
  };
}
