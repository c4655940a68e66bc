// The one hand-written fast path of the RPC layer (src/grpc/spliced-answers.ts: Query answers spliced from each
// record's stored JSON text and protobuf bytes) against the generated codec (@bufbuild/protobuf with protoc-gen-es's
// schemas, src/grpc/generated/es) writing the whole message: for every record of the shared OSV corpus, a spliced
// answer must be byte for byte what `toJsonString` / `toBinary` write for the same VulnerabilityList, whichever form
// each element came in; so must the JSON of bytes fields written with Node's base64 (messageToJson). The JSON request reader (lowerCamelCase names, paths in errors) must read what the generated
// codec reads. Issue 12, item 3: whatever fast path stays hand-written is held to the generated codec by this test.
import { create, fromBinary, fromJson, toBinary, toJsonString, type JsonObject, type JsonValue, type Message } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { configureTextEncoding } from '@bufbuild/protobuf/wire';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { JSON_WRITE, messageToJson, requestFromJson } from '../../src/grpc/codec.ts';
import {
  CreateDocumentRequestSchema,
  DocumentSchema,
  ListDocumentsRequestSchema,
  ListDocumentsResponseSchema,
} from '../../src/grpc/generated/es/platform/v1/documents_pb.ts';
import {
  BatchQuerySchema,
  QuerySchema,
  VulnerabilityListSchema,
  VulnerabilitySchema,
} from '../../src/grpc/generated/es/platform/v1/osv_pb.ts';
import { EncodedMessage } from '../../src/grpc/rpc.ts';
import { prepareElement, sharedElementsOf, splicedBytes, splicedJson } from '../../src/grpc/spliced-answers.ts';
import { nodeTextEncoding, runtimeTextEncoding, useNodeTextEncoding } from '../../src/grpc/text-encoding.ts';
import { encodeAnswer } from '../../src/osv/osv.answer.ts';
import { validateOsvRecord, type OsvRecord } from '../../src/osv/osv.schema.ts';
import { listSourceFiles, readSources } from '../../src/osv/osv.sources.ts';
import { sharedCorpusPaths } from '../osv/osv-support.ts';
import { fixturePath, skipWithoutBulk } from '../support/shared.ts';

const shared = sharedElementsOf(VulnerabilityListSchema, 'vulns', 'test');

/** A page of records as the generated codec writes the whole VulnerabilityList, and as the fast path splices it. */
function comparePage(records: readonly OsvRecord[], form: 'text' | 'utf8' | 'wire' | 'object'): void {
  const messages = records.map((r) => fromJson(VulnerabilitySchema, r as unknown as JsonValue, { ignoreUnknownFields: true }));
  const whole = create(VulnerabilityListSchema, { vulns: messages, nextPageToken: 'UDpHSFNB' });
  const rest = create(VulnerabilityListSchema, { nextPageToken: 'UDpHSFNB' });
  const elements = records.map((record) => {
    const stored = encodeAnswer(record);
    if (form === 'object') return prepareElement(shared, record, true);
    if (form === 'wire') return prepareElement(shared, new EncodedMessage(undefined, stored.wire), true);
    return prepareElement(shared, new EncodedMessage(form === 'text' ? stored.json : Buffer.from(stored.json), undefined), true);
  });
  const json = splicedJson(VulnerabilityListSchema, rest, shared, elements).toString();
  if (json !== toJsonString(VulnerabilityListSchema, whole, JSON_WRITE))
    expect.fail(`${records.map((r) => r.id).join(' ')} (${form}): JSON differs`);
  if (!splicedBytes(VulnerabilityListSchema, rest, shared, elements).equals(toBinary(VulnerabilityListSchema, whole)))
    expect.fail(`${records.map((r) => r.id).join(' ')} (${form}): protobuf bytes differ`);
}

describe('the spliced Query answers against the generated codec', () => {
  it.skipIf(skipWithoutBulk)(
    'writes every record of the shared OSV corpus as the generated codec does, from each stored form',
    { timeout: 300_000 },
    async () => {
      let records = 0;
      const forms = ['text', 'utf8', 'wire', 'object'] as const;
      for await (const batch of readSources(await listSourceFiles(sharedCorpusPaths()))) {
        const page: OsvRecord[] = [];
        for (const raw of batch) {
          if (!('value' in raw)) continue;
          const validated = validateOsvRecord(raw.value);
          if (!validated.ok) continue;
          const stored = encodeAnswer(validated.record);
          // The stored bytes read back as the message whose JSON was stored.
          expect(toJsonString(VulnerabilitySchema, fromBinary(VulnerabilitySchema, stored.wire), JSON_WRITE)).toBe(stored.json);
          page.push(validated.record);
          records++;
          if (page.length === 50) comparePage(page.splice(0), forms[records % forms.length] as (typeof forms)[number]);
        }
        if (page.length > 0) comparePage(page, 'wire');
      }
      expect(records).toBeGreaterThan(5000);
    },
  );

  it('splices records from each form, one record, none, and a mix, as the generated codec writes them', () => {
    const a = {
      id: 'GHSA-aaaa',
      modified: '2022-04-13T03:04:39.780694Z',
      not_in_proto: 1,
      aliases: ['CVE-1'],
      affected: [{ package: { name: 'jinja2', ecosystem: 'PyPI' }, ecosystem_specific: { severity: 'HIGH', list: [1, null] } }],
    };
    const b = {
      id: 'PYSEC-2021-1',
      modified: '2021-01-01T00:00:00Z',
      details: 'Details ü 😀',
      credits: [{ name: 'Someone', type: 'FINDER' }],
    };
    for (const form of ['text', 'utf8', 'wire', 'object'] as const) {
      comparePage([a, b, a], form);
      comparePage([b], form);
      comparePage([], form);
    }
    const rest = create(VulnerabilityListSchema);
    const mixed = [prepareElement(shared, new EncodedMessage(encodeAnswer(a).json, undefined), true), prepareElement(shared, b, true)];
    const whole = create(VulnerabilityListSchema, {
      vulns: [a, b].map((r) => fromJson(VulnerabilitySchema, r as JsonValue, { ignoreUnknownFields: true })),
    });
    expect(splicedJson(VulnerabilityListSchema, rest, shared, mixed).toString()).toBe(
      toJsonString(VulnerabilityListSchema, whole, JSON_WRITE),
    );
  });

  it('writes bytes fields with native base64 exactly as the generated toJson does, and leaves the message unchanged', () => {
    const documents = [0, 1, 2, 3, 4, 100, 65_537].map((size, i) =>
      create(DocumentSchema, {
        id: `d${i}`,
        sizeBytes: BigInt(size),
        ciphertext: randomBytes(size),
        encryption: { algorithm: 'A256GCM', keyId: i % 2 ? 'k' : '', nonce: randomBytes(i % 3 ? 12 : 0) },
        encryptedMetadata: randomBytes(i),
        createTime: timestampFromMs(1_700_000_000_123 + i),
      }),
    );
    for (const document of documents) {
      const before = toBinary(DocumentSchema, document);
      expect(JSON.stringify(messageToJson(DocumentSchema, document))).toBe(toJsonString(DocumentSchema, document, JSON_WRITE));
      expect(toBinary(DocumentSchema, document)).toEqual(before);
    }
    const page = create(ListDocumentsResponseSchema, { documents, nextPageToken: 't' });
    expect(JSON.stringify(messageToJson(ListDocumentsResponseSchema, page))).toBe(
      toJsonString(ListDocumentsResponseSchema, page, JSON_WRITE),
    );
    expect(JSON.stringify(messageToJson(ListDocumentsResponseSchema, create(ListDocumentsResponseSchema)))).toBe('{}');
  });

  it('reads requests as the generated codec does, lowerCamelCase names included', () => {
    const read = (schema: Parameters<typeof requestFromJson>[0], value: unknown): Message => requestFromJson(schema, value, 'body');
    const queries: JsonObject[] = [
      { package: { ecosystem: 'PyPI', name: 'jinja2' }, version: '2.4.1' },
      { commit: '6879efc2c1596d11a6a6ad296f80063b558d5e0f' },
      { package: { purl: 'pkg:npm/%40scope/name@1.0.0' }, page_token: 'abc' },
      { package: { ecosystem: 'npm', name: 'x' } },
      {},
    ];
    for (const query of queries) expect(read(QuerySchema, query)).toEqual(fromJson(QuerySchema, query));
    expect(read(BatchQuerySchema, { queries })).toEqual(fromJson(BatchQuerySchema, { queries }));
    const createRequest = {
      ciphertext: Buffer.from([0, 1, 2, 250, 251, 255]).toString('base64'),
      encryption: { algorithm: 'A256GCM', key_id: 'k', nonce: 'AAAA' },
      encrypted_metadata: '',
      request_id: 'r',
    };
    expect(read(CreateDocumentRequestSchema, createRequest)).toEqual(fromJson(CreateDocumentRequestSchema, createRequest));
    const camel = {
      ciphertext: createRequest.ciphertext,
      encryption: { algorithm: 'A256GCM', keyId: 'k', nonce: 'AAAA' },
      encryptedMetadata: '',
      requestId: 'r',
    };
    expect(read(CreateDocumentRequestSchema, camel)).toEqual(fromJson(CreateDocumentRequestSchema, createRequest));
    expect(read(ListDocumentsRequestSchema, { pageSize: 5, pageToken: 't' })).toEqual(
      fromJson(ListDocumentsRequestSchema, { page_size: 5, page_token: 't' }),
    );
    // The generated codec is strict about fields a message does not declare, as the reader is.
    expect(() => fromJson(CreateDocumentRequestSchema, { ...createRequest, ciphertxt: '' })).toThrow(/ciphertxt/);
    expect(() => read(CreateDocumentRequestSchema, { ...createRequest, ciphertxt: '' })).toThrow('body.ciphertxt: unknown field');
  });

  it("encodes and checks text with Node's routines exactly as the runtime's TextEncoder and encodeURIComponent do", () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.string({ unit: 'grapheme', maxLength: 60 }),
      fc.constantFrom('', '\ud800', 'a\udc00b', '\udbff\udfff', '\udfff\udbff', '\u0000', 'x'.repeat(70_000) + '\ud83d'),
    );
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 4 }), (parts) => {
        const value = parts.join('');
        expect(Buffer.from(nodeTextEncoding.encodeUtf8(value)).equals(runtimeTextEncoding.encodeUtf8(value))).toBe(true);
        expect(nodeTextEncoding.checkUtf8(value)).toBe(runtimeTextEncoding.checkUtf8(value));
      }),
      { seed: 1_212_026, numRuns: 3000 },
    );
  });

  it("writes the records of the test fixtures to the same bytes with Node's encoder as with the runtime's own", async () => {
    const records: OsvRecord[] = [];
    for await (const batch of readSources(await listSourceFiles([fixturePath('osv', 'records')]))) {
      for (const raw of batch) {
        const validated = 'value' in raw ? validateOsvRecord(raw.value) : undefined;
        if (validated?.ok) records.push(validated.record);
      }
    }
    expect(records.length).toBeGreaterThan(50);
    const messages = records.map((r) => fromJson(VulnerabilitySchema, r as unknown as JsonValue, { ignoreUnknownFields: true }));
    let stock: Uint8Array[];
    try {
      configureTextEncoding(runtimeTextEncoding);
      stock = messages.map((m) => toBinary(VulnerabilitySchema, m));
    } finally {
      useNodeTextEncoding();
    }
    messages.forEach((m, i) => expect(Buffer.from(toBinary(VulnerabilitySchema, m)).equals(stock[i] as Uint8Array)).toBe(true));
  });
});
