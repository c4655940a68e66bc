import { AppError } from '../core/errors.ts';
import { parseRequestMessage } from '../core/validation.ts';
import type { RpcMethod } from '../grpc/rpc.ts';
import type { DocumentsConfig } from './documents.config.ts';
import {
  createDocumentRequestJson,
  deleteDocumentRequestJson,
  listDocumentsRequestJson,
  type CreateDocumentRequestJson,
  type CreateDocumentResponseMessage,
  type DeleteDocumentRequestJson,
  type DocumentMessage,
  type ListDocumentsRequestJson,
  type ListDocumentsResponseMessage,
} from './documents.schemas.ts';
import type { DocumentsService } from './documents.service.ts';
import { MAX_METADATA_BYTES } from './documents.service.ts';
import type { DocumentRow } from './documents.table.ts';

const SERVICE = 'platform.v1.PlatformDocuments';

/** A stored row as the Document message; the blobs stay Buffers (no base64 on the gRPC path). */
export function documentMessage(row: DocumentRow): DocumentMessage {
  return {
    id: row.id,
    creator_id: row.creator_human_id,
    size_bytes: String(row.size_bytes),
    ciphertext: row.ciphertext,
    encryption: { algorithm: row.algorithm, key_id: row.key_id, nonce: row.nonce },
    encrypted_metadata: row.encrypted_metadata,
    ...(row.request_id === null ? {} : { request_id: row.request_id }),
    create_time: new Date(row.created_at).toISOString(),
  };
}

/**
 * CreateDocument's answer for a stored row: everything but the ciphertext and the encrypted metadata, which the
 * client just sent. Echoing them made the answer as large as the upload, so a standard gRPC client (4 MiB receive
 * limit) failed with RESOURCE_EXHAUSTED on a document it had in fact stored (proto CreateDocumentResponse).
 */
export function createDocumentResponse(row: DocumentRow): CreateDocumentResponseMessage {
  return {
    id: row.id,
    creator_id: row.creator_human_id,
    size_bytes: String(row.size_bytes),
    encryption: { algorithm: row.algorithm, key_id: row.key_id, nonce: row.nonce },
    ...(row.request_id === null ? {} : { request_id: row.request_id }),
    create_time: new Date(row.created_at).toISOString(),
  };
}

/**
 * The HTTP body limit of CreateDocument: the ciphertext travels as base64 (4/3 larger) inside JSON, next to up to
 * 64 KiB of metadata, so the body may exceed the document limit by that much; the exact check happens after
 * decoding, so an over-size document is 413 either way.
 */
export function createDocumentBodyLimit(config: DocumentsConfig): number {
  return Math.ceil((config.PLATFORM_DOCUMENT_MAX_BYTES * 4) / 3) + Math.ceil((MAX_METADATA_BYTES * 4) / 3) + 64 * 1024;
}

/**
 * The three PlatformDocuments RPCs (both transports), each requiring its capability (spec, "Authentication").
 * Errors use the platform's REST envelope on HTTP.
 */
export function createDocumentsRpcs(deps: { service: DocumentsService; config: DocumentsConfig }): RpcMethod[] {
  const { service } = deps;
  const create: RpcMethod<CreateDocumentRequestJson, CreateDocumentResponseMessage> = {
    service: SERVICE,
    method: 'CreateDocument',
    capability: 'CAP_PLATFORM_DOCUMENTS_CREATE',
    http: { method: 'POST', path: '/platform/v1/documents', body: '*', bodyLimit: createDocumentBodyLimit(deps.config) },
    async handler({ principal, request }) {
      const input = parseRequestMessage(createDocumentRequestJson, request);
      if (!input.encryption?.algorithm) throw new AppError('parameter_missing', 'encryption.algorithm is required: documents are encrypted by the client');
      const nonce = input.encryption.nonce ?? Buffer.alloc(0);
      if (nonce.length > 64) throw new AppError('parameter_invalid', 'encryption.nonce must be at most 64 bytes');
      const row = await service.create(principal, {
        ciphertext: input.ciphertext ?? Buffer.alloc(0),
        algorithm: input.encryption.algorithm,
        keyId: input.encryption.key_id ?? '',
        nonce,
        encryptedMetadata: input.encrypted_metadata ?? Buffer.alloc(0),
        requestId: input.request_id,
      });
      return createDocumentResponse(row);
    },
  };
  const list: RpcMethod<ListDocumentsRequestJson, ListDocumentsResponseMessage> = {
    service: SERVICE,
    method: 'ListDocuments',
    capability: 'CAP_PLATFORM_DOCUMENTS_LIST',
    http: { method: 'GET', path: '/platform/v1/documents' },
    async handler({ principal, request }) {
      const input = parseRequestMessage(listDocumentsRequestJson, request);
      const page = await service.list(principal, { pageSize: input.page_size, pageToken: input.page_token });
      return { documents: page.documents.map(documentMessage), ...(page.nextPageToken ? { next_page_token: page.nextPageToken } : {}) };
    },
  };
  const remove: RpcMethod<DeleteDocumentRequestJson, Record<string, never>> = {
    service: SERVICE,
    method: 'DeleteDocument',
    capability: 'CAP_PLATFORM_DOCUMENTS_DELETE',
    http: { method: 'DELETE', path: '/platform/v1/documents/:id' },
    async handler({ principal, request }) {
      const input = parseRequestMessage(deleteDocumentRequestJson, request);
      if (!input.id) throw new AppError('parameter_missing', 'id is required');
      await service.remove(principal, input.id);
      return {};
    },
  };
  return [create, list, remove];
}
