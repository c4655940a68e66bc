import { z } from 'zod';

/**
 * The PlatformDocuments messages in the canonical form RPC handlers receive and return them (proto3 JSON with
 * `bytes` fields as Buffers; proto/platform/v1/documents.proto). Types and shapes are already checked by the proto
 * codec; these schemas add the semantic rules (required fields, lengths) and are the source of the TypeScript types.
 */
const bytes = z.instanceof(Buffer);

/**
 * Printable ASCII (space to `~`). The clear-text strings of the encryption header are identifiers, and anything
 * else (a NUL above all, which PostgreSQL text cannot hold) would be an INTERNAL error at the database instead of
 * INVALID_ARGUMENT here.
 */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

const encryptionHeaderJson = z.object({
  algorithm: z.string().min(1).max(64).regex(PRINTABLE_ASCII, 'expected 1 to 64 printable ASCII characters').optional(),
  key_id: z.string().max(128).regex(PRINTABLE_ASCII, 'expected at most 128 printable ASCII characters').optional(),
  nonce: bytes.optional(),
});

export const createDocumentRequestJson = z.object({
  ciphertext: bytes.optional(),
  encryption: encryptionHeaderJson.optional(),
  encrypted_metadata: bytes.optional(),
  request_id: z
    .string()
    .max(128)
    .regex(/^[\x21-\x7e]+$/, 'expected 1 to 128 printable ASCII characters without spaces')
    .optional(),
});

export const listDocumentsRequestJson = z.object({
  page_size: z.number().int().optional(),
  page_token: z.string().optional(),
});

export const deleteDocumentRequestJson = z.object({
  id: z.string().max(128).optional(),
});

/**
 * A document as the HTTP mapping of ListDocuments writes it. Proto3 JSON leaves out empty values,
 * so a reader must treat the optional members as empty when absent (an empty ciphertext, no key id, no metadata).
 */
export interface DocumentJson {
  id: string;
  creator_id: string;
  /** int64 travels as a decimal string in proto3 JSON; absent for an empty document. */
  size_bytes?: string;
  ciphertext?: string;
  encryption?: { algorithm?: string; key_id?: string; nonce?: string };
  encrypted_metadata?: string;
  request_id?: string;
  create_time: string;
}

export interface ListDocumentsResponseJson {
  documents: DocumentJson[];
  next_page_token?: string;
}

/** CreateDocument's answer over the HTTP mapping: a DocumentJson without `ciphertext` and `encrypted_metadata`. */
export type CreateDocumentResponseJson = Omit<DocumentJson, 'ciphertext' | 'encrypted_metadata'>;
