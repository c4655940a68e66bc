import { createHash, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../core/clock.ts';
import type { Dialect } from '../core/db/database.ts';
import type { DocumentsTables } from './documents.table.ts';
import { AppError } from '../core/errors.ts';
import type { DocumentsConfig } from './documents.config.ts';
import {
  checkpointDeleted,
  deleteDocument,
  findDocumentByRequestId,
  getDocuments,
  insertDocument,
  isUniqueViolation,
  listDocumentPage,
} from './documents.store.ts';
import type { DocumentRow } from './documents.table.ts';
import type { PageTokenCodec } from './page-token.ts';

/** Page sizes of ListDocuments: the default, and the most one page holds (larger requests are lowered to it). */
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 1000;
/** Encrypted metadata is small by design (a name, a media type); this keeps it so. */
export const MAX_METADATA_BYTES = 64 * 1024;
/** Document ids are UUIDs (`randomUUID`); anything else names no document. */
const DOCUMENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a client uploads: everything but the request id is opaque to the server. */
export interface NewDocument {
  ciphertext: Buffer;
  algorithm: string;
  keyId: string;
  nonce: Buffer;
  encryptedMetadata: Buffer;
  requestId: string | undefined;
}

/** The caller a document operation acts for: its Account scopes every read and write. */
export interface DocumentActor {
  accountId: string;
  humanId: string;
}

export interface DocumentsServiceDeps {
  db: Kysely<DocumentsTables>;
  dialect: Dialect;
  clock: Clock;
  config: DocumentsConfig;
  pageTokens: PageTokenCodec;
}

function fingerprintOf(doc: NewDocument): string {
  const hash = createHash('sha256');
  for (const part of [Buffer.from(doc.algorithm), Buffer.from(doc.keyId), doc.nonce, doc.ciphertext, doc.encryptedMetadata]) {
    // Length-prefixed, so different splits of the same bytes never collide.
    const length = Buffer.alloc(8);
    length.writeBigUInt64BE(BigInt(part.length));
    hash.update(length).update(part);
  }
  return hash.digest('hex');
}

/**
 * PlatformDocuments' logic (spec: platform-grpc-services.md): organization-scoped storage of client-side
 * encrypted documents. Every operation is confined to the actor's Account; another Account's document is
 * `not_found`, never revealed.
 */
export function createDocumentsService(deps: DocumentsServiceDeps) {
  /** The document an earlier create with the same request id made, when the content matches (else a conflict). */
  function sameOrConflict(existing: DocumentRow, fingerprint: string): DocumentRow {
    if (existing.fingerprint !== fingerprint) {
      throw new AppError('conflict', 'request_id was already used for a different document');
    }
    return existing;
  }

  return {
    /**
     * Stores a document. A `requestId` used before by the Account returns the earlier document (idempotent
     * retry); concurrent creates with one request id store one document (the unique index decides).
     */
    async create(actor: DocumentActor, doc: NewDocument): Promise<DocumentRow> {
      if (doc.ciphertext.length > deps.config.PLATFORM_DOCUMENT_MAX_BYTES) {
        throw new AppError('payload_too_large', `the document is larger than ${deps.config.PLATFORM_DOCUMENT_MAX_BYTES} bytes`);
      }
      if (doc.encryptedMetadata.length > MAX_METADATA_BYTES) {
        throw new AppError('payload_too_large', `encrypted_metadata is larger than ${MAX_METADATA_BYTES} bytes`);
      }
      const fingerprint = fingerprintOf(doc);
      if (doc.requestId !== undefined) {
        const existing = await findDocumentByRequestId(deps.db, actor.accountId, doc.requestId);
        if (existing) return sameOrConflict(existing, fingerprint);
      }
      const row: DocumentRow = {
        id: randomUUID(),
        account_id: actor.accountId,
        creator_human_id: actor.humanId,
        size_bytes: doc.ciphertext.length,
        ciphertext: doc.ciphertext,
        algorithm: doc.algorithm,
        key_id: doc.keyId,
        nonce: doc.nonce,
        encrypted_metadata: doc.encryptedMetadata,
        metadata_bytes: doc.encryptedMetadata.length,
        request_id: doc.requestId ?? null,
        fingerprint,
        created_at: deps.clock.now(),
      };
      try {
        await insertDocument(deps.db, row);
      } catch (error) {
        if (doc.requestId !== undefined && isUniqueViolation(error)) {
          // A concurrent retry won the race: answer with its document.
          const existing = await findDocumentByRequestId(deps.db, actor.accountId, doc.requestId);
          if (existing) return sameOrConflict(existing, fingerprint);
        }
        throw error;
      }
      return row;
    },

    /**
     * One page of the Account's documents, oldest first: at most `pageSize` documents and at most
     * `PLATFORM_DOCUMENT_PAGE_MAX_BYTES` of ciphertext and metadata (but always one document, however large).
     */
    async list(
      actor: DocumentActor,
      options: { pageSize?: number | undefined; pageToken?: string | undefined },
    ): Promise<{ documents: DocumentRow[]; nextPageToken: string | undefined }> {
      const requested = options.pageSize ?? 0;
      if (requested < 0) throw new AppError('parameter_invalid', 'page_size must not be negative');
      const pageSize = requested === 0 ? DEFAULT_PAGE_SIZE : Math.min(requested, MAX_PAGE_SIZE);
      const after = options.pageToken ? deps.pageTokens.verify(actor.accountId, options.pageToken) : undefined;

      const candidates = await listDocumentPage(deps.db, actor.accountId, after, pageSize + 1);
      const taken: typeof candidates = [];
      let bytes = 0;
      for (const entry of candidates.slice(0, pageSize)) {
        const size = entry.size_bytes + entry.metadata_bytes;
        if (taken.length > 0 && bytes + size > deps.config.PLATFORM_DOCUMENT_PAGE_MAX_BYTES) break;
        taken.push(entry);
        bytes += size;
      }
      const documents = await getDocuments(
        deps.db,
        actor.accountId,
        taken.map((e) => e.id),
      );
      const last = taken.at(-1);
      const more = taken.length < candidates.length;
      return {
        documents,
        nextPageToken: more && last ? deps.pageTokens.sign(actor.accountId, { created_at: last.created_at, id: last.id }) : undefined,
      };
    },

    /**
     * Deletes a document for good; `not_found` when the Account has no such document. An id that is not a UUID
     * names none and is answered without a query (it could hold what the database refuses, such as a NUL).
     */
    async remove(actor: DocumentActor, id: string): Promise<void> {
      if (!DOCUMENT_ID.test(id)) throw new AppError('not_found', 'no such document');
      if (!(await deleteDocument(deps.db, deps.dialect, actor.accountId, id.toLowerCase())))
        throw new AppError('not_found', 'no such document');
      // "Deleting removes the ciphertext for good" (issue 5): on SQLite also from the write-ahead log.
      await checkpointDeleted(deps.db, deps.dialect);
    },
  };
}

export type DocumentsService = ReturnType<typeof createDocumentsService>;
