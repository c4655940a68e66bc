import { randomBytes } from 'node:crypto';
import { fromBinary, fromJson, toBinary, toJson, type DescMessage } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { AppError } from '../core/errors.ts';
import { assertStorableMessage, JSON_WRITE, requestFromJson, responseFromJson } from './codec.ts';
import { DocumentSchema, ListDocumentsRequestSchema } from './generated/es/platform/v1/documents_pb.ts';
import {
  BatchQuerySchema,
  BatchVulnerabilityListSchema,
  QuerySchema,
  SeveritySchema,
  VulnerabilityListSchema,
  VulnerabilitySchema,
  type Query,
  type Vulnerability,
} from './generated/es/platform/v1/osv_pb.ts';

/**
 * The RPC layer over the generated codec: one message for handlers whatever the transport, proto3 JSON as OSV.dev
 * writes it (OSV facts §1: snake_case names, RFC 3339 timestamps, enums by name, empty fields left out, a oneof with
 * two members is a 400), request errors naming the field by its path. (Formerly the tests of the hand-written
 * proto-json.ts, with the same cases.)
 */
const json = (desc: DescMessage, value: unknown, records = true) => toJson(desc, responseFromJson(desc, value, records), JSON_WRITE);
const request = (desc: DescMessage, value: unknown) => toJson(desc, requestFromJson(desc, value, 'body'), JSON_WRITE);

const record = {
  schema_version: '1.6.0',
  id: 'GHSA-abcd-efgh-ijkl',
  modified: '2022-04-13T03:04:39.780694Z',
  published: '2021-01-01T00:00:00Z',
  aliases: ['CVE-2021-0001'],
  summary: 'A bug',
  details: 'Details',
  severity: [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' }],
  affected: [
    {
      package: { name: 'jinja2', ecosystem: 'PyPI', purl: 'pkg:pypi/jinja2' },
      ranges: [
        {
          type: 'ECOSYSTEM',
          events: [{ introduced: '0' }, { fixed: '3.1.4' }],
          database_specific: { source: 'x', n: 1.5, ok: true, none: null, list: [1, 'a', { b: [] }] },
        },
      ],
      versions: ['3.1.3'],
      ecosystem_specific: { severity: 'HIGH' },
      database_specific: { nested: { deep: { er: 'yes' } } },
    },
  ],
  references: [{ type: 'ADVISORY', url: 'https://example.test/a' }],
  credits: [{ name: 'Someone', contact: ['mailto:a@example.test'], type: 'FINDER' }],
  database_specific: { github_reviewed: true },
};

describe('the RPC layer over the generated codec', () => {
  it('keeps an OSV record unchanged through the HTTP path and the gRPC wire alike', () => {
    const http = json(VulnerabilitySchema, record);
    expect(http).toEqual(record);
    expect(Object.keys(http as object)).toEqual(Object.keys(record));
    const wire = toJson(
      VulnerabilitySchema,
      fromBinary(VulnerabilitySchema, toBinary(VulnerabilitySchema, responseFromJson(VulnerabilitySchema, record, true) as Vulnerability)),
      JSON_WRITE,
    );
    expect(JSON.stringify(wire)).toBe(JSON.stringify(http));
  });

  it('leaves out empty fields (a query without hits is {}), but keeps set messages and oneof members', () => {
    expect(json(VulnerabilityListSchema, { vulns: [], next_page_token: '' })).toEqual({});
    expect(json(BatchVulnerabilityListSchema, { results: [{}, { vulns: [] }] })).toEqual({ results: [{}, {}] });
    expect(request(QuerySchema, { version: '', package: {} })).toEqual({ version: '', package: {} });
    expect(json(SeveritySchema, { type: 'TYPE_UNSPECIFIED', score: '' })).toEqual({});
    expect(request(QuerySchema, { page_token: null, package: null })).toEqual({});
    const wire = fromBinary(
      QuerySchema,
      toBinary(QuerySchema, requestFromJson(QuerySchema, { version: '', package: {} }, 'body') as Query),
    );
    expect(toJson(QuerySchema, wire, JSON_WRITE)).toEqual({ version: '', package: {} });
  });

  it('refuses both members of a oneof, unknown fields and wrong types with INVALID_ARGUMENT naming the field', () => {
    const refuse = (desc: DescMessage, value: unknown) => {
      try {
        requestFromJson(desc, value, 'body');
      } catch (error) {
        expect(error).toBeInstanceOf(AppError);
        expect((error as AppError).grpcCode).toBe(3);
        return (error as AppError).message;
      }
      throw new Error(`accepted ${JSON.stringify(value)}`);
    };
    expect(refuse(QuerySchema, { commit: 'abc', version: '1.0' })).toBe('body: oneof set multiple times by commit and version');
    expect(refuse(QuerySchema, { package: { name: 'x', nmae: 'y' } })).toBe('body.package.nmae: unknown field');
    expect(refuse(QuerySchema, { version: 1 })).toBe('body.version: expected string, got 1');
    expect(refuse(QuerySchema, [])).toBe('body: expected a JSON object');
    expect(refuse(BatchQuerySchema, { queries: [{}, { package: { name: 2 } }] })).toBe(
      'body.queries[1].package.name: expected string, got 2',
    );
    expect(refuse(ListDocumentsRequestSchema, { page_size: 1.5 })).toContain('body.page_size: expected number (int32)');
    expect(refuse(ListDocumentsRequestSchema, { page_size: 2 ** 31 })).toContain('out of range');
    expect(refuse(ListDocumentsRequestSchema, { page_size: 1, pageSize: 2 })).toBe('body.pageSize: field page_size is given twice');
    expect(refuse(DocumentSchema, { size_bytes: '12x' })).toContain('body.size_bytes:');
    expect(refuse(DocumentSchema, { ciphertext: 'not base64!' })).toBe('body.ciphertext: invalid base64 string');
    expect(refuse(SeveritySchema, { type: 'CVSS_V5' })).toContain('body.type:');
    expect(refuse(VulnerabilitySchema, { database_specific: [1] })).toContain('body.database_specific:');
    expect(refuse(VulnerabilitySchema, { aliases: ['a', null] })).toBe('body.aliases: list item must not be null');
    expect(refuse(QuerySchema, { version: 'a\u0000' })).toBe(
      'version: contains a character that cannot be stored (NUL or an unpaired surrogate)',
    );
  });

  it('refuses unstorable text in a decoded (binary) message by its proto path: oneof members, nested lists, maps and Struct values', () => {
    const refusal = (desc: DescMessage, json: Record<string, unknown>) => {
      const message = fromBinary(desc, toBinary(desc, fromJson(desc, json as never)));
      try {
        assertStorableMessage(desc, message);
        return undefined;
      } catch (error) {
        return (error as AppError).message.split(':')[0];
      }
    };
    const clean = { queries: [{ version: '1.0', package: { name: 'lodash', ecosystem: 'npm' } }, { commit: 'abc' }] };
    expect(refusal(BatchQuerySchema, clean)).toBeUndefined();
    expect(refusal(BatchQuerySchema, { queries: [{ commit: 'a' }, { version: '1\u0000' }] })).toBe('queries.1.version');
    expect(refusal(BatchQuerySchema, { queries: [{ commit: 'a' }, { package: { name: 'x\u0000' } }] })).toBe('queries.1.package.name');
    expect(refusal(QuerySchema, { commit: 'c\u0000', package: { name: 'ok' } })).toBe('commit');
    expect(refusal(VulnerabilitySchema, { id: 'X', database_specific: { note: 'n\u0000' } })).toBe(
      'database_specific.fields.note.string_value',
    );
    expect(refusal(VulnerabilitySchema, { id: 'X', aliases: ['A', 'B\u0000'] })).toBe('aliases.1');
  });

  it('drops unknown fields of imported records only, and fails on them in any other response', () => {
    expect(json(VulnerabilitySchema, { id: 'X', future_field: 1 })).toEqual({ id: 'X' });
    expect(() => responseFromJson(VulnerabilitySchema, { id: 'X', future_field: 1 }, false)).toThrow(/future_field/);
  });

  it('accepts the lowerCamelCase names, numbers for int64, enum numbers and base64url, and writes the canonical forms', () => {
    expect(request(ListDocumentsRequestSchema, { pageSize: '7', pageToken: 't' })).toEqual({ page_size: 7, page_token: 't' });
    expect(request(DocumentSchema, { sizeBytes: 12, ciphertext: '-_8' })).toEqual({ size_bytes: '12', ciphertext: '+/8=' });
    expect(request(SeveritySchema, { type: 2 })).toEqual({ type: 'CVSS_V3' });
  });

  it('reads 12 MiB of base64 (regression: a repeated-group regex overflowed the stack above ~3.2 MiB)', () => {
    const bytes = randomBytes(12 * 1024 * 1024);
    const text = bytes.toString('base64');
    const message = requestFromJson(DocumentSchema, { ciphertext: text }, 'body');
    expect(Buffer.from(fromJson(DocumentSchema, { ciphertext: bytes.toString('base64url') }).ciphertext).equals(bytes)).toBe(true);
    expect(Buffer.from((message as unknown as { ciphertext: Uint8Array }).ciphertext).equals(bytes)).toBe(true);
    expect(() => requestFromJson(DocumentSchema, { ciphertext: `${text.slice(0, -4)}AA!=` }, 'body')).toThrow(/base64/);
    expect(() => requestFromJson(DocumentSchema, { ciphertext: `${text}A` }, 'body')).toThrow(/base64/);
  });

  it('writes timestamps as proto3 JSON does (UTC, 0/3/6/9 fractional digits)', () => {
    const cases: [string, string][] = [
      ['2022-04-13T03:04:39.780694Z', '2022-04-13T03:04:39.780694Z'],
      ['2021-01-01T00:00:00.000Z', '2021-01-01T00:00:00Z'],
      ['2021-01-01T00:00:00.1Z', '2021-01-01T00:00:00.100Z'],
      ['2021-01-01T01:30:00+01:30', '2021-01-01T00:00:00Z'],
      ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00Z'],
      ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59Z'],
    ];
    for (const [input, output] of cases) expect(json(VulnerabilitySchema, { modified: input }), input).toEqual({ modified: output });
    // (The generated codec reads an hour 24 or a day past the month's end as the following day, as Date.parse does.)
    for (const bad of ['2021-13-01T00:00:00Z', '2021-01-01 00:00:00Z', '2021-01-01T00:00:00', '10000-01-01T00:00:00Z']) {
      expect(() => responseFromJson(VulnerabilitySchema, { modified: bad }, true), bad).toThrow();
    }
  });
});
