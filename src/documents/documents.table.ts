import type { Insertable, Selectable } from 'kysely';

/**
 * One client-side encrypted document. Everything but `id`, `account_id`, `creator_human_id`, the sizes, the
 * fingerprint and `created_at` is what the client sent, stored unread: the server never holds plaintext or keys.
 */
export interface DocumentTable {
  id: string;
  /** The organization (Account) that owns the document. */
  account_id: string;
  /** The Human whose token created it. */
  creator_human_id: string;
  /** Length of `ciphertext` in bytes. */
  size_bytes: number;
  ciphertext: Buffer;
  /** The client's encryption header: algorithm id, key id and nonce (opaque to the server). */
  algorithm: string;
  key_id: string;
  nonce: Buffer;
  /** Encrypted metadata (the file name travels here). */
  encrypted_metadata: Buffer;
  /** Length of `encrypted_metadata`, so pages can be bounded in bytes without reading the blobs. */
  metadata_bytes: number;
  /** The client's idempotency key; unique per Account when present. */
  request_id: string | null;
  /** SHA-256 over header, ciphertext and metadata: tells a retried create from a different one reusing a request id. */
  fingerprint: string;
  created_at: number;
}

export interface DocumentsTables {
  documents: DocumentTable;
}

export type DocumentRow = Selectable<DocumentTable>;
export type NewDocumentRow = Insertable<DocumentTable>;
