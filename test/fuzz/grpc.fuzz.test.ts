// Property-based fuzzing of the gRPC methods of PlatformDocuments and PlatformOSV and of their HTTP mappings
// (issue 12, item 6), on both databases: random and garbled protobuf bytes, random field values, random metadata and
// content types over raw HTTP/2; random paths, queries, bodies and headers over HTTP. The properties: never a 5xx
// and never UNKNOWN / INTERNAL / DATA_LOSS (INTERNAL only where the gRPC spec asks for it: a compressed-flag message
// without grpc-encoding), always the route's error body, and a refused request changes nothing (documents count).
//
// Runs are bounded (FUZZ_RUNS, default 60 per property) with a fixed seed (FUZZ_SEED, default below); on failure
// fast-check prints the seed and the shrunk counterexample, and `FUZZ_SEED=<seed> npx vitest run test/fuzz` replays.
import * as http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, grpcCall, startGrpcTestPlatform, tokenWith, type GrpcTestPlatform } from '../grpc/grpc-support.ts';
import { grpcFrame, rawGrpcOn, rawHttp } from '../grpc/raw-grpc.ts';
import { dialects } from '../support/databases.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 1_212_026);
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const PARAMS = { seed: SEED, numRuns: RUNS, endOnFailure: true } as const;

/** Codes a bug would produce; a correct server answers them only where the protocol says so. */
const BUG_CODES = new Set([grpc.status.UNKNOWN, grpc.status.INTERNAL, grpc.status.DATA_LOSS]);

const METHODS = [
  { path: '/platform.v1.PlatformDocuments/CreateDocument', type: 'platform.v1.CreateDocumentRequest' },
  { path: '/platform.v1.PlatformDocuments/ListDocuments', type: 'platform.v1.ListDocumentsRequest' },
  { path: '/platform.v1.PlatformDocuments/DeleteDocument', type: 'platform.v1.DeleteDocumentRequest' },
  { path: '/platform.v1.PlatformOSV/Query', type: 'platform.v1.Query' },
  { path: '/platform.v1.PlatformOSV/QueryBatch', type: 'platform.v1.BatchQuery' },
  { path: '/platform.v1.PlatformOSV/GetVuln', type: 'platform.v1.GetVulnRequest' },
] as const;

/** Text with what breaks storage and parsers: NUL, lone surrogates, escapes, long runs, ids that exist in form. */
const nastyText = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }), {
  arbitrary: fc.constantFrom(
    '',
    '\u0000',
    'a\u0000b',
    'GHSA-\u0000',
    '\ud800',
    '\udc00x',
    'GHSA-qc84-gqf4-9926',
    'pkg:npm/lodash@1.0.0',
    'npm',
    'PyPI',
    'X'.repeat(101),
    '%00',
    '../',
    'A256GCM',
  ),
  weight: 4,
});
const nastyBytes = fc.uint8Array({ maxLength: 48 }).map((b) => Buffer.from(b));

/** Random field values per request type, as protobufjs objects (snake_case names). */
const requestValues: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  'platform.v1.CreateDocumentRequest': fc.record(
    {
      ciphertext: nastyBytes,
      encryption: fc.record({ algorithm: nastyText, key_id: nastyText, nonce: nastyBytes }, { requiredKeys: [] }),
      encrypted_metadata: nastyBytes,
      request_id: nastyText,
    },
    { requiredKeys: [] },
  ),
  'platform.v1.ListDocumentsRequest': fc.record(
    { page_size: fc.integer({ min: -5, max: 2000 }), page_token: nastyText },
    { requiredKeys: [] },
  ),
  'platform.v1.DeleteDocumentRequest': fc.record({ id: nastyText }, { requiredKeys: [] }),
  'platform.v1.Query': fc.record(
    {
      commit: nastyText,
      version: nastyText,
      package: fc.record({ name: nastyText, ecosystem: nastyText, purl: nastyText }, { requiredKeys: [] }),
      page_token: nastyText,
    },
    { requiredKeys: [] },
  ),
  'platform.v1.BatchQuery': fc.record({
    queries: fc.array(
      fc.record(
        { version: nastyText, package: fc.record({ name: nastyText, ecosystem: nastyText }, { requiredKeys: [] }) },
        { requiredKeys: [] },
      ),
      { maxLength: 4 },
    ),
  }),
  'platform.v1.GetVulnRequest': fc.record({ id: nastyText }, { requiredKeys: [] }),
};

/** Garbles valid bytes: flips, truncations, insertions, or bytes with no relation to the message. */
function garbled(valid: Buffer): fc.Arbitrary<Buffer> {
  return fc.oneof(
    { arbitrary: fc.constant(valid), weight: 4 },
    fc.nat({ max: Math.max(0, valid.length) }).map((n) => valid.subarray(0, n)),
    fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })).map(([at, x]) => {
      const out = Buffer.from(valid);
      if (out.length > 0) out[at % out.length] = (out[at % out.length] ?? 0) ^ x;
      return out;
    }),
    nastyBytes.map((extra) => Buffer.concat([valid, extra])),
    nastyBytes,
  );
}

for (const dialect of dialects) {
  describe(`fuzzing the RPCs on ${dialect} (seed ${SEED}, ${RUNS} runs)`, () => {
    let p: GrpcTestPlatform;
    let token: string;
    let session: http2.ClientHttp2Session;

    const documentCount = async () =>
      Number(
        (
          await p.platform.ctx.database.db
            .selectFrom('documents')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    beforeAll(async () => {
      p = await startGrpcTestPlatform(dialect);
      token = await tokenWith(p.platform, [
        'CAP_PLATFORM_OSV_READ',
        'CAP_PLATFORM_DOCUMENTS_CREATE',
        'CAP_PLATFORM_DOCUMENTS_LIST',
        'CAP_PLATFORM_DOCUMENTS_DELETE',
      ]);
      // One stored document, so deletes and pages have something to act on.
      const client = p.documentsClient();
      await grpcCall((cb) =>
        client.CreateDocument({ ciphertext: Buffer.from('seed'), encryption: { algorithm: 'A256GCM' } }, bearer(token), cb as never),
      );
      session = http2.connect(`http://${p.grpcAddress}`);
      session.on('error', () => undefined);
    }, 60_000);
    afterAll(async () => {
      session?.close();
      await p?.close();
    });

    it('answers random and garbled protobuf requests with random metadata without a bug status, and a refusal stores nothing', async () => {
      const encode = (typeName: string, value: Record<string, unknown>) => {
        const type = p.protos.codec.type(typeName);
        return Buffer.from(type.encode(type.fromObject(value)).finish());
      };
      const call = fc.constantFrom(...METHODS).chain((method) =>
        fc.record({
          method: fc.constant(method),
          bytes: (requestValues[method.type] as fc.Arbitrary<Record<string, unknown>>).chain((value) =>
            garbled(encode(method.type, value)),
          ),
          // Weighted towards calls that reach the handler, where the bugs of the handlers live.
          compressed: fc.oneof({ arbitrary: fc.constant(false), weight: 4 }, fc.constant(true)),
          encoding: fc.constantFrom(undefined, 'identity', 'gzip', 'deflate', 'snappy'),
          contentType: fc.oneof(
            { arbitrary: fc.constant('application/grpc'), weight: 4 },
            fc.constantFrom('application/grpc+proto', 'application/grpc+json', 'application/grpc-web', 'application/grpc; x=1'),
          ),
          authorization: fc.oneof(
            { arbitrary: fc.constant<string | undefined>('valid'), weight: 4 },
            fc.constant(undefined),
            fc.string({ maxLength: 30 }).map((s) => `Bearer ${s}`),
            fc.string({ maxLength: 30 }),
          ),
          extra: fc.dictionary(fc.stringMatching(/^x-[a-z0-9-]{1,12}$/), fc.stringMatching(/^[ -~]{0,20}$/), { maxKeys: 3 }),
        }),
      );
      await fc.assert(
        fc.asyncProperty(call, async (c) => {
          const headers: http2.OutgoingHttpHeaders = { ...c.extra, 'content-type': c.contentType };
          if (c.encoding !== undefined) headers['grpc-encoding'] = c.encoding;
          if (c.authorization !== undefined)
            headers.authorization = c.authorization === 'valid' ? `Bearer ${token}` : c.authorization.replace(/[\r\n\0]/g, '');
          const before = await documentCount();
          const answer = await rawGrpcOn(session, c.method.path, grpcFrame(c.bytes, c.compressed), headers);
          const codec = c.contentType.startsWith('application/grpc+json') || c.contentType.startsWith('application/grpc-web');
          expect(answer.grpcStatus, 'every answer carries a grpc-status').toBeDefined();
          expect(answer.httpStatus).toBe(codec ? 415 : 200);
          const specInternal = c.compressed && (c.encoding === undefined || c.encoding === 'identity');
          const compressedGarbage = c.compressed && (c.encoding === 'gzip' || c.encoding === 'deflate');
          if (BUG_CODES.has(answer.grpcStatus as number)) {
            // INTERNAL where the compression spec asks for it: the flag without an encoding, or a body that does
            // not decompress (grpc-js: "Failed to decompress message").
            expect(answer.grpcStatus, `${answer.grpcMessage ?? ''}`).toBe(grpc.status.INTERNAL);
            expect(specInternal || compressedGarbage, answer.grpcMessage).toBe(true);
          }
          if (answer.grpcStatus !== grpc.status.OK) expect(await documentCount()).toBe(before);
        }),
        PARAMS,
      );
      expect(p.platform.logs.text()).not.toContain('rpc failed');
    }, 120_000);

    it("answers random HTTP mapping requests without a 5xx, in the route's error body, and a refusal stores nothing", async () => {
      // Ids are percent-encoded: a malformed escape is refused by the framework before routing (docs/grpc.md, "Error bodies", known gap).
      // A lone surrogate has no UTF-8 form to escape; it comes as U+FFFD (JSON bodies still carry lone surrogates).
      const escape = (s: string) => {
        try {
          return encodeURIComponent(s);
        } catch {
          return encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '\ufffd'));
        }
      };
      const id = nastyText.map((s) => escape(s.slice(0, 200)));
      const json = fc.oneof(
        fc.json({ maxDepth: 3 }),
        requestValues['platform.v1.CreateDocumentRequest']!.map((v) =>
          JSON.stringify(v, (_k, x: unknown) => (Buffer.isBuffer(x) ? x.toString('base64') : x)),
        ),
        fc
          .record(
            {
              package: fc.record({ name: nastyText, ecosystem: nastyText, purl: nastyText }, { requiredKeys: [] }),
              version: nastyText,
              commit: nastyText,
            },
            { requiredKeys: [] },
          )
          .map((v) => JSON.stringify(v)),
        fc.string({ maxLength: 40 }),
      );
      const request = fc.record({
        route: fc.oneof(
          fc.constant({ method: 'POST', path: '/platform/v1/documents', osv: false }),
          fc.constant({ method: 'GET', path: '/platform/v1/documents', osv: false }),
          id.map((i) => ({ method: 'DELETE', path: `/platform/v1/documents/${i}`, osv: false })),
          fc.constant({ method: 'POST', path: '/platform/v1/osv/query', osv: true }),
          fc.constant({ method: 'POST', path: '/platform/v1/osv/querybatch', osv: true }),
          id.map((i) => ({ method: 'GET', path: `/platform/v1/osv/vulns/${i}`, osv: true })),
          // No route: sent without a body (a body there is parsed by the framework before any hook of ours; see
          // docs/grpc.md, "Error bodies", known gap).
          fc
            .tuple(
              fc.constantFrom('PUT', 'PATCH', 'DELETE', 'GET'),
              fc.constantFrom('/platform/v1/osv/query', '/platform/v1/osv/vulns/X-1', '/platform/v1/osv/nothing'),
            )
            .map(([method, path]) => ({ method, path, osv: true, noRoute: true })),
        ),
        query: fc.dictionary(fc.constantFrom('page_size', 'page_token', 'id', 'bogus', 'package.name'), nastyText, { maxKeys: 2 }),
        body: fc.option(json, { nil: undefined }),
        contentType: fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'text/plain',
          'application/xml',
          'application/octet-stream',
        ),
        authorization: fc.oneof(
          { arbitrary: fc.constant('valid'), weight: 4 },
          fc.constant('none'),
          fc.constant('twice'),
          fc.stringMatching(/^Bearer [!-~]{0,20}$/),
        ),
      });
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const qs = new URLSearchParams(r.query).toString();
          const headers: string[] = [];
          if (r.authorization === 'valid' || r.authorization === 'twice') headers.push('authorization', `Bearer ${token}`);
          if (r.authorization === 'twice') headers.push('authorization', `Bearer ${token}`);
          if (!['valid', 'twice', 'none'].includes(r.authorization)) headers.push('authorization', r.authorization);
          const sendsBody = r.body !== undefined && r.route.method !== 'GET' && !('noRoute' in r.route);
          if (sendsBody) headers.push('content-type', r.contentType);
          const before = await documentCount();
          const answer = await rawHttp(
            `${p.restUrl}${r.route.path}${qs ? `?${qs}` : ''}`,
            r.route.method,
            headers,
            sendsBody ? r.body : undefined,
          );
          const label = `${r.route.method} ${r.route.path}: ${answer.status} ${answer.text}`;
          expect(answer.status, label).toBeLessThan(500);
          if (answer.status >= 400) {
            if (r.route.osv) {
              expect(Object.keys(answer.body as object).sort(), label).toEqual(['code', 'message']);
              expect(typeof (answer.body as { code: unknown }).code, label).toBe('number');
            } else {
              expect(answer.body, label).toEqual({ error: { code: expect.any(String) as string, message: expect.any(String) as string } });
            }
            expect(await documentCount(), label).toBe(before);
          }
        }),
        PARAMS,
      );
      expect(p.platform.logs.text()).not.toContain('rpc failed');
    }, 120_000);
  });
}
