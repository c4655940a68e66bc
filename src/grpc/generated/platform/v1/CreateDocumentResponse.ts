// Original file: proto/platform/v1/documents.proto

import type { EncryptionHeader as _platform_v1_EncryptionHeader, EncryptionHeader__Output as _platform_v1_EncryptionHeader__Output } from '../../platform/v1/EncryptionHeader.ts';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * Output of CreateDocument: the stored document without its `ciphertext` and `encrypted_metadata`, which the
 * client already holds. Echoing them would make the answer as large as the upload: a document over about 4 MiB
 * would exceed the default receive limit of gRPC clients, which would then report RESOURCE_EXHAUSTED although the
 * server stored the document. The field numbers are those of Document (4 and 6 reserved), so a client that
 * decodes the answer as a Document reads the same fields, with an empty ciphertext.
 */
export interface CreateDocumentResponse {
  /**
   * Server-assigned identifier (a UUID).
   */
  'id'?: (string);
  /**
   * The Human whose token created the document.
   */
  'creator_id'?: (string);
  /**
   * Length of the stored ciphertext in bytes (a string in JSON, as int64 values are in proto3 JSON).
   */
  'size_bytes'?: (number | string | Long);
  /**
   * How the content was encrypted, as stored.
   */
  'encryption'?: (_platform_v1_EncryptionHeader | null);
  /**
   * The client's idempotency key from CreateDocumentRequest, when one was given.
   */
  'request_id'?: (string);
  /**
   * When the document was stored (for a retried create: when the first attempt stored it).
   */
  'create_time'?: (_google_protobuf_Timestamp | null);
}

/**
 * Output of CreateDocument: the stored document without its `ciphertext` and `encrypted_metadata`, which the
 * client already holds. Echoing them would make the answer as large as the upload: a document over about 4 MiB
 * would exceed the default receive limit of gRPC clients, which would then report RESOURCE_EXHAUSTED although the
 * server stored the document. The field numbers are those of Document (4 and 6 reserved), so a client that
 * decodes the answer as a Document reads the same fields, with an empty ciphertext.
 */
export interface CreateDocumentResponse__Output {
  /**
   * Server-assigned identifier (a UUID).
   */
  'id'?: (string);
  /**
   * The Human whose token created the document.
   */
  'creator_id'?: (string);
  /**
   * Length of the stored ciphertext in bytes (a string in JSON, as int64 values are in proto3 JSON).
   */
  'size_bytes'?: (string);
  /**
   * How the content was encrypted, as stored.
   */
  'encryption'?: (_platform_v1_EncryptionHeader__Output);
  /**
   * The client's idempotency key from CreateDocumentRequest, when one was given.
   */
  'request_id'?: (string);
  /**
   * When the document was stored (for a retried create: when the first attempt stored it).
   */
  'create_time'?: (_google_protobuf_Timestamp__Output);
}
