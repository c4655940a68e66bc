// Hostile input at the RPC boundary of PlatformDocuments and PlatformOSV (issue 12, item 6), on both transports and
// both databases: text the databases cannot store, malformed protobuf bytes, several `authorization` values, the
// compressed flag without `grpc-encoding`, codecs this server does not speak, and one error body style per route.
// Each case is named after the bug it pins; raw HTTP/2 requests send exactly the frames a test needs.
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../support/databases.ts';
import { bearer, grpcCall, grpcError, httpJson, startGrpcTestPlatform, tokenWith, type GrpcTestPlatform } from './grpc-support.ts';
import { grpcFrame, rawGrpc, rawHttp } from './raw-grpc.ts';

const UNSTORABLE = 'contains a character that cannot be stored (NUL or an unpaired surrogate)';
const DOCS = '/platform.v1.PlatformDocuments';
const OSV = '/platform.v1.PlatformOSV';

for (const dialect of dialects) {
  describe(`RPC input on ${dialect}`, () => {
    let p: GrpcTestPlatform;
    let token: string;

    const documentCount = async () =>
      Number(
        (
          await p.platform.ctx.database.db
            .selectFrom('documents')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const encode = (typeName: string, value: Record<string, unknown>) => {
      const type = p.protos.codec.type(typeName);
      return type.encode(type.fromObject(value)).finish();
    };
    const createBytes = () =>
      encode('platform.v1.CreateDocumentRequest', {
        ciphertext: Buffer.from('secret'),
        encryption: { algorithm: 'A256GCM', key_id: 'k1' },
      });

    beforeAll(async () => {
      p = await startGrpcTestPlatform(dialect);
      token = await tokenWith(p.platform, [
        'CAP_PLATFORM_OSV_READ',
        'CAP_PLATFORM_DOCUMENTS_CREATE',
        'CAP_PLATFORM_DOCUMENTS_LIST',
        'CAP_PLATFORM_DOCUMENTS_DELETE',
      ]);
    }, 60_000);
    afterAll(async () => p?.close());

    it("answers GetVuln of an id holding NUL with INVALID_ARGUMENT / 400 in OSV.dev's body (regression: PostgreSQL answered INTERNAL / 500, SQLite NOT_FOUND)", async () => {
      const client = p.osvClient();
      const g = await grpcError(grpcCall((cb) => client.GetVuln({ id: 'GHSA-\u0000x' }, bearer(token), cb as never)));
      expect([g.code, g.details]).toEqual([grpc.status.INVALID_ARGUMENT, `id: ${UNSTORABLE}`]);
      const h = await httpJson(`${p.restUrl}/platform/v1/osv/vulns/GHSA-%00x`, { token });
      expect([h.status, h.body]).toEqual([400, { code: 3, message: `id: ${UNSTORABLE}` }]);
      // Queries and batch items too, by the field's proto path; an unpaired surrogate can only come as JSON.
      const q = await grpcError(
        grpcCall((cb) => client.Query({ package: { ecosystem: 'npm', name: 'a\u0000' } }, bearer(token), cb as never)),
      );
      expect([q.code, q.details]).toEqual([grpc.status.INVALID_ARGUMENT, `package.name: ${UNSTORABLE}`]);
      const b = await httpJson(`${p.restUrl}/platform/v1/osv/querybatch`, {
        method: 'POST',
        token,
        body: '{"queries":[{"package":{"ecosystem":"npm","name":"a"}},{"version":"1\\ud800"}]}',
      });
      expect([b.status, b.body]).toEqual([400, { code: 3, message: `queries.1.version: ${UNSTORABLE}` }]);
      expect(p.platform.logs.text()).not.toContain('rpc failed');
    });

    it('refuses NUL in every PlatformDocuments text field with INVALID_ARGUMENT / 400 in the envelope and stores nothing (regression: PostgreSQL answered INTERNAL)', async () => {
      const before = await documentCount();
      const client = p.documentsClient();
      const c = await grpcError(
        grpcCall((cb) =>
          client.CreateDocument(
            { ciphertext: Buffer.from('x'), encryption: { algorithm: 'A256GCM' }, request_id: 'r\u0000' },
            bearer(token),
            cb as never,
          ),
        ),
      );
      expect([c.code, c.details]).toEqual([grpc.status.INVALID_ARGUMENT, `request_id: ${UNSTORABLE}`]);
      const h = await httpJson(`${p.restUrl}/platform/v1/documents`, {
        method: 'POST',
        token,
        body: { ciphertext: 'eA==', encryption: { algorithm: 'A256GCM', key_id: 'k\ud800' } },
      });
      expect([h.status, h.body]).toEqual([400, { error: { code: 'parameter_invalid', message: `encryption.key_id: ${UNSTORABLE}` } }]);
      const l = await httpJson(`${p.restUrl}/platform/v1/documents?page_token=a%00b`, { token });
      expect([l.status, l.body]).toEqual([400, { error: { code: 'parameter_invalid', message: `page_token: ${UNSTORABLE}` } }]);
      const d = await httpJson(`${p.restUrl}/platform/v1/documents/abc%00`, { method: 'DELETE', token });
      expect([d.status, d.body]).toEqual([400, { error: { code: 'parameter_invalid', message: `id: ${UNSTORABLE}` } }]);
      expect(await documentCount()).toBe(before);
    });

    it('answers malformed protobuf bytes with INVALID_ARGUMENT, after authentication (regression: INTERNAL)', async () => {
      const garbage = grpcFrame(Buffer.from([0xff, 0xff, 0xff, 0xff]));
      const before = await documentCount();
      for (const path of [
        `${DOCS}/CreateDocument`,
        `${DOCS}/ListDocuments`,
        `${DOCS}/DeleteDocument`,
        `${OSV}/Query`,
        `${OSV}/QueryBatch`,
        `${OSV}/GetVuln`,
      ]) {
        const answer = await rawGrpc(p.grpcAddress, path, garbage, { authorization: `Bearer ${token}` });
        expect([answer.httpStatus, answer.grpcStatus, answer.grpcMessage], path).toEqual([
          200,
          grpc.status.INVALID_ARGUMENT,
          'request: not a valid protobuf message of the request type',
        ]);
        // A stranger learns nothing from validation.
        const stranger = await rawGrpc(p.grpcAddress, path, garbage);
        expect(stranger.grpcStatus, path).toBe(grpc.status.UNAUTHENTICATED);
      }
      // A field with wire type 7, which protobuf does not define: the same answer.
      expect(
        (await rawGrpc(p.grpcAddress, `${OSV}/GetVuln`, grpcFrame(Buffer.from([0x0f])), { authorization: `Bearer ${token}` })).grpcStatus,
      ).toBe(grpc.status.INVALID_ARGUMENT);
      expect(await documentCount()).toBe(before);
      expect(p.platform.logs.text()).not.toContain('rpc failed');
    });

    it("refuses two authorization headers on an HTTP mapping with 401 in the route's style, even two valid ones (regression: the first one counted)", async () => {
      // Over gRPC the reported INTERNAL is grpc-js's client refusing such metadata before sending anything; Node's
      // HTTP/2 server keeps one value of this single-value header, so a server never sees two there.
      const auth = ['authorization', `Bearer ${token}`, 'authorization', `Bearer ${token}`];
      const docs = await rawHttp(`${p.restUrl}/platform/v1/documents`, 'GET', auth);
      expect([docs.status, docs.body]).toEqual([401, { error: { code: 'unauthorized', message: 'more than one authorization value' } }]);
      const osv = await rawHttp(`${p.restUrl}/platform/v1/osv/vulns/X-1`, 'GET', auth);
      expect([osv.status, osv.body]).toEqual([401, { code: 16, message: 'more than one authorization value' }]);
    });

    it('fails a compressed-flag message without grpc-encoding with INTERNAL and stores nothing (regression: it was read as uncompressed)', async () => {
      const before = await documentCount();
      const flagged = grpcFrame(createBytes(), true);
      for (const headers of [{}, { 'grpc-encoding': 'identity' }]) {
        const answer = await rawGrpc(p.grpcAddress, `${DOCS}/CreateDocument`, flagged, { authorization: `Bearer ${token}`, ...headers });
        expect([answer.grpcStatus, answer.grpcMessage], JSON.stringify(headers)).toEqual([
          grpc.status.INTERNAL,
          'compressed message without a grpc-encoding',
        ]);
      }
      expect(await documentCount()).toBe(before);
      // Real compression still works, and an uncompressed message on a call that declares gzip too.
      const gzipped = await rawGrpc(p.grpcAddress, `${DOCS}/CreateDocument`, grpcFrame(gzipSync(createBytes()), true), {
        authorization: `Bearer ${token}`,
        'grpc-encoding': 'gzip',
      });
      expect(gzipped.grpcStatus).toBe(grpc.status.OK);
      const plain = await rawGrpc(p.grpcAddress, `${DOCS}/CreateDocument`, grpcFrame(createBytes()), {
        authorization: `Bearer ${token}`,
        'grpc-encoding': 'gzip',
      });
      expect(plain.grpcStatus).toBe(grpc.status.OK);
      expect(await documentCount()).toBe(before + 2);
    });

    it('refuses application/grpc+json and gRPC-Web with 415 and UNIMPLEMENTED without running the call (regression: their bodies were parsed as protobuf)', async () => {
      const before = await documentCount();
      for (const type of [
        'application/grpc+json',
        'application/grpc-web',
        'application/grpc-web+proto',
        'application/grpc-web-text',
        'application/GRPC+JSON; charset=utf-8',
      ]) {
        const answer = await rawGrpc(p.grpcAddress, `${DOCS}/CreateDocument`, grpcFrame(createBytes()), {
          authorization: `Bearer ${token}`,
          'content-type': type,
        });
        expect([answer.httpStatus, answer.grpcStatus, answer.grpcMessage], type).toEqual([
          415,
          grpc.status.UNIMPLEMENTED,
          'unsupported content-type: this server speaks application/grpc (protobuf) only',
        ]);
      }
      expect(await documentCount()).toBe(before);
      for (const type of ['application/grpc', 'application/grpc+proto', 'application/grpc; charset=utf-8']) {
        const answer = await rawGrpc(p.grpcAddress, `${DOCS}/ListDocuments`, grpcFrame(new Uint8Array(0)), {
          authorization: `Bearer ${token}`,
          'content-type': type,
        });
        expect([answer.httpStatus, answer.grpcStatus], type).toEqual([200, grpc.status.OK]);
      }
    });

    it("answers every error of an OSV mapping in OSV.dev's {code, message} and every error of a documents mapping in the envelope (regression: GetVuln mixed both)", async () => {
      const osvError = (body: unknown) => expect(Object.keys(body as object).sort()).toEqual(['code', 'message']);
      const cases: [string, string, string[], string | undefined, number][] = [
        ['/platform/v1/osv/vulns/X-1', 'GET', [], undefined, 401],
        ['/platform/v1/osv/vulns/X-1', 'GET', ['authorization', 'Bearer nope'], undefined, 401],
        ['/platform/v1/osv/vulns/X-1', 'GET', ['authorization', `Bearer ${token}`], undefined, 404],
        ['/platform/v1/osv/vulns/X-1?bogus=1', 'GET', ['authorization', `Bearer ${token}`], undefined, 400],
        [`/platform/v1/osv/vulns/${'X'.repeat(101)}`, 'GET', ['authorization', `Bearer ${token}`], undefined, 400],
        ['/platform/v1/osv/vulns/X-1', 'POST', ['authorization', `Bearer ${token}`], undefined, 405],
        ['/platform/v1/osv/vulns/X-1/more', 'GET', ['authorization', `Bearer ${token}`], undefined, 404],
        ['/platform/v1/osv/query', 'GET', ['authorization', `Bearer ${token}`], undefined, 405],
        ['/platform/v1/osv/query', 'POST', ['authorization', `Bearer ${token}`, 'content-type', 'application/json'], '{bad', 400],
        ['/platform/v1/osv/query', 'POST', ['authorization', `Bearer ${token}`, 'content-type', 'application/xml'], '<x/>', 415],
        ['/platform/v1/osv/querybatch', 'POST', ['content-type', 'application/json'], '{}', 401],
      ];
      for (const [path, method, headers, body, status] of cases) {
        const r = await rawHttp(`${p.restUrl}${path}`, method, headers, body);
        expect(r.status, `${method} ${path}`).toBe(status);
        osvError(r.body);
      }
      const docs: [string, string, string[], string | undefined, number][] = [
        ['/platform/v1/documents', 'GET', [], undefined, 401],
        ['/platform/v1/documents', 'PUT', ['authorization', `Bearer ${token}`], undefined, 405],
        ['/platform/v1/documents', 'POST', ['authorization', `Bearer ${token}`, 'content-type', 'application/json'], '{bad', 400],
        ['/platform/v1/documents', 'POST', ['authorization', `Bearer ${token}`, 'content-type', 'application/xml'], '<x/>', 415],
        ['/platform/v1/documents/nope', 'DELETE', ['authorization', `Bearer ${token}`], undefined, 404],
      ];
      for (const [path, method, headers, body, status] of docs) {
        const r = await rawHttp(`${p.restUrl}${path}`, method, headers, body);
        expect(r.status, `${method} ${path}`).toBe(status);
        expect(r.body, `${method} ${path}`).toEqual({
          error: { code: expect.any(String) as string, message: expect.any(String) as string },
        });
      }
    });
  });
}
