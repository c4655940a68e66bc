import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../../test/support/databases.ts';
import { bearer, grpcCall, httpJson, startGrpcTestPlatform, tokenWith, type GrpcTestPlatform } from '../../test/grpc/grpc-support.ts';
import type { Capability } from '../core/identity/identity.model.ts';
import type { CreateDocumentResponse__Output } from '../grpc/generated/platform/v1/CreateDocumentResponse.ts';
import type { Document__Output } from '../grpc/generated/platform/v1/Document.ts';
import type { ListDocumentsResponse__Output } from '../grpc/generated/platform/v1/ListDocumentsResponse.ts';
import type { PlatformDocumentsClient } from '../grpc/generated/platform/v1/PlatformDocuments.ts';

/**
 * PlatformDocuments on both transports and both dialects (issue 5, "Tests that must exist"): each RPC, each
 * capability refusal, cross-organization isolation, pagination over several pages (by count and by bytes),
 * idempotent create and the size limit.
 */

const MAX_BYTES = 4096;
const PAGE_MAX_BYTES = 16 * 1024;
const MiB = 1024 * 1024;

/** A document as a test sees it, whatever the transport. */
interface Doc {
  id: string;
  creator_id: string;
  size_bytes: string;
  ciphertext: Buffer;
  encryption: { algorithm: string; key_id: string; nonce: Buffer };
  encrypted_metadata: Buffer;
  request_id?: string | undefined;
  create_time: string;
}

/** CreateDocument's answer: the document without the ciphertext and encrypted metadata the client sent. */
type Created = Omit<Doc, 'ciphertext' | 'encrypted_metadata'>;

/** A listed document as CreateDocument answers it, to compare the two. */
function summaryOf(doc: Doc): Created {
  const { ciphertext: _ciphertext, encrypted_metadata: _metadata, ...summary } = doc;
  return summary;
}

interface NewDoc {
  ciphertext?: Buffer;
  encryption?: { algorithm?: string; key_id?: string; nonce?: Buffer };
  encrypted_metadata?: Buffer;
  request_id?: string;
}

/** A failed call: the gRPC code, and for HTTP the status and body too. */
class RpcFailure extends Error {
  constructor(
    readonly grpcCode: number,
    message: string,
    readonly httpStatus?: number,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

interface Api {
  create(token: string | undefined, doc: NewDoc): Promise<Created>;
  list(
    token: string | undefined,
    request?: { page_size?: number; page_token?: string },
  ): Promise<{ documents: Doc[]; next_page_token?: string | undefined }>;
  remove(token: string | undefined, id: string): Promise<void>;
}

const HTTP_TO_GRPC: Record<number, number> = { 400: 3, 401: 16, 403: 7, 404: 5, 409: 6, 413: 8, 500: 13, 504: 4 };

function createdFromGrpc(d: CreateDocumentResponse__Output): Created {
  return {
    id: d.id ?? '',
    creator_id: d.creator_id ?? '',
    size_bytes: d.size_bytes ?? '0',
    encryption: {
      algorithm: d.encryption?.algorithm ?? '',
      key_id: d.encryption?.key_id ?? '',
      nonce: d.encryption?.nonce ?? Buffer.alloc(0),
    },
    request_id: d.request_id || undefined,
    create_time: new Date(Number(d.create_time?.seconds ?? 0) * 1000 + Math.floor((d.create_time?.nanos ?? 0) / 1e6)).toISOString(),
  };
}

function fromGrpc(d: Document__Output): Doc {
  return {
    ...createdFromGrpc(d),
    ciphertext: d.ciphertext ?? Buffer.alloc(0),
    encrypted_metadata: d.encrypted_metadata ?? Buffer.alloc(0),
  };
}

function createdFromHttp(d: Record<string, unknown>): Created {
  const enc = (d.encryption ?? {}) as Record<string, string>;
  return {
    id: d.id as string,
    creator_id: d.creator_id as string,
    size_bytes: (d.size_bytes as string | undefined) ?? '0',
    encryption: { algorithm: enc.algorithm ?? '', key_id: enc.key_id ?? '', nonce: Buffer.from(enc.nonce ?? '', 'base64') },
    request_id: d.request_id as string | undefined,
    create_time: new Date(d.create_time as string).toISOString(),
  };
}

function fromHttp(d: Record<string, unknown>): Doc {
  return {
    ...createdFromHttp(d),
    ciphertext: Buffer.from((d.ciphertext as string | undefined) ?? '', 'base64'),
    encrypted_metadata: Buffer.from((d.encrypted_metadata as string | undefined) ?? '', 'base64'),
  };
}

function grpcApi(client: PlatformDocumentsClient): Api {
  const wrap = async <T>(promise: Promise<T>): Promise<T> => {
    try {
      return await promise;
    } catch (error) {
      const e = error as grpc.ServiceError;
      throw new RpcFailure(e.code, e.details);
    }
  };
  return {
    async create(token, doc) {
      const request = {
        ...(doc.ciphertext !== undefined ? { ciphertext: doc.ciphertext } : {}),
        ...(doc.encryption !== undefined ? { encryption: doc.encryption } : {}),
        ...(doc.encrypted_metadata !== undefined ? { encrypted_metadata: doc.encrypted_metadata } : {}),
        ...(doc.request_id !== undefined ? { request_id: doc.request_id } : {}),
      };
      return createdFromGrpc(
        await wrap(grpcCall<CreateDocumentResponse__Output>((cb) => client.CreateDocument(request, bearer(token), cb))),
      );
    },
    async list(token, request = {}) {
      const page = await wrap(grpcCall<ListDocumentsResponse__Output>((cb) => client.ListDocuments(request, bearer(token), cb)));
      return { documents: (page.documents ?? []).map(fromGrpc), next_page_token: page.next_page_token || undefined };
    },
    async remove(token, id) {
      await wrap(grpcCall((cb) => client.DeleteDocument({ id }, bearer(token), cb)));
    },
  };
}

function httpApi(base: string): Api {
  const call = async (url: string, init: Parameters<typeof httpJson>[1]) => {
    const response = await httpJson(url, init);
    if (response.status !== 200) {
      const error = (response.body as { error?: { message?: string } }).error;
      throw new RpcFailure(HTTP_TO_GRPC[response.status] ?? -1, error?.message ?? '', response.status, response.body);
    }
    return response.body;
  };
  return {
    async create(token, doc) {
      const body = {
        ...(doc.ciphertext ? { ciphertext: doc.ciphertext.toString('base64') } : {}),
        ...(doc.encryption
          ? { encryption: { ...doc.encryption, ...(doc.encryption.nonce ? { nonce: doc.encryption.nonce.toString('base64') } : {}) } }
          : {}),
        ...(doc.encrypted_metadata ? { encrypted_metadata: doc.encrypted_metadata.toString('base64') } : {}),
        ...(doc.request_id ? { request_id: doc.request_id } : {}),
      };
      return createdFromHttp(await call(`${base}/platform/v1/documents`, { method: 'POST', token, body }));
    },
    async list(token, request = {}) {
      const query = new URLSearchParams();
      if (request.page_size !== undefined) query.set('page_size', String(request.page_size));
      if (request.page_token !== undefined) query.set('page_token', request.page_token);
      const body = await call(`${base}/platform/v1/documents?${query.toString()}`, { token });
      return {
        documents: ((body.documents as Record<string, unknown>[] | undefined) ?? []).map(fromHttp),
        next_page_token: body.next_page_token as string | undefined,
      };
    },
    async remove(token, id) {
      await call(`${base}/platform/v1/documents/${encodeURIComponent(id)}`, { method: 'DELETE', token });
    },
  };
}

/** Every document of the caller, page by page. */
async function listAll(api: Api, token: string): Promise<Doc[]> {
  const all: Doc[] = [];
  let pageToken: string | undefined;
  do {
    const page = await api.list(token, pageToken ? { page_token: pageToken } : {});
    all.push(...page.documents);
    pageToken = page.next_page_token;
  } while (pageToken);
  return all;
}

/**
 * How many 16-byte chunks of `secret` (at 16-byte steps) occur anywhere in `files`. Any surviving run of 31 or more
 * contiguous bytes of it contains one of them.
 */
function chunksFound(secret: Buffer, files: string[]): number {
  // Indexed by each chunk's first four bytes, so the scan reads one integer per file offset and compares whole
  // chunks only on a hit (a substring per offset made this test take tens of seconds on a busy machine).
  const byPrefix = new Map<number, number[]>();
  for (let i = 0; i + 16 <= secret.length; i += 16) {
    const prefix = secret.readUInt32LE(i);
    byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), i]);
  }
  const found = new Set<number>();
  for (const file of files) {
    if (!existsSync(file)) continue;
    const bytes = readFileSync(file);
    for (let at = 0; at + 16 <= bytes.length; at++) {
      const starts = byPrefix.get(bytes.readUInt32LE(at));
      if (!starts) continue;
      for (const start of starts) if (bytes.compare(secret, start, start + 16, at, at + 16) === 0) found.add(start);
    }
  }
  return found.size;
}

/**
 * POSTs JSON that declares `declaredLength` bytes but sends only `sent` and never the rest: the answer can only
 * come from a server that did not wait for the body. Rejects when there is none within `waitMs`.
 */
function answerToIncompleteBody(
  url: string,
  headers: Record<string, string>,
  declaredLength: number,
  sent: string,
  waitMs = 3000,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'content-length': String(declaredLength) } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          clearTimeout(timer);
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${waitMs} ms while the body was incomplete`));
    }, waitMs);
    req.on('error', () => undefined);
    req.write(sent);
  });
}

async function failure(promise: Promise<unknown>): Promise<RpcFailure> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RpcFailure) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

function sampleDoc(bytes = 64, requestId?: string): NewDoc {
  return {
    ciphertext: randomBytes(bytes),
    encryption: { algorithm: 'A256GCM-HKDF-SHA256/v1', key_id: 'k1', nonce: randomBytes(12) },
    encrypted_metadata: randomBytes(24),
    ...(requestId ? { request_id: requestId } : {}),
  };
}

const ALL: Capability[] = ['CAP_PLATFORM_DOCUMENTS_CREATE', 'CAP_PLATFORM_DOCUMENTS_LIST', 'CAP_PLATFORM_DOCUMENTS_DELETE'];

for (const dialect of dialects) {
  describe(`PlatformDocuments (${dialect})`, () => {
    let p: GrpcTestPlatform;
    let apis: Record<'grpc' | 'http', Api>;

    /** A fresh organization (Account) with an owner token holding every document capability. */
    async function newOrg(): Promise<{ token: string; accountId: string; humanId: string }> {
      const owner = await p.platform.ctx.identity.bootstrap({ accountName: 'Org', email: `o-${randomUUID()}@example.test` });
      const token = await p.platform.ctx.identity.createToken({ humanId: owner.human_id, plane: 'platform', capabilities: ALL });
      return { token: token.token, accountId: owner.account_id, humanId: owner.human_id };
    }

    beforeAll(async () => {
      p = await startGrpcTestPlatform(dialect, {
        env: { PLATFORM_DOCUMENT_MAX_BYTES: String(MAX_BYTES), PLATFORM_DOCUMENT_PAGE_MAX_BYTES: String(PAGE_MAX_BYTES) },
      });
      apis = { grpc: grpcApi(p.documentsClient()), http: httpApi(p.restUrl) };
    });
    afterAll(async () => p?.close());

    for (const transport of ['grpc', 'http'] as const) {
      describe(`over ${transport}`, () => {
        const api = () => apis[transport];

        it('creates, lists and deletes a document, listing exactly what the client sent', async () => {
          const org = await newOrg();
          const doc = sampleDoc(100);
          const created = await api().create(org.token, doc);
          expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
          expect(created.creator_id).toBe(org.humanId);
          expect(created.size_bytes).toBe('100');
          expect(created.encryption.algorithm).toBe('A256GCM-HKDF-SHA256/v1');
          expect(created.encryption.key_id).toBe('k1');
          expect(created.encryption.nonce.equals(doc.encryption?.nonce as Buffer)).toBe(true);
          expect(Math.abs(Date.parse(created.create_time) - Date.now())).toBeLessThan(60_000);

          const listed = await api().list(org.token);
          expect(listed.documents.map(summaryOf)).toEqual([created]);
          expect(listed.documents[0]?.ciphertext.equals(doc.ciphertext as Buffer)).toBe(true);
          expect(listed.documents[0]?.encrypted_metadata.equals(doc.encrypted_metadata as Buffer)).toBe(true);
          expect(listed.next_page_token).toBeUndefined();

          await api().remove(org.token, created.id);
          expect((await api().list(org.token)).documents).toEqual([]);
          const again = await failure(api().remove(org.token, created.id));
          expect(again.grpcCode).toBe(grpc.status.NOT_FOUND);
          // Deleted for good: the row (and its ciphertext) is gone from the database.
          const rows = await p.platform.ctx.database.db.selectFrom('documents').select('id').where('id', '=', created.id).execute();
          expect(rows).toEqual([]);
        });

        it('refuses each RPC without its capability (PERMISSION_DENIED / 403)', async () => {
          const org = await newOrg();
          const existing = await api().create(org.token, sampleDoc());
          const humanId = org.humanId;
          const tokenWithout = async (missing: Capability) =>
            (
              await p.platform.ctx.identity.createToken({
                humanId,
                plane: 'platform',
                capabilities: ALL.filter((c) => c !== missing).concat('CAP_PLATFORM_OSV_READ'),
              })
            ).token;
          const create = await failure(api().create(await tokenWithout('CAP_PLATFORM_DOCUMENTS_CREATE'), sampleDoc()));
          const list = await failure(api().list(await tokenWithout('CAP_PLATFORM_DOCUMENTS_LIST')));
          const remove = await failure(api().remove(await tokenWithout('CAP_PLATFORM_DOCUMENTS_DELETE'), existing.id));
          for (const refused of [create, list, remove]) {
            expect(refused.grpcCode).toBe(grpc.status.PERMISSION_DENIED);
            if (transport === 'http') expect(refused.httpStatus).toBe(403);
          }
          expect(create.message).toContain('CAP_PLATFORM_DOCUMENTS_CREATE');
          // The refused delete deleted nothing.
          expect((await api().list(org.token)).documents.map((d) => d.id)).toEqual([existing.id]);
        });

        it('refuses member-plane, executor and session credentials, and missing, unknown or revoked tokens (UNAUTHENTICATED / 401)', async () => {
          const org = await newOrg();
          const identity = p.platform.ctx.identity;
          const member = (await identity.createToken({ humanId: org.humanId, plane: 'member' })).token;
          const executor = (await identity.createToken({ humanId: org.humanId, plane: 'executor' })).token;
          const revoked = await identity.createToken({ humanId: org.humanId, plane: 'platform', capabilities: ALL });
          await identity.revoke(revoked.id);
          const session = p.platform.owner.session_bearer;
          for (const token of [member, executor, session, revoked.token, undefined, 'pplat_not-a-real-token', 'x'.repeat(500)]) {
            for (const attempt of [
              () => api().list(token),
              () => api().create(token, sampleDoc()),
              () => api().remove(token, randomUUID()),
            ]) {
              const refused = await failure(attempt());
              expect(refused.grpcCode).toBe(grpc.status.UNAUTHENTICATED);
              if (transport === 'http') expect(refused.httpStatus).toBe(401);
            }
          }
        });

        it('keeps organizations apart: another Account cannot see, delete or page through a document', async () => {
          const a = await newOrg();
          const b = await newOrg();
          const docs = [await api().create(a.token, sampleDoc()), await api().create(a.token, sampleDoc())];
          expect((await api().list(b.token)).documents).toEqual([]);
          const deleted = await failure(api().remove(b.token, docs[0]?.id as string));
          expect(deleted.grpcCode).toBe(grpc.status.NOT_FOUND);
          const first = await api().list(a.token, { page_size: 1 });
          expect(first.next_page_token).toBeDefined();
          const replay = await failure(api().list(b.token, { page_size: 1, page_token: first.next_page_token as string }));
          expect(replay.grpcCode).toBe(grpc.status.INVALID_ARGUMENT);
          expect((await api().list(a.token)).documents.map((d) => d.id).sort()).toEqual(docs.map((d) => d.id).sort());
        });

        it('pages by count over several pages, with tamper-evident tokens', async () => {
          const org = await newOrg();
          const created: Created[] = [];
          for (let i = 0; i < 7; i++) created.push(await api().create(org.token, sampleDoc(10)));
          const seen: string[] = [];
          const sizes: number[] = [];
          let token: string | undefined;
          do {
            const page = await api().list(org.token, { page_size: 3, ...(token ? { page_token: token } : {}) });
            sizes.push(page.documents.length);
            seen.push(...page.documents.map((d) => d.id));
            token = page.next_page_token;
          } while (token);
          expect(sizes).toEqual([3, 3, 1]);
          const expected = [...created]
            .sort((x, y) => x.create_time.localeCompare(y.create_time) || (x.id < y.id ? -1 : 1))
            .map((d) => d.id);
          expect(seen).toEqual(expected);

          const first = await api().list(org.token, { page_size: 3 });
          const tampered = (first.next_page_token as string).replace(/^./, (c) => (c === 'A' ? 'B' : 'A'));
          const refused = await failure(api().list(org.token, { page_size: 3, page_token: tampered }));
          expect(refused.grpcCode).toBe(grpc.status.INVALID_ARGUMENT);
          const negative = await failure(api().list(org.token, { page_size: -1 }));
          expect(negative.grpcCode).toBe(grpc.status.INVALID_ARGUMENT);
          // Above the maximum is lowered to it, not refused.
          expect((await api().list(org.token, { page_size: 5000 })).documents).toHaveLength(7);
        });

        it('bounds a page by bytes as well as by count', async () => {
          const org = await newOrg();
          for (let i = 0; i < 6; i++) await api().create(org.token, sampleDoc(4000));
          const sizes: number[] = [];
          let token: string | undefined;
          do {
            const page = await api().list(org.token, { page_size: 100, ...(token ? { page_token: token } : {}) });
            sizes.push(page.documents.length);
            token = page.next_page_token;
          } while (token);
          // 4 × (4000 + 24) bytes fit in 16 KiB, a fifth does not.
          expect(sizes).toEqual([4, 2]);
        });

        it('creates idempotently with a request_id, also under concurrent retries', async () => {
          const org = await newOrg();
          const requestId = randomUUID();
          const doc = sampleDoc(50, requestId);
          const first = await api().create(org.token, doc);
          const retried = await api().create(org.token, doc);
          expect(retried).toEqual(first);
          expect(first.request_id).toBe(requestId);

          const racing = sampleDoc(50, randomUUID());
          const results = await Promise.all(Array.from({ length: 5 }, () => api().create(org.token, racing)));
          expect(new Set(results.map((r) => r.id)).size).toBe(1);
          expect((await api().list(org.token)).documents).toHaveLength(2);

          // The same request id with other content is a conflict, not a silent overwrite.
          const conflict = await failure(api().create(org.token, sampleDoc(50, requestId)));
          expect(conflict.grpcCode).toBe(grpc.status.ALREADY_EXISTS);
          // Request ids are per organization.
          const other = await newOrg();
          expect((await api().create(other.token, doc)).id).not.toBe(first.id);
        });

        it('enforces PLATFORM_DOCUMENT_MAX_BYTES (RESOURCE_EXHAUSTED / 413)', async () => {
          const org = await newOrg();
          await expect(api().create(org.token, sampleDoc(MAX_BYTES))).resolves.toMatchObject({ size_bytes: String(MAX_BYTES) });
          const refused = await failure(api().create(org.token, sampleDoc(MAX_BYTES + 1)));
          expect(refused.grpcCode).toBe(grpc.status.RESOURCE_EXHAUSTED);
          if (transport === 'http') {
            expect(refused.httpStatus).toBe(413);
            expect(refused.body).toEqual({
              error: { code: 'payload_too_large', message: `the document is larger than ${MAX_BYTES} bytes` },
            });
          }
          expect((await api().list(org.token)).documents).toHaveLength(1);
        });

        it('refuses a NUL or other non-printable character in algorithm and key_id, a NUL in a delete id, and a non-UUID delete id is NOT_FOUND (regression: PostgreSQL answered INTERNAL)', async () => {
          const org = await newOrg();
          const withHeader = (encryption: { algorithm: string; key_id?: string }) => ({
            ...sampleDoc(),
            encryption: { ...encryption, nonce: randomBytes(12) },
          });
          // NUL is refused at the RPC boundary, for every field alike; other non-printable text by the field's own rule.
          for (const [encryption, message] of [
            [{ algorithm: 'A\u0000B' }, 'encryption.algorithm: contains a character that cannot be stored'],
            [{ algorithm: 'x', key_id: 'k\u0000' }, 'encryption.key_id: contains a character that cannot be stored'],
            [{ algorithm: 'x', key_id: 'clé' }, 'printable ASCII'],
            [{ algorithm: 'tab\there' }, 'printable ASCII'],
          ] as const) {
            const refused = await failure(api().create(org.token, withHeader(encryption)));
            expect(refused.grpcCode, JSON.stringify(encryption)).toBe(grpc.status.INVALID_ARGUMENT);
            expect(refused.message).toContain(message);
          }
          for (const id of ['abc\u0000def', 'not-a-uuid\u0000']) {
            const refused = await failure(api().remove(org.token, id));
            expect([refused.grpcCode, refused.message], JSON.stringify(id)).toEqual([
              grpc.status.INVALID_ARGUMENT,
              'id: contains a character that cannot be stored (NUL or an unpaired surrogate)',
            ]);
          }
          // Printable ASCII, spaces included, is accepted.
          const kept = await api().create(org.token, withHeader({ algorithm: 'AES 256 GCM', key_id: 'key #1 (2026)' }));
          expect(kept.encryption).toMatchObject({ algorithm: 'AES 256 GCM', key_id: 'key #1 (2026)' });

          for (const id of ['not-a-uuid', `${kept.id}x`]) {
            const missing = await failure(api().remove(org.token, id));
            expect(missing.grpcCode, JSON.stringify(id)).toBe(grpc.status.NOT_FOUND);
          }
          // A UUID is a UUID in either case.
          await api().remove(org.token, kept.id.toUpperCase());
          expect((await api().list(org.token)).documents).toEqual([]);
          expect(p.platform.logs.text()).not.toContain('rpc failed');
        });

        it('names an invalid field by its proto path, without an HTTP "body." prefix (regression: gRPC errors said body.request_id)', async () => {
          const org = await newOrg();
          const badRequestId = await failure(api().create(org.token, sampleDoc(8, 'has space')));
          expect([badRequestId.grpcCode, badRequestId.message]).toEqual([
            grpc.status.INVALID_ARGUMENT,
            'request_id: expected 1 to 128 printable ASCII characters without spaces',
          ]);
          const badKeyId = await failure(
            api().create(org.token, { ...sampleDoc(), encryption: { algorithm: 'x', key_id: 'k'.repeat(129) } }),
          );
          expect(badKeyId.message).toMatch(/^encryption\.key_id: /);
        });

        it('requires an encryption header (INVALID_ARGUMENT / 400)', async () => {
          const org = await newOrg();
          const refused = await failure(api().create(org.token, { ciphertext: randomBytes(8) }));
          expect(refused.grpcCode).toBe(grpc.status.INVALID_ARGUMENT);
          expect(refused.message).toContain('encryption.algorithm');
        });
      });
    }

    describe('HTTP mapping specifics', () => {
      it('writes proto3 JSON: snake_case names, int64 as a string, empty fields left out', async () => {
        const token = await tokenWith(p.platform, ALL);
        const empty = await newOrg();
        const none = await httpJson(`${p.restUrl}/platform/v1/documents`, { token: empty.token });
        expect(none).toMatchObject({ status: 200, body: {} });
        const created = await httpJson(`${p.restUrl}/platform/v1/documents`, {
          method: 'POST',
          token,
          body: { ciphertext: 'AAECAw==', encryption: { algorithm: 'x', nonce: 'AAAAAAAAAAAAAAAA' } },
        });
        expect(created.status).toBe(200);
        // CreateDocument's answer leaves out the ciphertext and encrypted metadata the client sent.
        expect(Object.keys(created.body)).toEqual(['id', 'creator_id', 'size_bytes', 'encryption', 'create_time']);
        expect(created.body).toMatchObject({ size_bytes: '4', encryption: { algorithm: 'x', nonce: 'AAAAAAAAAAAAAAAA' } });
        expect(created.body.create_time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);
        const listed = await httpJson(`${p.restUrl}/platform/v1/documents`, { token });
        const stored = (listed.body.documents as Record<string, unknown>[]).find((d) => d.id === created.body.id);
        expect(Object.keys(stored ?? {})).toEqual(['id', 'creator_id', 'size_bytes', 'ciphertext', 'encryption', 'create_time']);
        expect(stored).toMatchObject({ ciphertext: 'AAECAw==' });
        const deleted = await httpJson(`${p.restUrl}/platform/v1/documents/${created.body.id as string}`, { method: 'DELETE', token });
        expect(deleted).toMatchObject({ status: 200, body: {} });
      });

      it('rejects unknown fields, malformed JSON and bodies over the route limit with the envelope', async () => {
        const token = await tokenWith(p.platform, ALL);
        const unknown = await httpJson(`${p.restUrl}/platform/v1/documents`, { method: 'POST', token, body: { ciphertext: '', nope: 1 } });
        expect(unknown).toMatchObject({ status: 400, body: { error: { code: 'parameter_invalid', message: 'body.nope: unknown field' } } });
        const malformed = await httpJson(`${p.restUrl}/platform/v1/documents`, { method: 'POST', token, body: '{"ciphertext":' });
        expect(malformed).toMatchObject({ status: 400, body: { error: { code: 'parameter_invalid' } } });
        const badQuery = await httpJson(`${p.restUrl}/platform/v1/documents?page_size=abc`, { token });
        expect(badQuery).toMatchObject({ status: 400, body: { error: { code: 'parameter_invalid' } } });
        const huge = await httpJson(`${p.restUrl}/platform/v1/documents`, {
          method: 'POST',
          token,
          body: { ciphertext: 'A'.repeat(200_000) },
        });
        expect(huge).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large' } } });
      });

      it('authenticates before reading the body: an unauthenticated over-limit body is 401, not 413 (regression: the body was parsed first)', async () => {
        const url = `${p.restUrl}/platform/v1/documents`;
        const overLimit = JSON.stringify({ ciphertext: 'A'.repeat(400_000) });
        const member = (await p.platform.ctx.identity.createToken({ humanId: p.platform.owner.human_id, plane: 'member' })).token;
        for (const token of [undefined, 'pplat_not-a-real-token', member]) {
          const refused = await httpJson(url, { method: 'POST', token, body: overLimit });
          expect(refused, String(token)).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
          expect(refused.headers.get('www-authenticate')).toBe('Bearer');
        }
        // The 401 does not wait for the body: it comes while most of a body under the limit is still unsent.
        const early = await answerToIncompleteBody(url, {}, 100_000, '{"ciphertext":"AAAA');
        expect(early.status).toBe(401);
        // With a valid credential the limit still applies, and a missing capability is still PERMISSION_DENIED.
        const token = await tokenWith(p.platform, ALL);
        expect(await httpJson(url, { method: 'POST', token, body: overLimit })).toMatchObject({
          status: 413,
          body: { error: { code: 'payload_too_large' } },
        });
        const listOnly = await tokenWith(p.platform, ['CAP_PLATFORM_DOCUMENTS_LIST']);
        expect(await httpJson(url, { method: 'POST', token: listOnly, body: { ciphertext: 'AAAA' } })).toMatchObject({
          status: 403,
          body: { error: { code: 'permission_denied' } },
        });
      });

      it('accepts lowerCamelCase names and base64url bytes, as proto3 JSON parsers do', async () => {
        const org = await newOrg();
        const created = await httpJson(`${p.restUrl}/platform/v1/documents`, {
          method: 'POST',
          token: org.token,
          body: { ciphertext: '-_8', encryptedMetadata: 'AQ', requestId: 'r-1', encryption: { algorithm: 'x', keyId: 'k' } },
        });
        expect(created.status).toBe(200);
        expect(created.body).toMatchObject({ request_id: 'r-1', encryption: { key_id: 'k' } });
        const page = await httpJson(`${p.restUrl}/platform/v1/documents?pageSize=1`, { token: org.token });
        expect(page.body.documents).toMatchObject([{ ciphertext: '+/8=', encrypted_metadata: 'AQ==', request_id: 'r-1' }]);
      });
    });
  });

  describe(`PlatformDocuments with the default limits (${dialect})`, () => {
    let p: GrpcTestPlatform;
    beforeAll(async () => {
      p = await startGrpcTestPlatform(dialect);
    });
    afterAll(async () => p?.close());

    it('stores, lists and deletes exactly 8 MiB documents over gRPC and HTTP (regression: base64 check overflowed the stack above ~3.2 MiB)', async () => {
      const token = await tokenWith(p.platform, ALL);
      // A page holding an 8 MiB document exceeds the 4 MiB default receive limit of gRPC clients (docs/documents.md).
      const apis = { grpc: grpcApi(p.documentsClient({ 'grpc.max_receive_message_length': 16 * MiB })), http: httpApi(p.restUrl) };
      const sent = { grpc: sampleDoc(8 * MiB), http: sampleDoc(8 * MiB) };
      const created = { grpc: await apis.grpc.create(token, sent.grpc), http: await apis.http.create(token, sent.http) };
      for (const via of ['grpc', 'http'] as const) expect(created[via].size_bytes).toBe(String(8 * MiB));
      for (const via of ['grpc', 'http'] as const) {
        const listed = await listAll(apis[via], token);
        expect(listed.map((d) => d.id).sort()).toEqual([created.grpc.id, created.http.id].sort());
        for (const doc of listed) {
          const origin = doc.id === created.grpc.id ? sent.grpc : sent.http;
          expect(doc.ciphertext.equals(origin.ciphertext as Buffer), `${via} lists ${doc.id} intact`).toBe(true);
        }
      }
      // Each deleted over the other transport.
      await apis.http.remove(token, created.grpc.id);
      await apis.grpc.remove(token, created.http.id);
      for (const via of ['grpc', 'http'] as const) expect(await listAll(apis[via], token)).toEqual([]);
      expect(p.platform.logs.text()).not.toContain('rpc failed');
    });

    it('creates a 5 MiB document from a client with the default 4 MiB receive limit and answers without the ciphertext (regression: CreateDocument echoed the document, the client got RESOURCE_EXHAUSTED and a retry stored a second copy)', async () => {
      const owner = await p.platform.ctx.identity.bootstrap({ accountName: 'Big', email: `big-${randomUUID()}@example.test` });
      const token = (await p.platform.ctx.identity.createToken({ humanId: owner.human_id, plane: 'platform', capabilities: ALL })).token;
      // grpc-js's default limits, as grpcurl and other standard clients have.
      const standard = p.documentsClient();
      const ciphertext = randomBytes(5 * MiB);
      const nonce = randomBytes(12);
      const doc = { ciphertext, encryption: { algorithm: 'x', nonce }, encrypted_metadata: Buffer.from([1, 2, 3]) };
      const answer = await grpcCall<CreateDocumentResponse__Output>((cb) => standard.CreateDocument(doc, bearer(token), cb));
      expect(answer.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(answer.size_bytes).toBe(String(5 * MiB));
      expect(answer.encryption?.nonce?.equals(nonce)).toBe(true);

      const url = `${p.restUrl}/platform/v1/documents`;
      const body = {
        ciphertext: ciphertext.toString('base64'),
        encryption: { algorithm: 'x', nonce: nonce.toString('base64') },
        encrypted_metadata: 'AQID',
        request_id: 'big-1',
      };
      const response = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      expect(response.status).toBe(200);
      expect(text.length).toBeLessThan(1024);
      const created = JSON.parse(text) as Record<string, unknown>;
      expect(created).not.toHaveProperty('ciphertext');
      expect(created).not.toHaveProperty('encrypted_metadata');
      expect(created).toMatchObject({ size_bytes: String(5 * MiB), request_id: 'big-1' });
      // A retry with the request id answers the same small document and stores no second copy.
      const retried = await httpJson(url, { method: 'POST', token, body });
      expect(retried).toMatchObject({ status: 200, body: { id: created.id } });

      const raised = grpcApi(p.documentsClient({ 'grpc.max_receive_message_length': 8 * MiB }));
      const listed = await listAll(raised, token);
      expect(listed.map((d) => d.id).sort()).toEqual([answer.id, created.id as string].sort());
      for (const stored of listed) expect(stored.ciphertext.equals(ciphertext)).toBe(true);
    });

    it.runIf(dialect === 'sqlite')(
      'leaves no chunk of a deleted ciphertext in the SQLite file or its WAL (regression: the ciphertext stayed in the -wal file)',
      async () => {
        const token = await tokenWith(p.platform, ALL);
        const file = p.platform.database.url.replace(/^sqlite:/, '');
        const files = [file, `${file}-wal`];
        const api = grpcApi(p.documentsClient());
        const doc = sampleDoc(256 * 1024);
        const ciphertext = doc.ciphertext as Buffer;
        const created = await api.create(token, doc);
        // The search works: the stored ciphertext is found before the delete (all but the chunks that straddle an
        // overflow page's 4-byte link).
        expect(chunksFound(ciphertext, files)).toBeGreaterThan((ciphertext.length / 16) * 0.9);
        await httpApi(p.restUrl).remove(token, created.id);
        expect(chunksFound(ciphertext, files)).toBe(0);
        expect(chunksFound(doc.encrypted_metadata as Buffer, files)).toBe(0);
      },
    );

    it('keeps ListDocuments pages under the 4 MiB default receive limit of gRPC clients (regression: the default page bound was 32 MiB)', async () => {
      const owner = await p.platform.ctx.identity.bootstrap({ accountName: 'Pages', email: `pages-${randomUUID()}@example.test` });
      const token = (await p.platform.ctx.identity.createToken({ humanId: owner.human_id, plane: 'platform', capabilities: ALL })).token;
      // A client with grpc-js's default limits, as grpcurl and other standard clients have.
      const standard = grpcApi(p.documentsClient());
      for (let i = 0; i < 5; i++) await standard.create(token, sampleDoc(MiB));
      const sizes: number[] = [];
      let pageToken: string | undefined;
      do {
        const page = await standard.list(token, { page_size: 100, ...(pageToken ? { page_token: pageToken } : {}) });
        sizes.push(page.documents.length);
        pageToken = page.next_page_token;
      } while (pageToken);
      // 3 MiB of document bytes per page: two documents of 1 MiB (and their metadata) fit, a third does not.
      expect(sizes).toEqual([2, 2, 1]);

      // A single document larger than the client's limit comes alone in its page: such a client must raise its
      // limit to list it (creating it needs no raised limit, since CreateDocument does not echo the ciphertext).
      const raised = grpcApi(p.documentsClient({ 'grpc.max_receive_message_length': 8 * MiB }));
      await standard.create(token, sampleDoc(5 * MiB));
      const last = await failure(listAll(standard, token));
      expect(last.grpcCode).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect((await listAll(raised, token)).map((d) => d.size_bytes)).toEqual([
        ...Array.from({ length: 5 }, () => String(MiB)),
        String(5 * MiB),
      ]);
    });
  });
}
