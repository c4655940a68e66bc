// The hand-written codec (src/grpc/proto-json.ts, proto-wire.ts) against the generated one (@bufbuild/protobuf with
// protoc-gen-es's schemas, src/grpc/generated/es): for every record of the shared OSV corpus the stored answer
// forms (canonical JSON text and protobuf bytes, osv.answer.ts) must be byte for byte what the generated codec
// writes, and the generated codec must read those bytes back to the same message. Requests and documents too.
// Whatever fast path stays hand-written is held to the generated codec by this test (issue 12, item 3).
import { fromBinary, fromJson, toBinary, toJsonString, type DescMessage, type JsonValue } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { CreateDocumentRequestSchema, DocumentSchema, ListDocumentsResponseSchema } from '../../src/grpc/generated/es/platform/v1/documents_pb.ts';
import { BatchQuerySchema, QuerySchema, VulnerabilitySchema } from '../../src/grpc/generated/es/platform/v1/osv_pb.ts';
import { loadProtos } from '../../src/grpc/protos.ts';
import { encodeAnswer } from '../../src/osv/osv.answer.ts';
import { validateOsvRecord, type OsvRecord } from '../../src/osv/osv.schema.ts';
import { listSourceFiles, readSources } from '../../src/osv/osv.sources.ts';
import { sharedCorpusPaths } from '../osv/osv-support.ts';
import { skipWithoutBulk } from '../support/shared.ts';

const codec = loadProtos().codec;

/** The generated codec's proto3 JSON text (proto field names: every field's json_name is its proto name). */
function generatedJson(schema: DescMessage, value: unknown): { json: string; wire: Buffer } {
  const message = fromJson(schema, value as JsonValue);
  return { json: toJsonString(schema, message), wire: Buffer.from(toBinary(schema, message)) };
}

/** The hand-written codec: canonical JSON (bytes as base64) and its one-pass wire encoding. */
function handWritten(typeName: string, value: unknown): { json: string; wire: Buffer } {
  const canonical = codec.fromJson(typeName, value, { where: 'test', bytes: 'base64' });
  return { json: JSON.stringify(canonical), wire: Buffer.from(codec.encode(typeName, canonical)) };
}

describe('the hand-written codec against the generated one', () => {
  it.skipIf(skipWithoutBulk)('writes every record of the shared OSV corpus as the generated codec does (JSON text and protobuf bytes)', { timeout: 300_000 }, async () => {
    let records = 0;
    for await (const batch of readSources(await listSourceFiles(sharedCorpusPaths()))) {
      for (const raw of batch) {
        if (!('value' in raw)) continue;
        const validated = validateOsvRecord(raw.value);
        if (!validated.ok) continue;
        const record: OsvRecord = validated.record;
        const stored = encodeAnswer(record);
        // Strict: a record field the message does not declare would throw here instead of being dropped.
        const generated = generatedJson(VulnerabilitySchema, record);
        if (stored.json !== generated.json) expect.fail(`${record.id}: JSON differs\n${stored.json}\n${generated.json}`);
        if (!Buffer.from(stored.wire).equals(generated.wire)) expect.fail(`${record.id}: protobuf bytes differ`);
        expect(toJsonString(VulnerabilitySchema, fromBinary(VulnerabilitySchema, stored.wire))).toBe(stored.json);
        records++;
      }
    }
    expect(records).toBeGreaterThan(5000);
  });

  it('reads requests and writes documents as the generated codec does', () => {
    const queries = [
      { package: { ecosystem: 'PyPI', name: 'jinja2' }, version: '2.4.1' },
      { commit: '6879efc2c1596d11a6a6ad296f80063b558d5e0f' },
      { package: { purl: 'pkg:npm/%40scope/name@1.0.0' }, page_token: 'abc' },
      { package: { ecosystem: 'npm', name: 'x' } },
      {},
    ];
    for (const query of queries) expect(handWritten('platform.v1.Query', query)).toEqual(generatedJson(QuerySchema, query));
    const batch = { queries };
    expect(handWritten('platform.v1.BatchQuery', batch)).toEqual(generatedJson(BatchQuerySchema, batch));

    const createRequest = { ciphertext: Buffer.from([0, 1, 2, 250, 251, 255]).toString('base64'), encryption: { algorithm: 'A256GCM', key_id: 'k', nonce: 'AAAA' }, encrypted_metadata: '', request_id: 'r' };
    expect(handWritten('platform.v1.CreateDocumentRequest', createRequest)).toEqual(generatedJson(CreateDocumentRequestSchema, createRequest));
    const document = {
      id: '0f8fad5b-d9cb-469f-a165-70867728950e',
      creator_id: 'h1',
      size_bytes: '6',
      ciphertext: Buffer.from('sealed').toString('base64'),
      encryption: { algorithm: 'A256GCM', key_id: 'k', nonce: 'AQID' },
      create_time: '2024-01-02T03:04:05.678Z',
    };
    expect(handWritten('platform.v1.Document', document)).toEqual(generatedJson(DocumentSchema, document));
    const page = { documents: [document, { ...document, size_bytes: '0', ciphertext: '' }], next_page_token: 't' };
    expect(handWritten('platform.v1.ListDocumentsResponse', page)).toEqual(generatedJson(ListDocumentsResponseSchema, page));
    // The generated codec is strict about fields a message does not declare, as the hand-written one is for requests.
    expect(() => fromJson(DocumentSchema, { ...document, ciphertxt: '' })).toThrow(/ciphertxt/);
  });
});
