// Original file: proto/platform/v1/documents.proto

import type { EncryptionHeader as _platform_v1_EncryptionHeader, EncryptionHeader__Output as _platform_v1_EncryptionHeader__Output } from '../../platform/v1/EncryptionHeader.ts';

/**
 * Input of CreateDocument.
 */
export interface CreateDocumentRequest {
  /**
   * The encrypted content; at most PLATFORM_DOCUMENT_MAX_BYTES bytes (default 8 MiB). May be empty.
   */
  'ciphertext'?: (Buffer | Uint8Array | string);
  /**
   * How the content was encrypted. Required, with a non-empty `algorithm`.
   */
  'encryption'?: (_platform_v1_EncryptionHeader | null);
  /**
   * Encrypted metadata (for example the file name); at most 64 KiB.
   */
  'encrypted_metadata'?: (Buffer | Uint8Array | string);
  /**
   * Optional idempotency key chosen by the client (for example a UUID; 1 to 128 printable ASCII characters).
   * Retrying a create with the same key returns the document the first attempt created, never a duplicate.
   */
  'request_id'?: (string);
}

/**
 * Input of CreateDocument.
 */
export interface CreateDocumentRequest__Output {
  /**
   * The encrypted content; at most PLATFORM_DOCUMENT_MAX_BYTES bytes (default 8 MiB). May be empty.
   */
  'ciphertext'?: (Buffer);
  /**
   * How the content was encrypted. Required, with a non-empty `algorithm`.
   */
  'encryption'?: (_platform_v1_EncryptionHeader__Output);
  /**
   * Encrypted metadata (for example the file name); at most 64 KiB.
   */
  'encrypted_metadata'?: (Buffer);
  /**
   * Optional idempotency key chosen by the client (for example a UUID; 1 to 128 printable ASCII characters).
   * Retrying a create with the same key returns the document the first attempt created, never a duplicate.
   */
  'request_id'?: (string);
}
