// The requests of PlatformOSV (osv-facts.md §2): validation in OSV.dev's order with its exact messages, page
// tokens, and one page of a parsed query's matches from the index.
import { AppError } from '../core/errors.ts';
import { isKnownEcosystem, normalizePackageName } from './ecosystems/index.ts';
import type { CorpusIndex } from './osv.index.ts';
import { RowMatcher } from './osv.matcher.ts';
import { EMPTY_PAGE, matchCommit, matchRows, type MatchPage, type PageLimits } from './osv.paging.ts';
import { PurlError, purlToPackage, UNKNOWN_PURL_TYPE } from './osv.purl.ts';
import { normalizeRepo } from './osv.rows.ts';

// Request shapes (canonical proto3 JSON of platform.v1, as the RPC layer hands them over)

interface PackageJson {
  name?: string;
  ecosystem?: string;
  purl?: string;
}

export interface QueryJson {
  commit?: string;
  version?: string;
  package?: PackageJson;
  page_token?: string;
}

/** At most this many queries per batch (`maxBatchQueries`). */
const MAX_BATCH_QUERIES = 1000;
/** Longest accepted vulnerability id, in bytes. */
const MAX_ID_BYTES = 100;
/** Sent when a deadline passed before anything was judged: base64 of "FIRST_PAGE_TOKEN", meaning "start over". */
export const FIRST_PAGE_TOKEN = 'RklSU1RfUEFHRV9UT0tFTg==';

export type ParsedQuery =
  | { kind: 'commit'; commit: string; after: string | undefined }
  | { kind: 'package'; ecosystem: string; name: string; version: string; after: string | undefined }
  /** A purl of a type OSV does not map: an empty result, not an error (§2). */
  | { kind: 'nothing' };

/** One page of a parsed query's matches, from its cursor (§4.2): commits by hash, packages by their rows. */
export function matchQuery(index: CorpusIndex, q: ParsedQuery, limits: Omit<PageLimits, 'after'>): MatchPage {
  if (q.kind === 'nothing') return EMPTY_PAGE;
  const page: PageLimits = { ...limits, after: q.after };
  if (q.kind === 'commit') return matchCommit(index, q.commit, page);
  const rows = q.ecosystem === '' ? index.nameRows(q.name) : index.packageRows(q.ecosystem, q.name);
  return matchRows(rows, new RowMatcher({ ecosystem: q.ecosystem, version: q.version }), page);
}

function invalidArgument(message: string): AppError {
  return new AppError('parameter_invalid', message);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A string field, '' when absent; a field of another type makes the query invalid. */
function text(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw invalidArgument('invalid query');
  return v;
}

/** Page tokens: `P:` (package) or `C:` (commit) and the base64url of the last id of the previous page. */
export function encodePageToken(kind: 'package' | 'commit', lastId: string): string {
  if (lastId === '') return FIRST_PAGE_TOKEN;
  return `${kind === 'package' ? 'P' : 'C'}:${Buffer.from(lastId, 'utf8').toString('base64url')}`;
}

/** The cursor of a token (undefined: from the start); throws `invalid cursor` for anything else. */
export function decodePageToken(kind: 'package' | 'commit', token: string): string | undefined {
  if (token === '' || token === FIRST_PAGE_TOKEN) return undefined;
  const prefix = kind === 'package' ? 'P:' : 'C:';
  const body = token.slice(2);
  if (!token.startsWith(prefix) || !/^[A-Za-z0-9_-]+$/u.test(body)) throw invalidArgument('invalid cursor');
  const id = Buffer.from(body, 'base64url').toString('utf8');
  if (id === '' || Buffer.byteLength(id) > MAX_ID_BYTES || Buffer.from(id, 'utf8').toString('base64url') !== body)
    throw invalidArgument('invalid cursor');
  return id;
}

/**
 * Validates one query and resolves purls (§2 table order): no query; a commit (empty or not hex: `invalid hash`;
 * package fields are then ignored); no package; purl with name or ecosystem; purl that does not parse; unknown
 * purl type (empty result); purl version plus `version`; unknown ecosystem base; empty name; neither ecosystem nor
 * version; bad page token.
 */
export function parseQuery(query: unknown): ParsedQuery {
  if (query === undefined || query === null) throw invalidArgument('no query provided');
  if (!isObject(query)) throw invalidArgument('invalid query');
  const hasCommit = query.commit !== undefined && query.commit !== null;
  if (hasCommit && query.version !== undefined && query.version !== null) {
    // Both members of the `param` oneof: the JSON decoder refuses this before any handler runs (§1).
    throw invalidArgument('invalid query: only one of commit and version may be set');
  }
  if (hasCommit) {
    const commit = text(query.commit);
    if (commit === '' || commit.length % 2 !== 0 || !/^[0-9a-fA-F]+$/u.test(commit)) throw invalidArgument('invalid hash');
    return { kind: 'commit', commit: commit.toLowerCase(), after: decodePageToken('commit', text(query.page_token)) };
  }
  const pkg = query.package;
  if (pkg === undefined || pkg === null) throw invalidArgument('invalid query');
  if (!isObject(pkg)) throw invalidArgument('invalid query');
  let name = text(pkg.name);
  let ecosystem = text(pkg.ecosystem);
  const purl = text(pkg.purl);
  let version = text(query.version);
  if (purl !== '') {
    if (name !== '') throw invalidArgument('name specified in a PURL query');
    if (ecosystem !== '') throw invalidArgument('ecosystem specified in a PURL query');
    let resolved;
    try {
      resolved = purlToPackage(purl);
    } catch (error) {
      if (error instanceof PurlError) throw invalidArgument(error.message);
      throw error;
    }
    if (resolved === UNKNOWN_PURL_TYPE) return { kind: 'nothing' };
    if (resolved.version !== '') {
      if (version !== '') throw invalidArgument('version specified in params and PURL query');
      version = resolved.version;
    }
    name = resolved.name;
    ecosystem = resolved.ecosystem;
  }
  if (ecosystem !== '' && !isKnownEcosystem(ecosystem)) throw invalidArgument('invalid ecosystem');
  if (name === '') throw invalidArgument('invalid query');
  if (ecosystem === '' && version === '') throw invalidArgument('invalid query');
  const normalized = ecosystem === 'GIT' ? normalizeRepo(name) : ecosystem === '' ? name : normalizePackageName(ecosystem, name);
  return { kind: 'package', ecosystem, name: normalized, version, after: decodePageToken('package', text(query.page_token)) };
}

/** The batch rule (§2): every item is parsed, then too many queries wins over the first item's error. */
export function parseBatch(request: unknown): ParsedQuery[] {
  const queries = isObject(request) ? (request.queries ?? []) : request === undefined || request === null ? [] : undefined;
  if (!Array.isArray(queries)) throw invalidArgument('invalid query');
  const parsed: ParsedQuery[] = [];
  let firstError: { index: number; message: string } | undefined;
  queries.forEach((q, index) => {
    try {
      parsed.push(parseQuery(q));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      firstError ??= { index, message: error.message };
      parsed.push({ kind: 'nothing' });
    }
  });
  if (queries.length > MAX_BATCH_QUERIES) throw invalidArgument('too many queries');
  if (firstError !== undefined) {
    throw invalidArgument(`error in query at index ${firstError.index}: rpc error: code = InvalidArgument desc = ${firstError.message}`);
  }
  return parsed;
}

/** GetVuln's `id` (§2): required, at most 100 bytes. */
export function parseVulnId(request: unknown): string {
  const id = isObject(request) ? text(request.id) : '';
  if (id === '') throw invalidArgument('ID is required');
  if (Buffer.byteLength(id, 'utf8') > MAX_ID_BYTES) throw invalidArgument('ID is too long');
  return id;
}
