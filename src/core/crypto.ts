import { createCipheriv, createDecipheriv, createHash, randomBytes, scrypt, timingSafeEqual, type BinaryLike } from 'node:crypto';

/** A random credential with a readable prefix: `<prefix>_<43 base64url chars>` (256 bits of entropy). */
export function randomToken(prefix: string, bytes = 32): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}

/** SHA-256 as hex. Credentials are random, so a fast hash is enough to store them (no dictionary to attack). */
export function sha256Hex(value: BinaryLike): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Compares two strings in time that depends only on their lengths. */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** scrypt cost as log2(N): 2^17 with r=8, p=1 is OWASP's recommendation (128 MiB, a few hundred ms). */
const DEFAULT_PASSWORD_COST = 17;
const SCRYPT = { r: 8, p: 1, keylen: 32 } as const;

function scryptAsync(password: string, salt: Buffer, keylen: number, opts: { N: number; r: number; p: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keylen, { ...opts, maxmem: 256 * opts.N * opts.r + 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/** Hashes a password with scrypt; the result encodes its parameters so they can be raised later. */
export async function hashPassword(password: string, cost = DEFAULT_PASSWORD_COST): Promise<string> {
  const salt = randomBytes(16);
  const N = 2 ** cost;
  const key = await scryptAsync(password, salt, SCRYPT.keylen, { N, r: SCRYPT.r, p: SCRYPT.p });
  return `scrypt$${N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Verifies a password against `hashPassword` output in constant time; false for any malformed hash. */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = encoded.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !key) return false;
  // Refuse absurd parameters from a corrupted row instead of allocating gigabytes.
  if (!/^\d+$/.test(n) || Number(n) > 2 ** 20 || Number(r) > 32 || Number(p) > 16) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64url'), expected.length, { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A random password for generated accounts: 24 base64url characters (144 bits). */
export function randomPassword(): string {
  return randomBytes(18).toString('base64url');
}

/**
 * AES-256-GCM sealing of small secrets at rest (provider API keys). The output names the key id so keys can be
 * rotated: `v1.<keyId>.<iv>.<ciphertext+tag>` in base64url.
 */
export interface SecretKey {
  id: string;
  key: Buffer;
}

/** The key id of a 32-byte key: the first 8 hex digits of its SHA-256, stable across restarts and replicas. */
export function secretKeyId(key: Buffer): string {
  return sha256Hex(key).slice(0, 8);
}

export function encryptSecret(plaintext: string, key: SecretKey, associatedData = ''): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  cipher.setAAD(Buffer.from(associatedData));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `v1.${key.id}.${iv.toString('base64url')}.${body.toString('base64url')}`;
}

/** The key id a sealed secret was written with, or undefined when the value is not one of ours. */
export function sealedSecretKeyId(sealed: string): string | undefined {
  const parts = sealed.split('.');
  return parts.length === 4 && parts[0] === 'v1' ? parts[1] : undefined;
}

export function decryptSecret(sealed: string, keys: readonly SecretKey[], associatedData = ''): string {
  const [version, keyId, iv, body] = sealed.split('.');
  const key = keys.find((k) => k.id === keyId);
  if (version !== 'v1' || !iv || !body || !key) throw new Error('sealed secret: unknown format or key id');
  const data = Buffer.from(body, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(associatedData));
  decipher.setAuthTag(data.subarray(data.length - 16));
  return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString('utf8');
}
