// The QueryBatch fast path (src/osv/osv.batch-answer.ts: each result written to JSON text or protobuf bytes by a
// writer for its one fixed shape, spliced into the answer through RpcMethod.sharedElements) against the generated
// codec (@bufbuild/protobuf with protoc-gen-es's schemas) reading the same result JSON with `fromJson` and writing
// it with `toJsonString` / `toBinary`: the same text and bytes for every `modified` of the OSV corpus, for random
// results (ids in any script, timestamps canonical or not, from year 1 to 9999, page tokens or none), and the same
// refusal for a timestamp the generated codec cannot read. Issue 12, item 3.
import { create, fromJson, toBinary, toJsonString, type JsonValue } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JSON_WRITE } from '../../src/grpc/codec.ts';
import { BatchVulnerabilityListSchema, VulnerabilityListSchema } from '../../src/grpc/generated/es/platform/v1/osv_pb.ts';
import { prepareElement, sharedElementsOf, splicedBytes, splicedJson } from '../../src/grpc/spliced-answers.ts';
import { batchResultBytes, batchResultJson, encodeBatchResult, type BatchResultJson } from '../../src/osv/osv.batch-answer.ts';
import { validateOsvRecord } from '../../src/osv/osv.schema.ts';
import { listSourceFiles, readSources } from '../../src/osv/osv.sources.ts';
import { sharedCorpusPaths } from '../osv/osv-support.ts';
import { fixturePath, skipWithoutBulk } from '../support/shared.ts';

const results = sharedElementsOf(BatchVulnerabilityListSchema, 'results', 'test');

/** Fails naming the result unless both writers give the same JSON text and protobuf bytes for it. */
function compareResult(result: BatchResultJson): void {
  const message = fromJson(VulnerabilityListSchema, result as unknown as JsonValue);
  const label = JSON.stringify(result);
  expect(batchResultJson(result), label).toBe(toJsonString(VulnerabilityListSchema, message, JSON_WRITE));
  expect(Buffer.from(batchResultBytes(result)).equals(toBinary(VulnerabilityListSchema, message)), `${label}: protobuf bytes differ`).toBe(
    true,
  );
}

/** A whole answer spliced from fast-path results, against the generated codec writing the whole message. */
function compareAnswer(answer: BatchResultJson[]): void {
  const whole = fromJson(BatchVulnerabilityListSchema, { results: answer } as unknown as JsonValue);
  const rest = create(BatchVulnerabilityListSchema);
  const as = (form: 'json' | 'wire') => answer.map((r) => prepareElement(results, encodeBatchResult(r, form), false));
  expect(splicedJson(BatchVulnerabilityListSchema, rest, results, as('json')).toString()).toBe(
    toJsonString(BatchVulnerabilityListSchema, whole, JSON_WRITE),
  );
  expect(splicedBytes(BatchVulnerabilityListSchema, rest, results, as('wire')).equals(toBinary(BatchVulnerabilityListSchema, whole))).toBe(
    true,
  );
}

/** `{id, modified}` of every valid record under `paths`. */
async function corpusEntries(paths: string[]): Promise<{ id: string; modified: string }[]> {
  const entries: { id: string; modified: string }[] = [];
  for await (const batch of readSources(await listSourceFiles(paths))) {
    for (const raw of batch) {
      if (!('value' in raw)) continue;
      const validated = validateOsvRecord(raw.value);
      if (validated.ok) entries.push({ id: validated.record.id, modified: validated.record.modified });
    }
  }
  return entries;
}

/** The entries cut into results of 0 to 6 entries, every third with a page token: the shapes a batch answers. */
function asResults(entries: readonly { id: string; modified: string }[]): BatchResultJson[] {
  const out: BatchResultJson[] = [];
  for (let at = 0, i = 0; at < entries.length; i++) {
    const size = i % 7;
    const result: BatchResultJson = {};
    if (size > 0) result.vulns = entries.slice(at, at + size);
    if (i % 3 === 0) result.next_page_token = `UDpHSFNBLX${i}`;
    at += size;
    out.push(result);
  }
  return out;
}

/** A timestamp text the generated codec reads: a fraction of 0 to 9 digits, canonical or not. */
const timestampText = fc
  .record({
    ms: fc.integer({ min: Date.parse('0001-01-01T00:00:00Z'), max: Date.parse('9999-12-31T23:59:59Z') }),
    fraction: fc.oneof(fc.constant(''), fc.stringMatching(/^[0-9]{1,9}$/), fc.constantFrom('000', '000000', '100', '120000', '000000001')),
  })
  .map(({ ms, fraction }) => `${new Date(ms - (ms % 1000)).toISOString().slice(0, 19)}${fraction === '' ? '' : `.${fraction}`}Z`);

const result = fc.record(
  {
    vulns: fc.array(fc.record({ id: fc.oneof(fc.string(), fc.string({ unit: 'grapheme' })), modified: timestampText }), { maxLength: 6 }),
    next_page_token: fc.string(),
  },
  { requiredKeys: [] },
);

describe('QueryBatch results written by the fast path against the generated codec', () => {
  it('writes the results of every record in the test fixtures as the generated codec does', async () => {
    const entries = await corpusEntries([fixturePath('osv', 'records')]);
    expect(entries.length).toBeGreaterThan(50);
    const answer = asResults(entries);
    for (const r of answer) compareResult(r);
    compareAnswer(answer);
  });

  it.skipIf(skipWithoutBulk)(
    'writes the results of every record of the shared OSV corpus as the generated codec does',
    { timeout: 120_000 },
    async () => {
      const entries = await corpusEntries(sharedCorpusPaths());
      expect(entries.length).toBeGreaterThan(5000);
      const answer = asResults(entries);
      for (const r of answer) compareResult(r);
      for (let at = 0; at < answer.length; at += 1000) compareAnswer(answer.slice(at, at + 1000));
    },
  );

  it('writes random results as the generated codec does', () => {
    fc.assert(
      fc.property(result, (r) => compareResult(r)),
      { seed: 1_212_026, numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.array(result, { maxLength: 30 }), (answer) => compareAnswer(answer)),
      { seed: 1_212_026, numRuns: 200 },
    );
  });

  it('writes the timestamps a reader could trip on as the generated codec does', () => {
    const texts = [
      '1970-01-01T00:00:00Z',
      '1970-01-01T00:00:00.000000001Z',
      '1969-12-31T23:59:59.999999999Z',
      '0001-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999999999Z',
      '2021-01-01T00:00:00.000Z',
      '2021-01-01T00:00:00.100Z',
      '2021-01-01T00:00:00.100000Z',
      '2021-01-01T00:00:00.000100Z',
      '2021-01-01T00:00:00.1Z',
      // Date.parse rolls these over (to March 2 and to the next day); the generated codec writes what it reads.
      '2021-02-30T00:00:00Z',
      '2021-01-01T24:00:00Z',
      // An offset instead of Z: the generated codec reads it and writes the instant in UTC.
      '2021-01-01T05:00:00+02:00',
    ];
    for (const modified of texts) compareResult({ vulns: [{ id: 'GHSA-1', modified }] });
    compareResult({ vulns: [{ id: '', modified: '2021-01-01T00:00:00Z' }], next_page_token: '' });
    compareResult({});
  });

  it('refuses a timestamp the generated codec refuses', () => {
    for (const modified of [
      '2021-01-01T23:59:60Z',
      '0000-01-01T00:00:00Z',
      '2021-13-01T00:00:00Z',
      'yesterday',
      '2021-01-01T00:00:00.1234567891Z',
    ]) {
      const r = { vulns: [{ id: 'GHSA-1', modified }] };
      expect(() => fromJson(VulnerabilityListSchema, r)).toThrow();
      expect(() => batchResultJson(r), modified).toThrow();
      expect(() => batchResultBytes(r), modified).toThrow();
    }
  });
});
