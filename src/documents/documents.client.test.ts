import { randomBytes } from 'node:crypto';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DOCUMENT_ALGORITHM,
  DocumentsClientError,
  decryptDocument,
  documentKeyId,
  encryptDocument,
  generateDocumentKey,
  parseKeyFile,
  readKeyFile,
  serializeKeyFile,
  writeKeyFile,
  type EncryptedDocument,
} from './documents.client.ts';

/** The client-side encryption of documents (docs/documents.md): confidentiality, integrity and key handling. */
describe('document encryption', () => {
  const key = generateDocumentKey();
  const plaintext = Buffer.from('quarterly numbers: 42, 43, 44\n'.repeat(100));

  it('round-trips content and metadata, and the ciphertext reveals neither', () => {
    const doc = encryptDocument(key, plaintext, { name: 'q3-report.txt', size: plaintext.length });
    expect(doc.encryption).toMatchObject({ algorithm: DOCUMENT_ALGORITHM, key_id: key.id });
    expect(doc.encryption.nonce).toHaveLength(12);
    expect(doc.ciphertext).toHaveLength(plaintext.length + 16);
    expect(doc.ciphertext.includes(Buffer.from('quarterly'))).toBe(false);
    expect(doc.encrypted_metadata.includes(Buffer.from('q3-report'))).toBe(false);
    const opened = decryptDocument(key, doc);
    expect(opened.plaintext.equals(plaintext)).toBe(true);
    expect(opened.metadata).toEqual({ name: 'q3-report.txt', size: plaintext.length });
  });

  it('uses a fresh nonce per document, so equal plaintexts give unrelated ciphertexts', () => {
    const a = encryptDocument(key, plaintext, {});
    const b = encryptDocument(key, plaintext, {});
    expect(a.encryption.nonce.equals(b.encryption.nonce)).toBe(false);
    expect(a.ciphertext.equals(b.ciphertext)).toBe(false);
  });

  it('detects any alteration: content, metadata, nonce, key id, algorithm, or parts swapped between documents', () => {
    const doc = encryptDocument(key, plaintext, { name: 'a' });
    const other = encryptDocument(key, Buffer.from('other'), { name: 'b' });
    const flipped = Buffer.from(doc.ciphertext);
    flipped[3] = (flipped[3] as number) ^ 1;
    const attempts: EncryptedDocument[] = [
      { ...doc, ciphertext: flipped },
      { ...doc, encrypted_metadata: other.encrypted_metadata },
      { ...doc, ciphertext: other.ciphertext },
      { ...doc, encryption: { ...doc.encryption, nonce: other.encryption.nonce } },
      { ...doc, ciphertext: doc.ciphertext.subarray(0, 10) },
    ];
    for (const attempt of attempts) expect(() => decryptDocument(key, attempt)).toThrow(DocumentsClientError);
    expect(() => decryptDocument(key, { ...doc, encryption: { ...doc.encryption, key_id: 'ffffffffffffffff' } })).toThrow(
      /key ffffffffffffffff/,
    );
    expect(() => decryptDocument(key, { ...doc, encryption: { ...doc.encryption, algorithm: 'none' } })).toThrow(/unsupported/);
  });

  it('refuses to decrypt with another key', () => {
    const doc = encryptDocument(key, plaintext, {});
    const otherKey = generateDocumentKey();
    expect(() => decryptDocument(otherKey, doc)).toThrow(/does not hold/);
    // Even a key forged to carry the right id fails authentication.
    expect(() => decryptDocument({ id: key.id, key: otherKey.key }, doc)).toThrow(/failed authentication/);
    expect(decryptDocument([otherKey, key], doc).plaintext.equals(plaintext)).toBe(true);
  });

  it('derives the key id from the key, without revealing it', () => {
    expect(key.id).toMatch(/^[0-9a-f]{16}$/);
    expect(documentKeyId(key.key)).toBe(key.id);
    expect(key.key.toString('hex')).not.toContain(key.id);
  });
});

describe('key files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'doc-keys-'));

  it('writes a key file readable only by its owner and reads it back', async () => {
    const key = generateDocumentKey();
    const path = join(dir, 'k1.key');
    await writeKeyFile(path, key);
    if (process.platform !== 'win32') expect(statSync(path).mode & 0o777).toBe(0o600);
    const read = await readKeyFile(path);
    expect(read.loose).toBe(false);
    expect(read.key.id).toBe(key.id);
    expect(read.key.key.equals(key.key)).toBe(true);
    await expect(writeKeyFile(path, generateDocumentKey())).rejects.toThrow(/already exists/);
  });

  it('flags a key file others can read, and rejects damaged ones', async () => {
    const key = generateDocumentKey();
    const path = join(dir, 'loose.key');
    writeFileSync(path, serializeKeyFile(key), { mode: 0o644 });
    if (process.platform !== 'win32') expect((await readKeyFile(path)).loose).toBe(true);
    expect(() => parseKeyFile('nope')).toThrow(DocumentsClientError);
    expect(() =>
      parseKeyFile(JSON.stringify({ type: 'platform-document-key', version: 1, key: randomBytes(16).toString('base64url') })),
    ).toThrow(/32 bytes/);
    const damaged = JSON.parse(serializeKeyFile(key)) as Record<string, string>;
    damaged.key_id = '0000000000000000';
    expect(() => parseKeyFile(JSON.stringify(damaged))).toThrow(/damaged/);
    await expect(readKeyFile(join(dir, 'missing.key'))).rejects.toThrow(/ENOENT/);
  });
});
