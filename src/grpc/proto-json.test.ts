import { describe, expect, it } from 'vitest';
import { AppError } from '../core/errors.ts';
import { randomBytes } from 'node:crypto';
import { canonicalTimestampSeconds, formatTimestamp, isCanonicalBase64, parseTimestamp } from './proto-json.ts';
import { loadProtos } from './protos.ts';

/**
 * The proto3 JSON codec: one canonical JSON shape for handlers, whatever the transport (OSV facts §1: snake_case
 * names, RFC 3339 timestamps, enums by name, empty fields left out, a oneof with two members is a 400).
 */
const protos = loadProtos();
const codec = protos.codec;

/** JSON → proto object → wire → proto object → JSON, as a gRPC response and request travel. */
function throughWire(typeName: string, json: Record<string, unknown>, method: { service: string; method: string }, side: 'request' | 'response') {
  const m = protos.services.get(method.service)?.get(method.method);
  if (!m) throw new Error('no method');
  const canonical = codec.fromJson(typeName, json, { unknownFields: 'drop' });
  const serialize = side === 'request' ? m.definition.requestSerialize : m.definition.responseSerialize;
  const deserialize = side === 'request' ? m.definition.requestDeserialize : m.definition.responseDeserialize;
  return codec.fromProto(typeName, deserialize(serialize(codec.toProto(typeName, canonical))) as Record<string, unknown>);
}

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
      ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '3.1.4' }], database_specific: { source: 'x', n: 1.5, ok: true, none: null, list: [1, 'a', { b: [] }] } }],
      versions: ['3.1.3'],
      ecosystem_specific: { severity: 'HIGH' },
      database_specific: { nested: { deep: { er: 'yes' } } },
    },
  ],
  references: [{ type: 'ADVISORY', url: 'https://example.test/a' }],
  credits: [{ name: 'Someone', contact: ['mailto:a@example.test'], type: 'FINDER' }],
  database_specific: { github_reviewed: true },
};

describe('proto3 JSON codec', () => {
  it('keeps an OSV record unchanged through the HTTP path and the gRPC wire alike', () => {
    const http = codec.fromJson('platform.v1.Vulnerability', record);
    expect(http).toEqual(record);
    expect(Object.keys(http)).toEqual(Object.keys(record));
    const wire = throughWire('platform.v1.Vulnerability', record, { service: 'platform.v1.PlatformOSV', method: 'GetVuln' }, 'response');
    expect(JSON.stringify(wire)).toBe(JSON.stringify(http));
  });

  it('leaves out empty fields (a query without hits is {}), but keeps set messages and oneof members', () => {
    expect(codec.fromJson('platform.v1.VulnerabilityList', { vulns: [], next_page_token: '' })).toEqual({});
    expect(codec.fromJson('platform.v1.BatchVulnerabilityList', { results: [{}, { vulns: [] }] })).toEqual({ results: [{}, {}] });
    expect(codec.fromJson('platform.v1.Query', { version: '', package: {} })).toEqual({ version: '', package: {} });
    expect(codec.fromJson('platform.v1.Severity', { type: 'TYPE_UNSPECIFIED', score: '' })).toEqual({});
    expect(codec.fromJson('platform.v1.Query', { page_token: null, package: null })).toEqual({});
    const wire = throughWire('platform.v1.Query', { version: '', package: {} }, { service: 'platform.v1.PlatformOSV', method: 'Query' }, 'request');
    expect(wire).toEqual({ version: '', package: {} });
  });

  it('refuses both members of a oneof, unknown fields and wrong types with INVALID_ARGUMENT', () => {
    const refuse = (type: string, value: unknown) => {
      try {
        codec.fromJson(type, value);
      } catch (error) {
        expect(error).toBeInstanceOf(AppError);
        expect((error as AppError).grpcCode).toBe(3);
        return (error as AppError).message;
      }
      throw new Error(`accepted ${JSON.stringify(value)}`);
    };
    expect(refuse('platform.v1.Query', { commit: 'abc', version: '1.0' })).toContain('only one of commit, version');
    expect(refuse('platform.v1.Query', { package: { name: 'x', nmae: 'y' } })).toBe('body.package.nmae: unknown field');
    expect(refuse('platform.v1.Query', { version: 1 })).toBe('body.version: expected a string');
    expect(refuse('platform.v1.Query', [])).toBe('body: expected a JSON object');
    expect(refuse('platform.v1.ListDocumentsRequest', { page_size: 1.5 })).toContain('expected an integer');
    expect(refuse('platform.v1.ListDocumentsRequest', { page_size: 2 ** 31 })).toContain('from -2147483648 to 2147483647');
    expect(refuse('platform.v1.Document', { size_bytes: '12x' })).toContain('expected an integer');
    expect(refuse('platform.v1.Document', { ciphertext: 'not base64!' })).toContain('base64');
    expect(refuse('platform.v1.Vulnerability', { modified: '2022-02-30T00:00:00Z' })).toContain('RFC 3339');
    expect(refuse('platform.v1.Severity', { type: 'CVSS_V5' })).toContain('unknown value "CVSS_V5"');
    expect(refuse('platform.v1.Vulnerability', { database_specific: [1] })).toContain('expected a JSON object');
    expect(refuse('platform.v1.Vulnerability', { aliases: ['a', null] })).toContain('null is not allowed');
  });

  it('drops unknown fields of responses instead of failing', () => {
    expect(codec.fromJson('platform.v1.Vulnerability', { id: 'X', future_field: 1 }, { unknownFields: 'drop' })).toEqual({ id: 'X' });
  });

  it('accepts the lowerCamelCase names, numbers for int64, enum numbers and base64url, and writes the canonical forms', () => {
    expect(codec.fromJson('platform.v1.ListDocumentsRequest', { pageSize: '7', pageToken: 't' })).toEqual({ page_size: 7, page_token: 't' });
    expect(codec.fromJson('platform.v1.Document', { sizeBytes: 12, ciphertext: '-_8' })).toEqual({ size_bytes: '12', ciphertext: '+/8=' });
    expect(codec.fromJson('platform.v1.Severity', { type: 2 })).toEqual({ type: 'CVSS_V3' });
  });

  it('checks base64 of 12 MiB without overflowing the stack (regression: a repeated-group regex failed above ~3.2 MiB)', () => {
    const bytes = randomBytes(12 * 1024 * 1024);
    const text = bytes.toString('base64');
    expect(codec.fromJson('platform.v1.Document', { ciphertext: text })).toEqual({ ciphertext: text });
    const url = codec.fromJson('platform.v1.Document', { ciphertext: bytes.toString('base64url') }, { bytes: 'buffer' });
    expect((url.ciphertext as Buffer).equals(bytes)).toBe(true);
    expect(() => codec.fromJson('platform.v1.Document', { ciphertext: `${text.slice(0, -4)}AA!=` })).toThrow(/base64/);
    expect(() => codec.fromJson('platform.v1.Document', { ciphertext: `${text}A` })).toThrow(/base64/);
  });

  it('tells canonical base64 (standard alphabet, padded) from the rest in linear time', () => {
    for (const good of ['', 'AA==', 'AAA=', 'AAAA', '+/8=', 'AAAAAA==']) expect(isCanonicalBase64(good), good).toBe(true);
    for (const bad of ['A', 'AA', 'AA=', 'A===', 'AA=A', '====', '-_8=', 'AA== ', 'AAAA\n']) expect(isCanonicalBase64(bad), bad).toBe(false);
  });

  it('passes Buffers through on the gRPC side: no base64 round trip, no copy', () => {
    const ciphertext = randomBytes(64);
    const canonical = codec.fromJson('platform.v1.Document', { ciphertext, encryption: { nonce: Buffer.alloc(0) } }, { bytes: 'buffer' });
    expect(canonical.ciphertext).toBe(ciphertext);
    // An empty Buffer is the default value and left out, as empty base64 text is.
    expect(canonical).toEqual({ ciphertext, encryption: {} });
    expect(codec.toProto('platform.v1.Document', canonical).ciphertext).toBe(ciphertext);
    expect(codec.fromJson('platform.v1.Document', { ciphertext })).toEqual({ ciphertext: ciphertext.toString('base64') });
    const decoded = codec.fromProto('platform.v1.Document', { ciphertext }, { bytes: 'buffer' });
    expect(decoded.ciphertext).toBe(ciphertext);
    expect(codec.fromProto('platform.v1.Document', { ciphertext })).toEqual({ ciphertext: ciphertext.toString('base64') });
  });

  it('parses and formats RFC 3339 timestamps as proto3 JSON does (UTC, 0/3/6/9 fractional digits)', () => {
    const cases: [string, string][] = [
      ['2022-04-13T03:04:39.780694Z', '2022-04-13T03:04:39.780694Z'],
      ['2021-01-01T00:00:00.000Z', '2021-01-01T00:00:00Z'],
      ['2021-01-01T00:00:00.1Z', '2021-01-01T00:00:00.100Z'],
      ['2021-01-01T01:30:00+01:30', '2021-01-01T00:00:00Z'],
      ['2021-01-01t00:00:00.123456789z', '2021-01-01T00:00:00.123456789Z'],
      ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00Z'],
      ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59Z'],
    ];
    for (const [input, output] of cases) {
      const parsed = parseTimestamp(input);
      expect(parsed, input).toBeDefined();
      expect(formatTimestamp(parsed!.seconds, parsed!.nanos)).toBe(output);
    }
    for (const bad of ['2021-13-01T00:00:00Z', '2021-01-01 00:00:00Z', '2021-01-01T24:00:00Z', '2021-01-01T00:00:00', '10000-01-01T00:00:00Z']) {
      expect(parseTimestamp(bad), bad).toBeUndefined();
    }
  });

  it('reads canonical timestamps on the fast path exactly as parseTimestamp does, and leaves other forms to it', () => {
    // Every day of a leap and a common year, around the epoch, and at both ends of the proto3 range.
    const days: number[] = [];
    for (const year of [1, 4, 100, 400, 1900, 1969, 1970, 2000, 2023, 2024, 9999]) {
      const first = new Date(0);
      first.setUTCFullYear(year, 0, 1);
      for (let d = 0; d < 366; d++) days.push(first.getTime() + d * 86_400_000);
    }
    for (const ms of days) {
      const date = new Date(ms + 45_296_000); // 12:34:56
      if (date.getUTCFullYear() > 9999) continue;
      for (const frac of ['', '.120', '.123456', '.000000001']) {
        const text = formatTimestamp(BigInt(Math.floor(date.getTime() / 1000)), 0).replace('Z', `${frac}Z`);
        const slow = parseTimestamp(text);
        expect(canonicalTimestampSeconds(text), text).toBe(Number(slow!.seconds));
      }
    }
    // Not canonical (or not valid): the fast path declines, the general path decides.
    for (const text of ['2021-01-01T00:00:00.000Z', '2021-01-01T00:00:00.100000Z', '2021-01-01T00:00:00.1Z', '2021-01-01t00:00:00Z', '2021-01-01T00:00:00+00:00', '2021-02-29T00:00:00Z', '2024-02-30T00:00:00Z', '2021-04-31T00:00:00Z', '0000-01-01T00:00:00Z', '2021-01-01T24:00:00Z', '2021-01-01T00:60:00Z', '2021-01-01T00:00:60Z', '2021-1a-01T00:00:00Z', '2021-01-01T00:00:00.12aZ']) {
      expect(canonicalTimestampSeconds(text), text).toBeUndefined();
    }
    expect(canonicalTimestampSeconds('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29) / 1000);
    expect(codec.fromJson('platform.v1.Vulnerability', { modified: '2021-01-01T00:00:00.000Z' })).toEqual({ modified: '2021-01-01T00:00:00Z' });
    expect(() => codec.fromJson('platform.v1.Vulnerability', { modified: '2021-02-29T00:00:00Z' })).toThrow(/modified: expected an RFC 3339 timestamp/);
  });

  it('encodes canonical JSON to the wire in one pass, read back as proto-loader reads what it serializes (the gRPC response path)', () => {
    const m = protos.services.get('platform.v1.PlatformOSV')?.get('GetVuln');
    if (!m) throw new Error('no method');
    const roundTrip = (typeName: string, json: Record<string, unknown>, deserialize: (bytes: Buffer) => object) => {
      const canonical = codec.fromJson(typeName, json, { bytes: 'buffer' });
      const encoded = Buffer.from(codec.encode(typeName, canonical));
      expect(codec.fromProto(typeName, deserialize(encoded) as Record<string, unknown>, { bytes: 'buffer' }), typeName).toEqual(canonical);
      return encoded;
    };
    const encoded = roundTrip('platform.v1.Vulnerability', record, m.definition.responseDeserialize);
    // The same bytes as protobufjs writes, but for default values left out (proto-loader writes `nanos: 0`).
    expect(encoded.equals(m.definition.responseSerialize(codec.toProto('platform.v1.Vulnerability', codec.fromJson('platform.v1.Vulnerability', { ...record, published: '2021-01-01T00:00:00.001Z' }))))).toBe(false);
    const withNanos = { ...record, published: '2021-01-01T00:00:00.001Z', modified: '2022-04-13T03:04:39.780694Z' };
    const exact = Buffer.from(codec.encode('platform.v1.Vulnerability', codec.fromJson('platform.v1.Vulnerability', withNanos)));
    expect(exact.equals(m.definition.responseSerialize(codec.toProto('platform.v1.Vulnerability', codec.fromJson('platform.v1.Vulnerability', withNanos))))).toBe(true);
    // Pre-epoch and non-canonical timestamps, enums by name, Struct values of every kind, non-ASCII text.
    roundTrip('platform.v1.Vulnerability', { id: 'X-é✓😀', modified: '1969-12-31T23:59:59.000000001Z', published: '0001-01-01T00:00:00Z', withdrawn: '2021-01-01T01:30:00+01:30', severity: [{ type: 'CVSS_V4', score: '' }], affected: [{ database_specific: { n: -0.5, big: 1e300, none: null, t: true, s: 'x', l: [[], {}] } }] }, m.definition.responseDeserialize);
    // int64 (as strings, up to the maximum), bytes as Buffers and as base64, int32 negative and large.
    roundTrip('platform.v1.Document', { id: 'doc', size_bytes: '9223372036854775807', ciphertext: randomBytes(300).toString('base64'), encryption: { nonce: 'AAEC' }, create_time: '2024-02-29T12:00:00.5Z' }, (bytes) => codec.type('platform.v1.Document').toObject(codec.type('platform.v1.Document').decode(bytes), { keepCase: true, longs: String, enums: String, bytes: Buffer, oneofs: true } as never));
    const list = codec.type('platform.v1.ListDocumentsRequest');
    const listBytes = Buffer.from(codec.encode('platform.v1.ListDocumentsRequest', { page_size: -5 }));
    expect(list.decode(listBytes).toJSON()).toEqual({ page_size: -5 });
    expect(list.decode(Buffer.from(codec.encode('platform.v1.ListDocumentsRequest', { page_size: 2_000_000_000 }))).toJSON()).toEqual({ page_size: 2_000_000_000 });
  });
});
