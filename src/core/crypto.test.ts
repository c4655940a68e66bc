import { describe, expect, it } from 'vitest';
import {
  decryptSecret,
  encryptSecret,
  hashPassword,
  randomToken,
  safeEqual,
  sealedSecretKeyId,
  secretKeyId,
  verifyPassword,
} from './crypto.ts';

describe('crypto', () => {
  it('makes prefixed 256-bit tokens', () => {
    const token = randomToken('pplat');
    expect(token).toMatch(/^pplat_[A-Za-z0-9_-]{43}$/);
    expect(randomToken('pplat')).not.toBe(token);
  });

  it('hashes passwords with scrypt and verifies them', async () => {
    const hash = await hashPassword('correct horse battery', 14);
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(hash).not.toContain('correct horse');
    expect(await verifyPassword('correct horse battery', hash)).toBe(true);
    expect(await verifyPassword('wrong horse battery', hash)).toBe(false);
    expect(await verifyPassword('x', 'garbage')).toBe(false);
    expect(await verifyPassword('x', 'scrypt$1073741824$8$1$c2FsdA$a2V5')).toBe(false);
  });

  it('seals secrets with AES-256-GCM under a named key and refuses tampering', () => {
    const key = { id: secretKeyId(Buffer.alloc(32, 3)), key: Buffer.alloc(32, 3) };
    const other = { id: secretKeyId(Buffer.alloc(32, 4)), key: Buffer.alloc(32, 4) };
    const sealed = encryptSecret('sk-live-123', key, 'provider:openai');
    expect(sealed).not.toContain('sk-live');
    expect(sealedSecretKeyId(sealed)).toBe(key.id);
    expect(decryptSecret(sealed, [other, key], 'provider:openai')).toBe('sk-live-123');
    expect(() => decryptSecret(sealed, [key], 'provider:other')).toThrow();
    expect(() => decryptSecret(sealed, [other])).toThrow(/unknown format or key id/);
    // A middle character carries six whole bits; the last one of a base64 text may carry padding bits a decoder
    // ignores, so changing it does not always change the bytes.
    const middle = Math.floor(sealed.length / 2);
    const tampered = sealed.slice(0, middle) + (sealed[middle] === 'A' ? 'B' : 'A') + sealed.slice(middle + 1);
    expect(() => decryptSecret(tampered, [key], 'provider:openai')).toThrow();
  });

  it('compares strings safely', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });
});
