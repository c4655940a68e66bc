// Original file: proto/platform/v1/documents.proto


/**
 * How the client encrypted a document. The server stores it unread and returns it with the document, so that a
 * holder of the key can decrypt.
 */
export interface EncryptionHeader {
  /**
   * Identifies the cipher construction, for example "A256GCM-HKDF-SHA256/v1" (1 to 64 printable ASCII
   * characters). Required.
   */
  'algorithm'?: (string);
  /**
   * Identifies the key without revealing it (for example a hash prefix of the key; at most 128 printable ASCII
   * characters).
   */
  'key_id'?: (string);
  /**
   * The per-document nonce or IV (at most 64 bytes).
   */
  'nonce'?: (Buffer | Uint8Array | string);
}

/**
 * How the client encrypted a document. The server stores it unread and returns it with the document, so that a
 * holder of the key can decrypt.
 */
export interface EncryptionHeader__Output {
  /**
   * Identifies the cipher construction, for example "A256GCM-HKDF-SHA256/v1" (1 to 64 printable ASCII
   * characters). Required.
   */
  'algorithm'?: (string);
  /**
   * Identifies the key without revealing it (for example a hash prefix of the key; at most 128 printable ASCII
   * characters).
   */
  'key_id'?: (string);
  /**
   * The per-document nonce or IV (at most 64 bytes).
   */
  'nonce'?: (Buffer);
}
