import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import type { CreateDocumentResponseJson, DocumentJson, ListDocumentsResponseJson } from './documents.schemas.ts';

/**
 * Client-side encryption of PlatformDocuments (docs/documents.md): the server stores only what this module
 * produces and never sees plaintext, names or keys.
 *
 * Construction `A256GCM-HKDF-SHA256/v1`: a random 96-bit nonce per document; from the 256-bit document key and
 * that nonce, HKDF-SHA-256 derives one AES-256-GCM key for the content and one for the metadata (so the two
 * encryptions under one nonce never share a key); each part's associated data binds the header (algorithm, key
 * id, nonce) and the part's role, so a header, content or metadata swapped between documents fails to decrypt.
 * The 128-bit GCM tag is appended to each ciphertext.
 */
export const DOCUMENT_ALGORITHM = 'A256GCM-HKDF-SHA256/v1';

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** A document key and its id (a hash prefix of the key: it names the key without revealing it). */
export interface DocumentKey {
  id: string;
  key: Buffer;
}

/** What travels encrypted next to the content. */
export interface DocumentMetadata {
  /** The file name. */
  name?: string;
  /** Plaintext size in bytes. */
  size?: number;
  media_type?: string;
}

/** The parts of a document the client uploads and reads back (all opaque to the server). */
export interface EncryptedDocument {
  ciphertext: Buffer;
  encryption: { algorithm: string; key_id: string; nonce: Buffer };
  encrypted_metadata: Buffer;
}

/** A user-facing failure of the client (bad key file, wrong key, tampered document, server error). */
export class DocumentsClientError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'DocumentsClientError';
  }
}

/** The key id: the first 16 hex digits of SHA-256 over a label and the key. */
export function documentKeyId(key: Buffer): string {
  return createHash('sha256').update('platform/documents/key-id\0').update(key).digest('hex').slice(0, 16);
}

export function generateDocumentKey(): DocumentKey {
  const key = randomBytes(KEY_BYTES);
  return { id: documentKeyId(key), key };
}

interface KeyFileJson {
  type: 'platform-document-key';
  version: 1;
  algorithm: string;
  key_id: string;
  key: string;
}

export function serializeKeyFile(key: DocumentKey): string {
  const body: KeyFileJson = {
    type: 'platform-document-key',
    version: 1,
    algorithm: DOCUMENT_ALGORITHM,
    key_id: key.id,
    key: key.key.toString('base64url'),
  };
  return `${JSON.stringify(body, null, 2)}\n`;
}

export function parseKeyFile(text: string): DocumentKey {
  let parsed: Partial<KeyFileJson>;
  try {
    parsed = JSON.parse(text) as Partial<KeyFileJson>;
  } catch {
    throw new DocumentsClientError('the key file is not valid JSON (create one with `platform documents keygen`)');
  }
  if (parsed.type !== 'platform-document-key' || parsed.version !== 1 || typeof parsed.key !== 'string') {
    throw new DocumentsClientError('not a platform document key file (create one with `platform documents keygen`)');
  }
  const key = Buffer.from(parsed.key, 'base64url');
  if (key.length !== KEY_BYTES) throw new DocumentsClientError(`the key file's key must be ${KEY_BYTES} bytes`);
  const id = documentKeyId(key);
  if (parsed.key_id !== undefined && parsed.key_id !== id)
    throw new DocumentsClientError('the key file is damaged: its key_id does not match its key');
  return { id, key };
}

/** Writes a new key file readable only by its owner (0600); refuses to overwrite an existing file. */
export async function writeKeyFile(path: string, key: DocumentKey): Promise<void> {
  try {
    await writeFile(path, serializeKeyFile(key), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new DocumentsClientError(`${path} already exists; not overwriting a key`);
    throw error;
  }
  // The umask may have narrowed the mode further, never widened it; make it exact.
  await chmod(path, 0o600);
}

/** Reads a key file; `loose` is true when group or others may read it (the CLI warns). */
export async function readKeyFile(path: string): Promise<{ key: DocumentKey; loose: boolean }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new DocumentsClientError(`cannot read key file ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  const mode = (await stat(path)).mode;
  return { key: parseKeyFile(text), loose: process.platform !== 'win32' && (mode & 0o077) !== 0 };
}

function partKey(key: Buffer, nonce: Buffer, part: 'content' | 'metadata'): Buffer {
  return Buffer.from(hkdfSync('sha256', key, nonce, `platform/documents/v1/${part}`, KEY_BYTES));
}

function associatedData(header: EncryptedDocument['encryption'], part: 'content' | 'metadata'): Buffer {
  return Buffer.from(['platform/documents/v1', header.algorithm, header.key_id, header.nonce.toString('hex'), part].join('\0'));
}

function seal(key: Buffer, header: EncryptedDocument['encryption'], part: 'content' | 'metadata', plaintext: Buffer): Buffer {
  const cipher = createCipheriv('aes-256-gcm', partKey(key, header.nonce, part), header.nonce);
  cipher.setAAD(associatedData(header, part));
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

function open(key: Buffer, header: EncryptedDocument['encryption'], part: 'content' | 'metadata', sealed: Buffer): Buffer {
  if (sealed.length < TAG_BYTES) throw new DocumentsClientError(`the document's ${part} is truncated`);
  const decipher = createDecipheriv('aes-256-gcm', partKey(key, header.nonce, part), header.nonce);
  decipher.setAAD(associatedData(header, part));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new DocumentsClientError(`the document's ${part} failed authentication: it was altered, or encrypted with another key`);
  }
}

/** Encrypts content and metadata under `key` with a fresh nonce. */
export function encryptDocument(key: DocumentKey, plaintext: Buffer, metadata: DocumentMetadata): EncryptedDocument {
  const encryption = { algorithm: DOCUMENT_ALGORITHM, key_id: key.id, nonce: randomBytes(NONCE_BYTES) };
  return {
    ciphertext: seal(key.key, encryption, 'content', plaintext),
    encryption,
    encrypted_metadata: seal(key.key, encryption, 'metadata', Buffer.from(JSON.stringify(metadata))),
  };
}

/** Decrypts and authenticates a document; throws DocumentsClientError on a wrong key or any alteration. */
export function decryptDocument(
  keys: DocumentKey | readonly DocumentKey[],
  doc: EncryptedDocument,
): { plaintext: Buffer; metadata: DocumentMetadata } {
  const header = doc.encryption;
  if (header.algorithm !== DOCUMENT_ALGORITHM)
    throw new DocumentsClientError(`unsupported document algorithm ${JSON.stringify(header.algorithm)}`);
  if (header.nonce.length !== NONCE_BYTES) throw new DocumentsClientError('the document header has a malformed nonce');
  const candidates: readonly DocumentKey[] = 'key' in keys ? [keys] : keys;
  const key = candidates.find((k) => k.id === header.key_id);
  if (!key) throw new DocumentsClientError(`the document was encrypted with key ${header.key_id}, which the key file does not hold`);
  const metadata = JSON.parse(open(key.key, header, 'metadata', doc.encrypted_metadata).toString('utf8')) as DocumentMetadata;
  return { plaintext: open(key.key, header, 'content', doc.ciphertext), metadata };
}

/** The Document JSON of the HTTP mapping as the parts `decryptDocument` takes. */
export function encryptedPartsOf(doc: DocumentJson): EncryptedDocument {
  return {
    ciphertext: Buffer.from(doc.ciphertext ?? '', 'base64'),
    encryption: {
      algorithm: doc.encryption?.algorithm ?? '',
      key_id: doc.encryption?.key_id ?? '',
      nonce: Buffer.from(doc.encryption?.nonce ?? '', 'base64'),
    },
    encrypted_metadata: Buffer.from(doc.encrypted_metadata ?? '', 'base64'),
  };
}

export interface DocumentsHttpClientOptions {
  /** The REST listener, for example `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** A platform-plane token with the document capabilities needed. */
  token: string;
  fetch?: typeof fetch;
  /** Attempts of a create on network errors and 5xx answers, all with one request_id (default 3). */
  attempts?: number;
}

/**
 * A small client of the PlatformDocuments HTTP mapping. Create retries transient failures with the same
 * `request_id`, so a retry never stores a second copy.
 */
export function createDocumentsHttpClient(options: DocumentsHttpClientOptions) {
  const doFetch = options.fetch ?? globalThis.fetch;
  const base = options.baseUrl.replace(/\/+$/, '');
  const headers = { authorization: `Bearer ${options.token}` };

  async function request(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await doFetch(`${base}${path}`, {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new DocumentsClientError(
        `cannot reach ${base}: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`,
      );
    }
    const text = await response.text();
    let json: Record<string, unknown> = {};
    try {
      json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      // A proxy's HTML error page, for example; the status says enough.
    }
    if (!response.ok) {
      const message = (json.error as { message?: string } | undefined)?.message ?? `HTTP ${response.status}`;
      throw new DocumentsClientError(`the server answered ${response.status}: ${message}`, response.status);
    }
    return json;
  }

  return {
    /** Uploads an encrypted document; the answer carries its id and clear-text fields, not the ciphertext. */
    async create(doc: EncryptedDocument, requestId: string = randomUUID()): Promise<CreateDocumentResponseJson> {
      const body = {
        ciphertext: doc.ciphertext.toString('base64'),
        encryption: { algorithm: doc.encryption.algorithm, key_id: doc.encryption.key_id, nonce: doc.encryption.nonce.toString('base64') },
        encrypted_metadata: doc.encrypted_metadata.toString('base64'),
        request_id: requestId,
      };
      const attempts = Math.max(1, options.attempts ?? 3);
      for (let attempt = 1; ; attempt++) {
        try {
          return (await request('POST', '/platform/v1/documents', body)) as unknown as CreateDocumentResponseJson;
        } catch (error) {
          const status = (error as DocumentsClientError).status;
          const transient = status === undefined || status >= 500 || status === 429;
          if (!transient || attempt >= attempts) throw error;
          await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
        }
      }
    },
    async listPage(page: { pageSize?: number; pageToken?: string } = {}): Promise<ListDocumentsResponseJson> {
      const query = new URLSearchParams();
      if (page.pageSize !== undefined) query.set('page_size', String(page.pageSize));
      if (page.pageToken !== undefined) query.set('page_token', page.pageToken);
      const json = await request('GET', `/platform/v1/documents${query.size > 0 ? `?${query.toString()}` : ''}`);
      return {
        documents: (json.documents as DocumentJson[] | undefined) ?? [],
        ...(typeof json.next_page_token === 'string' ? { next_page_token: json.next_page_token } : {}),
      };
    },
    /** Every document of the organization, page by page. */
    async *listAll(pageSize = 100): AsyncGenerator<DocumentJson> {
      let pageToken: string | undefined;
      do {
        const page = await this.listPage({ pageSize, ...(pageToken ? { pageToken } : {}) });
        yield* page.documents;
        pageToken = page.next_page_token;
      } while (pageToken);
    },
    /** One document by id (the service has no single-document read, so this pages through the list). */
    async find(id: string): Promise<DocumentJson | undefined> {
      for await (const doc of this.listAll()) if (doc.id === id) return doc;
      return undefined;
    },
    async remove(id: string): Promise<void> {
      await request('DELETE', `/platform/v1/documents/${encodeURIComponent(id)}`);
    },
  };
}

export type DocumentsHttpClient = ReturnType<typeof createDocumentsHttpClient>;
