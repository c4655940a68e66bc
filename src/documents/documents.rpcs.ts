import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { AppError } from '../core/errors.ts';
import {
  CreateDocumentResponseSchema,
  DeleteDocumentResponseSchema,
  DocumentSchema,
  ListDocumentsResponseSchema,
  type CreateDocumentRequest,
  type CreateDocumentResponse,
  type DeleteDocumentRequest,
  type DeleteDocumentResponse,
  type Document,
  type ListDocumentsRequest,
  type ListDocumentsResponse,
} from '../grpc/index.ts';
import { parseRequestMessage } from '../core/validation.ts';
import type { RpcMethod } from '../grpc/index.ts';
import type { DocumentsConfig } from './documents.config.ts';
import { createDocumentRequestJson, deleteDocumentRequestJson, listDocumentsRequestJson } from './documents.schemas.ts';
import type { DocumentsService } from './documents.service.ts';
import { MAX_METADATA_BYTES } from './documents.service.ts';
import type { DocumentRow } from './documents.table.ts';

const SERVICE = 'platform.v1.PlatformDocuments';

/** Bytes as a Buffer over the same memory (the decoded request's bytes are views into the received message). */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A field's value, or undefined at its proto3 default (absent from the JSON the semantic schemas check). */
function present<T extends string | number | Uint8Array>(value: T): T | undefined {
  if (value === '' || value === 0) return undefined;
  return value instanceof Uint8Array && value.length === 0 ? undefined : value;
}

function presentBytes(value: Uint8Array): Buffer | undefined {
  return present(value) === undefined ? undefined : asBuffer(value);
}

/**
 * The request as the semantic schemas (documents.schemas.ts) read it: proto field names, fields at their default
 * value absent, bytes as Buffers; their messages then name fields by proto path on both transports.
 */
function createRequestFields(request: CreateDocumentRequest): unknown {
  const e = request.encryption;
  return {
    ciphertext: presentBytes(request.ciphertext),
    encryption: e && { algorithm: present(e.algorithm), key_id: present(e.keyId), nonce: presentBytes(e.nonce) },
    encrypted_metadata: presentBytes(request.encryptedMetadata),
    request_id: present(request.requestId),
  };
}

/** A stored row as the Document message; the blobs stay Buffers (no base64 on the gRPC path). */
export function documentMessage(row: DocumentRow): Document {
  return create(DocumentSchema, {
    id: row.id,
    creatorId: row.creator_human_id,
    sizeBytes: BigInt(row.size_bytes),
    ciphertext: row.ciphertext,
    encryption: { algorithm: row.algorithm, keyId: row.key_id, nonce: row.nonce },
    encryptedMetadata: row.encrypted_metadata,
    requestId: row.request_id ?? '',
    createTime: timestampFromMs(new Date(row.created_at).getTime()),
  });
}

/**
 * CreateDocument's answer for a stored row: everything but the ciphertext and the encrypted metadata, which the
 * client just sent. Echoing them made the answer as large as the upload, so a standard gRPC client (4 MiB receive
 * limit) failed with RESOURCE_EXHAUSTED on a document it had in fact stored (proto CreateDocumentResponse).
 */
export function createDocumentResponse(row: DocumentRow): CreateDocumentResponse {
  return create(CreateDocumentResponseSchema, {
    id: row.id,
    creatorId: row.creator_human_id,
    sizeBytes: BigInt(row.size_bytes),
    encryption: { algorithm: row.algorithm, keyId: row.key_id, nonce: row.nonce },
    requestId: row.request_id ?? '',
    createTime: timestampFromMs(new Date(row.created_at).getTime()),
  });
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
  const createRpc: RpcMethod<CreateDocumentRequest, CreateDocumentResponse> = {
    service: SERVICE,
    method: 'CreateDocument',
    capability: 'CAP_PLATFORM_DOCUMENTS_CREATE',
    http: { method: 'POST', path: '/platform/v1/documents', body: '*', bodyLimit: createDocumentBodyLimit(deps.config) },
    async handler({ principal, request }) {
      const input = parseRequestMessage(createDocumentRequestJson, createRequestFields(request));
      if (!input.encryption?.algorithm)
        throw new AppError('parameter_missing', 'encryption.algorithm is required: documents are encrypted by the client');
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
  const list: RpcMethod<ListDocumentsRequest, ListDocumentsResponse> = {
    service: SERVICE,
    method: 'ListDocuments',
    capability: 'CAP_PLATFORM_DOCUMENTS_LIST',
    http: { method: 'GET', path: '/platform/v1/documents' },
    async handler({ principal, request }) {
      const input = parseRequestMessage(listDocumentsRequestJson, {
        page_size: present(request.pageSize),
        page_token: present(request.pageToken),
      });
      const page = await service.list(principal, { pageSize: input.page_size, pageToken: input.page_token });
      return create(ListDocumentsResponseSchema, {
        documents: page.documents.map(documentMessage),
        nextPageToken: page.nextPageToken ?? '',
      });
    },
  };
  const remove: RpcMethod<DeleteDocumentRequest, DeleteDocumentResponse> = {
    service: SERVICE,
    method: 'DeleteDocument',
    capability: 'CAP_PLATFORM_DOCUMENTS_DELETE',
    http: { method: 'DELETE', path: '/platform/v1/documents/:id' },
    async handler({ principal, request }) {
      const input = parseRequestMessage(deleteDocumentRequestJson, { id: present(request.id) });
      if (!input.id) throw new AppError('parameter_missing', 'id is required');
      await service.remove(principal, input.id);
      return create(DeleteDocumentResponseSchema);
    },
  };
  return [createRpc, list, remove] as RpcMethod[];
}
