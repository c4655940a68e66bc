import type { Selectable } from 'kysely';

/**
 * The OSV corpus (docs/osv.md): one row per record id holding the record as imported, plus compact index rows that
 * the in-memory index is built from. Ids and names are compared in byte order: SQLite's BINARY collation, and
 * `COLLATE "C"` on PostgreSQL (set by the migration), so keyset pages agree with JavaScript code-point order.
 */
export interface OsvRecordsTable {
  id: string;
  /** `modified` exactly as written in the record. */
  modified: string;
  /** `modified` as a fixed-width sortable key (`YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`); decides which copy wins. */
  modified_key: string;
  /** 1 when the record carries `withdrawn`; such records keep this row but have no index rows. */
  withdrawn: number;
  /** The record as compact JSON text. */
  record: string;
  /** Canonical proto3 JSON text of the record as `platform.v1.Vulnerability` (osv.answer.ts); null until computed. */
  answer_json: string | null;
  /** The protobuf encoding of the same message; null until computed. */
  answer_wire: Buffer | null;
  /** Byte length of `answer_json` (the response size limit counts it on both transports); null until computed. */
  answer_size: number | null;
  imported_at: number;
  /** Corpus generation of the import batch that last wrote this row (replicas load changes since theirs). */
  generation: number;
}

/**
 * Index rows (osv-facts.md §4.1): `R` one per ECOSYSTEM/SEMVER range (data = `{"t":"<types>","v":[values]}` sorted
 * with the ecosystem's comparator), `V` one per chunk of ≤1000 enumerated versions (data = JSON array; GIT rows use
 * ecosystem `GIT` and the normalised repo as name), `E` an affected package with neither (data null), `C` one per
 * commit hash that appears in a GIT range (name = the lower-case hash).
 */
export interface OsvAffectedTable {
  vuln_id: string;
  seq: number;
  kind: string;
  ecosystem: string;
  name: string;
  coarse_min: string | null;
  coarse_max: string | null;
  data: string | null;
}

/** `aliases[]` of every stored record (withdrawn too), for the alias groups of GetVuln's not-found message. */
export interface OsvAliasesTable {
  alias: string;
  vuln_id: string;
}

/** One row (id 1): the corpus generation, raised by every import batch; replicas poll it to refresh. */
export interface OsvCorpusTable {
  id: number;
  generation: number;
  updated_at: number;
}

export interface OsvTables {
  osv_records: OsvRecordsTable;
  osv_affected: OsvAffectedTable;
  osv_aliases: OsvAliasesTable;
  osv_corpus: OsvCorpusTable;
}

export type OsvAffectedRow = Selectable<OsvAffectedTable>;
