// OSV record shape and validation (OSV schema 1.7.5, osv-data/osv-schema.json). The rules are written out here
// instead of loading the schema file, so the repository works without ../shared; osv.schema.test.ts checks that
// every verdict agrees with Ajv running the published schema. Each check names the JSON path that failed, which
// is what `platform osv import` reports for an invalid record. Longer than our ~400-line guide on purpose: it is
// one format's rules, read against the schema side by side; split, a rule and its neighbours would drift apart.
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { KNOWN_ECOSYSTEMS } from './ecosystems/index.ts';

/** One range event; the schema requires exactly one of the four keys per event. */
export interface OsvEvent {
  introduced?: string;
  fixed?: string;
  last_affected?: string;
  limit?: string;
}

export interface OsvRange {
  type: 'GIT' | 'SEMVER' | 'ECOSYSTEM';
  repo?: string;
  events: OsvEvent[];
  database_specific?: Record<string, unknown>;
}

interface OsvPackage {
  ecosystem: string;
  name: string;
  purl?: string;
}

export interface OsvAffected {
  package?: OsvPackage;
  severity?: unknown;
  ranges?: OsvRange[];
  versions?: string[];
  ecosystem_specific?: Record<string, unknown>;
  database_specific?: Record<string, unknown>;
}

/** A validated OSV record. Fields this service does not read stay `unknown` and are served as imported. */
export interface OsvRecord {
  id: string;
  modified: string;
  published?: string;
  withdrawn?: string;
  schema_version?: string;
  aliases?: string[] | null;
  related?: string[];
  upstream?: string[];
  affected?: OsvAffected[] | null;
  [key: string]: unknown;
}

export type ValidationResult = { ok: true; record: OsvRecord } | { ok: false; id: string | undefined; reason: string };

type Json = unknown;

// JSON Schema's "object" excludes arrays and null.
function isObject(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const dateTime = fullFormats['date-time'] as { validate: (s: string) => boolean };
const uri = fullFormats.uri as (s: string) => boolean;

/** The schema's timestamp: an RFC 3339 date-time whose text contains `YYYY-MM-DDTHH:MM:SS[.f]Z` (pattern is unanchored). */
const TIMESTAMP_PATTERN = /[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z/u;

/** Home-database id prefixes of the schema (`$defs.prefix`), plus `x_` for private databases. */
const ID_PREFIXES = [
  'ASB-A',
  'PUB-A',
  'ALPINE',
  'ALSA',
  'ALBA',
  'ALEA',
  'AZL',
  'BELL',
  'BIT',
  'CGA',
  'CLEANSTART',
  'CLSA',
  'CURL',
  'CVE',
  'DEBIAN',
  'DHI',
  'DRUPAL',
  'DSA',
  'DLA',
  'ELA',
  'DTSA',
  'ECHO',
  'EEF',
  'FreeBSD',
  'GHSA',
  'GO',
  'GSD',
  'HSEC',
  'JLSEC',
  'KUBE',
  'LBSEC',
  'LSN',
  'MAL',
  'MINI',
  'MGASA',
  'OESA',
  'OSEC',
  'OSV',
  'openSUSE-SU',
  'PHSA',
  'PSF',
  'PYSEC',
  'RHBA',
  'RHEA',
  'RHSA',
  'RLSA',
  'RXSA',
  'RSEC',
  'ROOT',
  'RUSTSEC',
  'SUSE-SU',
  'SUSE-RU',
  'SUSE-FU',
  'SUSE-OU',
  'UBUNTU',
  'USN',
  'V8',
];
const ID_PREFIX_SET = new Set(ID_PREFIXES);

function validId(id: string): boolean {
  if (id.startsWith('x_')) return true;
  const dash = id.indexOf('-');
  // Prefixes may contain a dash themselves (ASB-A, SUSE-SU, openSUSE-SU), so try every dash position.
  for (let i = dash; i !== -1; i = id.indexOf('-', i + 1)) {
    if (ID_PREFIX_SET.has(id.slice(0, i))) return true;
  }
  return false;
}

const ECOSYSTEM_BASES = new Set([...KNOWN_ECOSYSTEMS, 'GIT']);

/** `^(<known>|GIT)(:.+)?$` where `.` is any code point but a line terminator. */
function validEcosystem(eco: string): boolean {
  const colon = eco.indexOf(':');
  if (colon === -1) return ECOSYSTEM_BASES.has(eco);
  if (!ECOSYSTEM_BASES.has(eco.slice(0, colon))) return false;
  const rest = eco.slice(colon + 1);
  return rest.length > 0 && !/[\n\r\u2028\u2029]/u.test(rest);
}

const GIT_COMMIT = /^(0|[a-f0-9]{40}|[a-f0-9]{64})$/u;
const EVENT_KEYS = ['introduced', 'fixed', 'last_affected', 'limit'] as const;

// CVSS vectors as the schema constrains them: a list of metric:value pairs separated by `/` (v2, v3 after the
// `CVSS:3.x/` header; the order is free), or v4's fixed-order vector.
const CVSS2_METRIC =
  '(AV:[NAL]|AC:[LMH]|Au:[MSN]|[CIA]:[NPC]|E:(U|POC|F|H|ND)|RL:(OF|TF|W|U|ND)|RC:(UC|UR|C|ND)|CDP:(N|L|LM|MH|H|ND)|TD:(N|L|M|H|ND)|[CIA]R:(L|M|H|ND))';
const CVSS2 = new RegExp(`^(${CVSS2_METRIC}/)*${CVSS2_METRIC}$`, 'u');
const CVSS3_METRIC =
  '(AV:[NALP]|AC:[LH]|PR:[NLH]|UI:[NR]|S:[UC]|[CIA]:[NLH]|E:[XUPFH]|RL:[XOTWU]|RC:[XURC]|[CIA]R:[XLMH]|MAV:[XNALP]|MAC:[XLH]|MPR:[XNLH]|MUI:[XNR]|MS:[XUC]|M[CIA]:[XNLH])';
const CVSS3 = new RegExp(`^CVSS:3[.][01]/(${CVSS3_METRIC}/)*${CVSS3_METRIC}$`, 'u');
const CVSS4_REQUIRED = [
  'AV:[NALP]',
  'AC:[LH]',
  'AT:[NP]',
  'PR:[NLH]',
  'UI:[NPA]',
  'VC:[HLN]',
  'VI:[HLN]',
  'VA:[HLN]',
  'SC:[HLN]',
  'SI:[HLN]',
  'SA:[HLN]',
];
const CVSS4_OPTIONAL = [
  'E:[XAPU]',
  'CR:[XHML]',
  'IR:[XHML]',
  'AR:[XHML]',
  'MAV:[XNALP]',
  'MAC:[XLH]',
  'MAT:[XNP]',
  'MPR:[XNLH]',
  'MUI:[XNPA]',
  'MVC:[XNLH]',
  'MVI:[XNLH]',
  'MVA:[XNLH]',
  'MSC:[XNLH]',
  'MSI:[XNLHS]',
  'MSA:[XNLHS]',
  'S:[XNP]',
  'AU:[XNY]',
  'R:[XAUI]',
  'V:[XDC]',
  'RE:[XLMH]',
  'U:(X|Clear|Green|Amber|Red)',
];
const CVSS4 = new RegExp(`^CVSS:4[.]0/${CVSS4_REQUIRED.join('/')}${CVSS4_OPTIONAL.map((m) => `(/${m})?`).join('')}$`, 'u');
const UBUNTU_PRIORITIES = new Set(['negligible', 'low', 'medium', 'high', 'critical']);
const SEVERITY_TYPES = new Set(['CVSS_V2', 'CVSS_V3', 'CVSS_V4', 'Ubuntu']);
const RANGE_TYPES = new Set(['GIT', 'SEMVER', 'ECOSYSTEM']);
const REFERENCE_TYPES = new Set([
  'ADVISORY',
  'ARTICLE',
  'DETECTION',
  'DISCUSSION',
  'REPORT',
  'FIX',
  'INTRODUCED',
  'GIT',
  'PACKAGE',
  'EVIDENCE',
  'WEB',
]);
const CREDIT_TYPES = new Set([
  'FINDER',
  'REPORTER',
  'ANALYST',
  'COORDINATOR',
  'REMEDIATION_DEVELOPER',
  'REMEDIATION_REVIEWER',
  'REMEDIATION_VERIFIER',
  'TOOL',
  'SPONSOR',
  'OTHER',
]);
const TOP_LEVEL_KEYS = new Set([
  'schema_version',
  'id',
  'modified',
  'published',
  'withdrawn',
  'aliases',
  'related',
  'upstream',
  'summary',
  'details',
  'severity',
  'affected',
  'references',
  'credits',
  'database_specific',
]);

/** Thrown inside the validator with the first failing path; never escapes `validateOsvRecord`. */
class Invalid extends Error {}

function fail(path: string, message: string): never {
  throw new Invalid(`${path}: ${message}`);
}

function checkString(v: Json, path: string): void {
  if (typeof v !== 'string') fail(path, 'must be a string');
}

function checkStringArray(v: Json, path: string, nullable: boolean): void {
  if (v === null && nullable) return;
  if (!Array.isArray(v)) fail(path, nullable ? 'must be an array or null' : 'must be an array');
  v.forEach((item, i) => checkString(item, `${path}[${i}]`));
}

function checkObject(v: Json, path: string): asserts v is Record<string, Json> {
  if (!isObject(v)) fail(path, 'must be an object');
}

function checkTimestamp(v: Json, path: string): void {
  checkString(v, path);
  const s = v as string;
  if (!dateTime.validate(s) || !TIMESTAMP_PATTERN.test(s))
    fail(path, 'must be an RFC 3339 UTC timestamp (YYYY-MM-DDTHH:MM:SS[.fraction]Z)');
}

function checkSeverity(v: Json, path: string): void {
  if (v === null) return;
  if (!Array.isArray(v)) fail(path, 'must be an array or null');
  v.forEach((item, i) => {
    const p = `${path}[${i}]`;
    checkObject(item, p);
    if ('type' in item) {
      checkString(item.type, `${p}.type`);
      if (!SEVERITY_TYPES.has(item.type as string)) fail(`${p}.type`, `must be one of ${[...SEVERITY_TYPES].join(', ')}`);
    }
    if ('score' in item) checkString(item.score, `${p}.score`);
    if (!('type' in item)) fail(p, 'type is required');
    if (!('score' in item)) fail(p, 'score is required');
    const score = item.score as string;
    const ok =
      item.type === 'CVSS_V2'
        ? CVSS2.test(score)
        : item.type === 'CVSS_V3'
          ? CVSS3.test(score)
          : item.type === 'CVSS_V4'
            ? CVSS4.test(score)
            : UBUNTU_PRIORITIES.has(score);
    if (!ok) fail(`${p}.score`, `is not a valid ${String(item.type)} score`);
  });
}

/** The number of event kinds whose key is present with a string value (matching the pattern for GIT ranges). */
function eventKindsPresent(event: Record<string, Json>, git: boolean): number {
  let n = 0;
  for (const key of EVENT_KEYS) {
    if (!(key in event)) continue;
    const value = event[key];
    if (typeof value !== 'string') continue;
    if (git && !GIT_COMMIT.test(value)) continue;
    n++;
  }
  return n;
}

function checkRange(range: Json, path: string): void {
  checkObject(range, path);
  if ('type' in range) {
    checkString(range.type, `${path}.type`);
    if (!RANGE_TYPES.has(range.type as string)) fail(`${path}.type`, 'must be one of GIT, SEMVER, ECOSYSTEM');
  }
  if ('repo' in range) checkString(range.repo, `${path}.repo`);
  if ('database_specific' in range) checkObject(range.database_specific, `${path}.database_specific`);
  if (!('type' in range)) fail(path, 'type is required');
  if (!('events' in range)) fail(path, 'events is required');
  const events = range.events;
  if (!Array.isArray(events)) fail(`${path}.events`, 'must be an array');
  if (events.length === 0) fail(`${path}.events`, 'must not be empty');
  const git = range.type === 'GIT';
  if (git && !('repo' in range)) fail(path, 'GIT ranges require a repo');
  let introduced = false;
  let hasFixed = false;
  let hasLastAffected = false;
  events.forEach((event, i) => {
    const p = `${path}.events[${i}]`;
    checkObject(event, p);
    for (const key of EVENT_KEYS) if (key in event && typeof event[key] !== 'string') fail(`${p}.${key}`, 'must be a string');
    if (eventKindsPresent(event, false) !== 1) fail(p, 'must have exactly one of introduced, fixed, last_affected, limit');
    if (git && eventKindsPresent(event, true) !== 1)
      fail(p, 'GIT events must be full-length commit hashes (40 or 64 lower-case hex) or "0"');
    if ('introduced' in event) introduced = true;
    if ('fixed' in event) hasFixed = true;
    if ('last_affected' in event) hasLastAffected = true;
  });
  if (!introduced) fail(`${path}.events`, 'must contain an introduced event');
  if (hasFixed && hasLastAffected) fail(`${path}.events`, 'fixed and last_affected events are mutually exclusive');
}

function checkAffected(item: Json, path: string, topLevelSeverity: boolean): void {
  checkObject(item, path);
  if ('package' in item) {
    const pkg = item.package;
    const p = `${path}.package`;
    checkObject(pkg, p);
    if ('ecosystem' in pkg) {
      checkString(pkg.ecosystem, `${p}.ecosystem`);
      if (!validEcosystem(pkg.ecosystem as string)) fail(`${p}.ecosystem`, `unknown ecosystem ${JSON.stringify(pkg.ecosystem)}`);
    }
    if ('name' in pkg) checkString(pkg.name, `${p}.name`);
    if ('purl' in pkg) checkString(pkg.purl, `${p}.purl`);
    if (!('ecosystem' in pkg)) fail(p, 'ecosystem is required');
    if (!('name' in pkg)) fail(p, 'name is required');
  }
  if ('severity' in item) {
    // A record-level severity forbids per-package severities (schema allOf).
    if (topLevelSeverity && item.severity !== null) fail(`${path}.severity`, 'must be null when the record has a top-level severity');
    checkSeverity(item.severity, `${path}.severity`);
  }
  if ('ranges' in item) {
    if (!Array.isArray(item.ranges)) fail(`${path}.ranges`, 'must be an array');
    item.ranges.forEach((r, i) => checkRange(r, `${path}.ranges[${i}]`));
  }
  if ('versions' in item) checkStringArray(item.versions, `${path}.versions`, false);
  if ('ecosystem_specific' in item) checkObject(item.ecosystem_specific, `${path}.ecosystem_specific`);
  if ('database_specific' in item) checkObject(item.database_specific, `${path}.database_specific`);
}

function checkRecord(v: Json): void {
  checkObject(v, 'record');
  for (const key of Object.keys(v)) if (!TOP_LEVEL_KEYS.has(key)) fail(key, 'is not an OSV field');
  if ('id' in v) {
    checkString(v.id, 'id');
    if (!validId(v.id as string)) fail('id', 'does not start with a known database prefix (for example GHSA-, CVE-, x_)');
  }
  if (!('id' in v)) fail('record', 'id is required');
  if (!('modified' in v)) fail('record', 'modified is required');
  checkTimestamp(v.modified, 'modified');
  if ('published' in v) checkTimestamp(v.published, 'published');
  if ('withdrawn' in v) checkTimestamp(v.withdrawn, 'withdrawn');
  if ('schema_version' in v) checkString(v.schema_version, 'schema_version');
  if ('aliases' in v) checkStringArray(v.aliases, 'aliases', true);
  if ('related' in v) checkStringArray(v.related, 'related', false);
  if ('upstream' in v) checkStringArray(v.upstream, 'upstream', false);
  if ('summary' in v) checkString(v.summary, 'summary');
  if ('details' in v) checkString(v.details, 'details');
  if ('severity' in v) checkSeverity(v.severity, 'severity');
  if ('affected' in v && v.affected !== null) {
    if (!Array.isArray(v.affected)) fail('affected', 'must be an array or null');
    const topSeverity = 'severity' in v;
    v.affected.forEach((a, i) => checkAffected(a, `affected[${i}]`, topSeverity));
  }
  if ('references' in v && v.references !== null) {
    if (!Array.isArray(v.references)) fail('references', 'must be an array or null');
    v.references.forEach((ref, i) => {
      const p = `references[${i}]`;
      checkObject(ref, p);
      if ('type' in ref) {
        checkString(ref.type, `${p}.type`);
        if (!REFERENCE_TYPES.has(ref.type as string)) fail(`${p}.type`, `must be one of ${[...REFERENCE_TYPES].join(', ')}`);
      }
      if ('url' in ref) {
        checkString(ref.url, `${p}.url`);
        if (!uri(ref.url as string)) fail(`${p}.url`, 'must be an absolute URI');
      }
      if (!('type' in ref)) fail(p, 'type is required');
      if (!('url' in ref)) fail(p, 'url is required');
    });
  }
  if ('credits' in v) {
    if (!Array.isArray(v.credits)) fail('credits', 'must be an array');
    v.credits.forEach((credit, i) => {
      const p = `credits[${i}]`;
      checkObject(credit, p);
      if ('name' in credit) checkString(credit.name, `${p}.name`);
      if ('contact' in credit) checkStringArray(credit.contact, `${p}.contact`, false);
      if ('type' in credit) {
        checkString(credit.type, `${p}.type`);
        if (!CREDIT_TYPES.has(credit.type as string)) fail(`${p}.type`, `must be one of ${[...CREDIT_TYPES].join(', ')}`);
      }
      if (!('name' in credit)) fail(p, 'name is required');
    });
  }
  if ('database_specific' in v) checkObject(v.database_specific, 'database_specific');
}

/**
 * Validates a parsed JSON value against the OSV schema. On failure the reason names the first failing JSON path;
 * `id` is the record's id when it has a string one (for the import report).
 */
export function validateOsvRecord(value: unknown): ValidationResult {
  try {
    checkRecord(value);
    return { ok: true, record: value as OsvRecord };
  } catch (error) {
    if (!(error instanceof Invalid)) throw error;
    const id = isObject(value) && typeof value.id === 'string' ? value.id : undefined;
    return { ok: false, id, reason: error.message };
  }
}

/**
 * A fixed-width key for an OSV timestamp that sorts like the instant (`YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`); the
 * fraction is padded or cut to nanoseconds. Only for validated timestamps, which always end in `Z`.
 */
export function timestampKey(timestamp: string): string {
  const match = /(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?/u.exec(timestamp);
  if (!match) return timestamp;
  const fraction = (match[3] ?? '').slice(0, 9).padEnd(9, '0');
  return `${match[1]}T${match[2]}.${fraction}Z`;
}
