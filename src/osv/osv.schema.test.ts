// The hand-written validator must give the same verdict as Ajv running the published OSV schema, on every record
// of the reference data (valid, synthetic and deliberately invalid) and on mutations of valid records.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { bulkPath, fixturePath, skipWithoutBulk } from '../../test/support/shared.ts';
import { timestampKey, validateOsvRecord } from './osv.schema.ts';

function loadAjv(): (value: unknown) => boolean {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats.default(ajv);
  const schema = JSON.parse(readFileSync(fixturePath('osv', 'osv-schema.json'), 'utf8')) as object;
  const validate = ajv.compile(schema);
  return (value) => validate(value);
}

function jsonFiles(dir: string): { name: string; value: unknown }[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ name: f, value: JSON.parse(readFileSync(join(dir, f), 'utf8')) as unknown }));
}

function jsonLines(file: string): { name: string; value: unknown }[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => ({ name: `${file}:${i + 1}`, value: JSON.parse(l) as unknown }));
}

const clone = <T>(v: T): T => structuredClone(v);

/** Mutations that each break (or keep) one rule of the schema, applied to a valid record. */
const MUTATIONS: { name: string; apply: (r: Record<string, unknown>) => void }[] = [
  { name: 'no id', apply: (r) => delete r.id },
  { name: 'unknown id prefix', apply: (r) => (r.id = 'NOPE-1') },
  { name: 'private x_ prefix', apply: (r) => (r.id = 'x_private-1') },
  { name: 'prefix with a dash', apply: (r) => (r.id = 'SUSE-SU-2023:1') },
  { name: 'numeric id', apply: (r) => (r.id = 42) },
  { name: 'no modified', apply: (r) => delete r.modified },
  { name: 'modified without Z', apply: (r) => (r.modified = '2021-01-01T00:00:00+00:00') },
  { name: 'modified date only', apply: (r) => (r.modified = '2021-01-01') },
  { name: 'modified bad month', apply: (r) => (r.modified = '2021-13-01T00:00:00Z') },
  { name: 'modified with fraction', apply: (r) => (r.modified = '2021-01-01T00:00:00.123456789Z') },
  { name: 'unknown top-level field', apply: (r) => (r.extra = 1) },
  { name: 'aliases null', apply: (r) => (r.aliases = null) },
  { name: 'aliases of numbers', apply: (r) => (r.aliases = [1]) },
  { name: 'related null', apply: (r) => (r.related = null) },
  { name: 'summary number', apply: (r) => (r.summary = 1) },
  { name: 'affected null', apply: (r) => (r.affected = null) },
  { name: 'affected object', apply: (r) => (r.affected = {}) },
  { name: 'affected item string', apply: (r) => (r.affected = ['x']) },
  { name: 'empty affected item', apply: (r) => (r.affected = [{}]) },
  { name: 'package without name', apply: (r) => (r.affected = [{ package: { ecosystem: 'npm' } }]) },
  { name: 'unknown ecosystem', apply: (r) => (r.affected = [{ package: { ecosystem: 'Bogus', name: 'x' } }]) },
  { name: 'ecosystem with suffix', apply: (r) => (r.affected = [{ package: { ecosystem: 'Debian:12', name: 'x' } }]) },
  { name: 'ecosystem with empty suffix', apply: (r) => (r.affected = [{ package: { ecosystem: 'Debian:', name: 'x' } }]) },
  { name: 'GIT package', apply: (r) => (r.affected = [{ package: { ecosystem: 'GIT', name: 'x' } }]) },
  { name: 'versions of numbers', apply: (r) => (r.affected = [{ package: { ecosystem: 'npm', name: 'x' }, versions: [1] }]) },
  { name: 'range without events', apply: (r) => (r.affected = [{ ranges: [{ type: 'SEMVER' }] }]) },
  { name: 'range with empty events', apply: (r) => (r.affected = [{ ranges: [{ type: 'SEMVER', events: [] }] }]) },
  { name: 'range without introduced', apply: (r) => (r.affected = [{ ranges: [{ type: 'SEMVER', events: [{ fixed: '1' }] }] }]) },
  {
    name: 'event with two kinds',
    apply: (r) => (r.affected = [{ ranges: [{ type: 'SEMVER', events: [{ introduced: '0', fixed: '1' }] }] }]),
  },
  { name: 'event with none', apply: (r) => (r.affected = [{ ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }, {}] }] }]) },
  { name: 'event value number', apply: (r) => (r.affected = [{ ranges: [{ type: 'SEMVER', events: [{ introduced: 0 }] }] }]) },
  {
    name: 'fixed and last_affected',
    apply: (r) =>
      (r.affected = [{ ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '1' }, { last_affected: '2' }] }] }]),
  },
  {
    name: 'limit event',
    apply: (r) => (r.affected = [{ ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { limit: '2' }] }] }]),
  },
  { name: 'unknown range type', apply: (r) => (r.affected = [{ ranges: [{ type: 'SVN', events: [{ introduced: '0' }] }] }]) },
  { name: 'GIT without repo', apply: (r) => (r.affected = [{ ranges: [{ type: 'GIT', events: [{ introduced: '0' }] }] }]) },
  {
    name: 'GIT short hash',
    apply: (r) => (r.affected = [{ ranges: [{ type: 'GIT', repo: 'https://x', events: [{ introduced: 'abc123' }] }] }]),
  },
  {
    name: 'GIT upper-case hash',
    apply: (r) => (r.affected = [{ ranges: [{ type: 'GIT', repo: 'https://x', events: [{ introduced: 'A'.repeat(40) }] }] }]),
  },
  {
    name: 'GIT full hash',
    apply: (r) =>
      (r.affected = [{ ranges: [{ type: 'GIT', repo: 'https://x', events: [{ introduced: '0' }, { fixed: 'a'.repeat(64) }] }] }]),
  },
  {
    name: 'range database_specific array',
    apply: (r) => (r.affected = [{ ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }], database_specific: [] }] }]),
  },
  {
    name: 'severity CVSS_V3 ok',
    apply: (r) => (r.severity = [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' }]),
  },
  { name: 'severity CVSS_V3 bad', apply: (r) => (r.severity = [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:Q' }]) },
  { name: 'severity CVSS_V2 ok', apply: (r) => (r.severity = [{ type: 'CVSS_V2', score: 'AV:N/AC:L/Au:N/C:P/I:P/A:P' }]) },
  {
    name: 'severity CVSS_V4 ok',
    apply: (r) => (r.severity = [{ type: 'CVSS_V4', score: 'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N' }]),
  },
  {
    name: 'severity CVSS_V4 bad order',
    apply: (r) => (r.severity = [{ type: 'CVSS_V4', score: 'CVSS:4.0/AC:L/AV:N/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N' }]),
  },
  { name: 'severity Ubuntu', apply: (r) => (r.severity = [{ type: 'Ubuntu', score: 'medium' }]) },
  { name: 'severity Ubuntu bad', apply: (r) => (r.severity = [{ type: 'Ubuntu', score: 'huge' }]) },
  { name: 'severity free text type', apply: (r) => (r.severity = [{ type: 'CVSS', score: '9.8' }]) },
  { name: 'severity without score', apply: (r) => (r.severity = [{ type: 'Ubuntu' }]) },
  { name: 'severity null', apply: (r) => (r.severity = null) },
  {
    name: 'severity at both levels',
    apply: (r) => {
      r.severity = [{ type: 'Ubuntu', score: 'low' }];
      r.affected = [{ package: { ecosystem: 'npm', name: 'x' }, severity: [{ type: 'Ubuntu', score: 'low' }] }];
    },
  },
  {
    name: 'top severity, affected severity null',
    apply: (r) => {
      r.severity = [{ type: 'Ubuntu', score: 'low' }];
      r.affected = [{ package: { ecosystem: 'npm', name: 'x' }, severity: null }];
    },
  },
  { name: 'reference ok', apply: (r) => (r.references = [{ type: 'WEB', url: 'https://example.com/a?b=c#d' }]) },
  { name: 'reference relative url', apply: (r) => (r.references = [{ type: 'WEB', url: 'example.com/a' }]) },
  { name: 'reference bad type', apply: (r) => (r.references = [{ type: 'BLOG', url: 'https://example.com' }]) },
  { name: 'reference without url', apply: (r) => (r.references = [{ type: 'WEB' }]) },
  { name: 'references null', apply: (r) => (r.references = null) },
  { name: 'credit without name', apply: (r) => (r.credits = [{ type: 'FINDER' }]) },
  { name: 'credit bad type', apply: (r) => (r.credits = [{ name: 'a', type: 'HERO' }]) },
  { name: 'credit contact', apply: (r) => (r.credits = [{ name: 'a', contact: ['mailto:a@b.c'] }]) },
  { name: 'database_specific array', apply: (r) => (r.database_specific = []) },
  { name: 'withdrawn', apply: (r) => (r.withdrawn = '2024-01-01T00:00:00Z') },
];

describe('OSV record validation', () => {
  const ajv = loadAjv();

  it('[OSV-IMPORT-VALIDATE] agrees with the published schema on every real record and every fixture', () => {
    const all = [...jsonFiles(fixturePath('osv', 'records')), ...jsonFiles(fixturePath('osv', 'records-test-fixtures'))];
    expect(all.length).toBe(357 + 75);
    const disagreements = all.filter((r) => validateOsvRecord(r.value).ok !== ajv(r.value)).map((r) => r.name);
    expect(disagreements).toEqual([]);
    // The data's own READMEs: all 357 records valid, 34 of 75 fixtures invalid.
    expect(jsonFiles(fixturePath('osv', 'records')).every((r) => validateOsvRecord(r.value).ok)).toBe(true);
    expect(jsonFiles(fixturePath('osv', 'records-test-fixtures')).filter((r) => !validateOsvRecord(r.value).ok)).toHaveLength(34);
  });

  it.skipIf(skipWithoutBulk)('[OSV-IMPORT-VALIDATE] agrees with the published schema on every bulk record', () => {
    const go = jsonLines(bulkPath('go-vulndb.jsonl'));
    const pypa = jsonLines(bulkPath('pypa-pysec.jsonl'));
    expect(go.length + pypa.length).toBe(4291 + 2661);
    const disagreements = [...go, ...pypa].filter((r) => validateOsvRecord(r.value).ok !== ajv(r.value)).map((r) => r.name);
    expect(disagreements).toEqual([]);
    // bulk/README.md: every Go record valid, 7 PyPA records invalid.
    expect(go.filter((r) => !validateOsvRecord(r.value).ok)).toHaveLength(0);
    expect(pypa.filter((r) => !validateOsvRecord(r.value).ok)).toHaveLength(7);
  });

  it('agrees with the published schema on mutations of a valid record', () => {
    const base = JSON.parse(readFileSync(fixturePath('osv', 'records', 'GHSA-qc84-gqf4-9926.json'), 'utf8')) as Record<string, unknown>;
    expect(validateOsvRecord(base).ok).toBe(true);
    const verdicts = MUTATIONS.map((m) => {
      const record = clone(base);
      m.apply(record);
      return { name: m.name, ours: validateOsvRecord(record).ok, schema: ajv(record) };
    });
    expect(verdicts.filter((v) => v.ours !== v.schema)).toEqual([]);
    // Both outcomes are exercised.
    expect(verdicts.filter((v) => v.ours).length).toBeGreaterThan(10);
    expect(verdicts.filter((v) => !v.ours).length).toBeGreaterThan(20);
  });

  it('names the failing path and the id in its reason', () => {
    const result = validateOsvRecord({
      id: 'GHSA-x',
      modified: '2024-01-01T00:00:00Z',
      affected: [{ ranges: [{ type: 'SEMVER', events: [{ fixed: '1' }] }] }],
    });
    expect(result).toEqual({ ok: false, id: 'GHSA-x', reason: 'affected[0].ranges[0].events: must contain an introduced event' });
    expect(validateOsvRecord('nope')).toEqual({ ok: false, id: undefined, reason: 'record: must be an object' });
  });

  it('orders timestamps by instant with any fraction length', () => {
    expect(timestampKey('2022-04-13T03:04:39.780694Z')).toBe('2022-04-13T03:04:39.780694000Z');
    expect(timestampKey('2022-04-13T03:04:39Z')).toBe('2022-04-13T03:04:39.000000000Z');
    expect(timestampKey('2022-04-13T03:04:39.5Z') > timestampKey('2022-04-13T03:04:39.49999Z')).toBe(true);
  });
});
