// PlatformOSV request validation (osv-facts.md §2): OSV.dev's order and texts, the batch rules and page tokens.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../../test/support/shared.ts';
import { AppError } from '../core/errors.ts';
import { decodePageToken, encodePageToken, FIRST_PAGE_TOKEN, parseBatch, parseQuery } from './osv.query.ts';

interface GoUnitCases {
  query_affected_validation: { name: string; query: unknown; message_contains: string }[];
  query_affected_batch_validation: { name: string; queries: unknown; message_contains?: string; message?: string }[];
}

interface Matrix {
  cases: { http_status: number; request: unknown }[];
}

const readCases = <T>(file: string): T => JSON.parse(readFileSync(fixturePath('osv', 'api-cases', file), 'utf8')) as T;

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return `${error.code}: ${error.message}`;
    throw error;
  }
  return 'ok';
}

describe('query validation (§2)', () => {
  it('[OSV-VALIDATION-ORDER] [OSV-GETVULN-ERRORS] follows the Go server unit cases', () => {
    const cases = readCases<GoUnitCases>('osvdev-go-unit-cases.json');
    for (const c of cases.query_affected_validation)
      expect(
        messageOf(() => parseQuery(c.query)),
        c.name,
      ).toBe(`parameter_invalid: ${c.message_contains}`);
    for (const c of cases.query_affected_batch_validation) {
      const queries = Array.isArray(c.queries)
        ? c.queries
        : Array.from({ length: 1001 }, () => ({ package: { name: 'a', ecosystem: 'npm' }, version: '1' }));
      expect(
        messageOf(() => parseBatch({ queries })),
        c.name,
      ).toBe(`parameter_invalid: ${c.message ?? c.message_contains}`);
    }
  });

  it('[OSV-VALIDATION-ORDER] [OSV-ONEOF] answers the 120-case field matrix with OSV.dev statuses', () => {
    const matrix = readCases<Matrix>('osvdev-query-matrix.json');
    expect(matrix.cases).toHaveLength(120);
    const wrong = matrix.cases.filter((c) => (messageOf(() => parseQuery(c.request)) === 'ok' ? 200 : 400) !== c.http_status);
    expect(wrong).toEqual([]);
  });

  it('[OSV-VALIDATION-ORDER] [OSV-PURL-UNKNOWN] [OSV-TOKENS-INVALID] checks in OSV.dev order with its exact messages', () => {
    const m = (q: unknown) => messageOf(() => parseQuery(q)).replace(/^parameter_invalid: /, '');
    expect(m(null)).toBe('no query provided');
    expect(m({ commit: 'zz', package: { ecosystem: 'Bogus' } })).toBe('invalid hash');
    expect(m({ commit: 'abc' })).toBe('invalid hash');
    expect(m({ commit: 'ABCDEF12', package: { ecosystem: 'Bogus' } })).toBe('ok');
    expect(m({ version: '1.0' })).toBe('invalid query');
    expect(m({ package: { name: 'x', purl: 'pkg:npm/x' } })).toBe('name specified in a PURL query');
    expect(m({ package: { ecosystem: 'npm', purl: 'pkg:npm/x' } })).toBe('ecosystem specified in a PURL query');
    expect(m({ package: { purl: 'invalid-purl' } })).toMatch(/^invalid purl/);
    expect(m({ package: { purl: 'pkg:yeet/x@1' }, version: '1' })).toBe('ok');
    expect(m({ package: { purl: 'pkg:npm/x@1' }, version: '1' })).toBe('version specified in params and PURL query');
    expect(m({ package: { ecosystem: 'Bogus', name: 'x' }, version: '1' })).toBe('invalid ecosystem');
    expect(m({ package: { ecosystem: 'pypi', name: 'x' }, version: '1' })).toBe('invalid ecosystem');
    expect(m({ package: { ecosystem: 'Debian:13', name: 'x' }, version: '1' })).toBe('ok');
    expect(m({ package: { ecosystem: 'GIT', name: 'https://github.com/a/b' }, version: 'v1' })).toBe('ok');
    expect(m({ package: { ecosystem: 'crates.io' } })).toBe('invalid query');
    expect(m({ package: { name: 'numpy' } })).toBe('invalid query');
    expect(m({ package: { name: 'numpy' }, version: '1.0' })).toBe('ok');
    expect(m({ package: { name: 'numpy', ecosystem: 'PyPI' }, page_token: 'garbage' })).toBe('invalid cursor');
    expect(m({ package: { name: 'numpy', ecosystem: 'PyPI' }, page_token: encodePageToken('commit', 'X-1') })).toBe('invalid cursor');
    expect(m({ package: { name: 'numpy', ecosystem: 'PyPI' }, page_token: FIRST_PAGE_TOKEN })).toBe('ok');
    expect(m({ package: { name: 7, ecosystem: 'PyPI' } })).toBe('invalid query');
  });

  it('[OSV-BATCH-LIMIT] [OSV-BATCH-ITEM-ERROR] checks the batch size after parsing every item, before the first item error', () => {
    const valid = { package: { name: 'a', ecosystem: 'npm' }, version: '1' };
    expect(messageOf(() => parseBatch({ queries: [valid, { commit: '' }, ...Array.from({ length: 999 }, () => valid)] }))).toBe(
      'parameter_invalid: too many queries',
    );
    expect(messageOf(() => parseBatch({ queries: Array.from({ length: 1000 }, () => valid) }))).toBe('ok');
    expect(messageOf(() => parseBatch({ queries: [valid, { package: {} }, { commit: '' }] }))).toBe(
      'parameter_invalid: error in query at index 1: rpc error: code = InvalidArgument desc = invalid query',
    );
    expect(parseBatch({})).toEqual([]);
  });

  it('[OSV-PAGES] [OSV-TOKENS-INVALID] round-trips opaque page tokens and refuses forged ones', () => {
    const token = encodePageToken('package', 'GHSA-xxxx-yyyy-zzzz');
    expect(token).not.toContain('GHSA');
    expect(decodePageToken('package', token)).toBe('GHSA-xxxx-yyyy-zzzz');
    expect(decodePageToken('commit', encodePageToken('commit', 'CVE-1'))).toBe('CVE-1');
    expect(decodePageToken('package', '')).toBeUndefined();
    for (const bad of ['P:', 'P:!!', 'X:abc', 'P:' + Buffer.from('x'.repeat(101)).toString('base64url'), 'P:YQ==']) {
      expect(() => decodePageToken('package', bad), bad).toThrow('invalid cursor');
    }
  });
});
