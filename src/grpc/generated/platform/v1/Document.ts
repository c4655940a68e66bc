// Original file: proto/platform/v1/documents.proto

import type { EncryptionHeader as _platform_v1_EncryptionHeader, EncryptionHeader__Output as _platform_v1_EncryptionHeader__Output } from '../../platform/v1/EncryptionHeader.ts';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * A stored document as the server returns it.
 */
export interface Document {
  /**
   * Server-assigned identifier (a UUID).
   */
  'id'?: (string);
  /**
   * The Human whose token created the document.
   */
  'creator_id'?: (string);
  /**
   * Length of `ciphertext` in bytes (a string in JSON, as int64 values are in proto3 JSON).
   */
  'size_bytes'?: (number | string | Long);
  /**
   * The encrypted content.
   */
  'ciphertext'?: (Buffer | Uint8Array | string);
  /**
   * How the content was encrypted.
   */
  'encryption'?: (_platform_v1_EncryptionHeader | null);
  /**
   * Encrypted metadata (for example the file name), opaque to the server.
   */
  'encrypted_metadata'?: (Buffer | Uint8Array | string);
  /**
   * The client's idempotency key from CreateDocumentRequest, when one was given.
   */
  'request_id'?: (string);
  /**
   * When the document was stored.
   */
  'create_time'?: (_google_protobuf_Timestamp | null);
}

/**
 * A stored document as the server returns it.
 */
export interface Document__Output {
  /**
   * Server-assigned identifier (a UUID).
   */
  'id'?: (string);
  /**
   * The Human whose token created the document.
   */
  'creator_id'?: (string);
  /**
   * Length of `ciphertext` in bytes (a string in JSON, as int64 values are in proto3 JSON).
   */
  'size_bytes'?: (string);
  /**
   * The encrypted content.
   */
  'ciphertext'?: (Buffer);
  /**
   * How the content was encrypted.
   */
  'encryption'?: (_platform_v1_EncryptionHeader__Output);
  /**
   * Encrypted metadata (for example the file name), opaque to the server.
   */
  'encrypted_metadata'?: (Buffer);
  /**
   * The client's idempotency key from CreateDocumentRequest, when one was given.
   */
  'request_id'?: (string);
  /**
   * When the document was stored.
   */
  'create_time'?: (_google_protobuf_Timestamp__Output);
}
