import { randomBytes } from 'node:crypto';
import { CompactEncrypt, compactDecrypt } from 'jose';
import { describe, expect, it } from 'vitest';
import { fakeClock } from '../../core/clock.ts';
import { createSealer, deriveSealKey } from './oauth.seal.ts';

describe('sealing (stateless mode)', () => {
  const clock = fakeClock();
  const secret = randomBytes(32);

  it('[STATELESS-SEALED] seals and opens a value; the sealed text reveals nothing of it', () => {
    const sealer = createSealer({ secret, clock });
    const sealed = sealer.seal('code', { access_token: 'glpat-very-secret', n: 1 }, 60_000);
    expect(sealed).not.toContain('glpat');
    expect(Buffer.from(sealed.split('.')[3] ?? '', 'base64url').toString('latin1')).not.toContain('glpat');
    const opened = sealer.unseal<{ access_token: string; n: number }>('code', sealed);
    expect(opened.ok && opened.value.access_token).toBe('glpat-very-secret');
  });

  it('[STATELESS-SEALED] refuses tampered values, values of a foreign secret and values of another purpose', () => {
    const sealer = createSealer({ secret, clock });
    const sealed = sealer.seal('tx', { a: 1 }, 60_000);
    const parts = sealed.split('.');
    const flip = (text: string) => {
      const bytes = Buffer.from(text, 'base64url');
      bytes[0] = (bytes[0] ?? 0) ^ 1;
      return bytes.toString('base64url');
    };
    expect(sealer.unseal('tx', [parts[0], '', parts[2], flip(parts[3] ?? ''), parts[4]].join('.'))).toEqual({
      ok: false,
      reason: 'tampered',
    });
    expect(sealer.unseal('tx', [parts[0], '', parts[2], parts[3], flip(parts[4] ?? '')].join('.'))).toEqual({
      ok: false,
      reason: 'tampered',
    });
    expect(sealer.unseal('tx', [parts[0], '', flip(parts[2] ?? ''), parts[3], parts[4]].join('.'))).toEqual({
      ok: false,
      reason: 'tampered',
    });
    // A header rewritten to another purpose no longer authenticates.
    const otherHeader = Buffer.from(JSON.stringify({ alg: 'dir', enc: 'A256GCM', kid: deriveSealKey(secret).id, typ: 'code' })).toString(
      'base64url',
    );
    expect(sealer.unseal('code', [otherHeader, '', parts[2], parts[3], parts[4]].join('.'))).toEqual({ ok: false, reason: 'tampered' });
    expect(sealer.unseal('code', sealed)).toEqual({ ok: false, reason: 'wrong_purpose' });
    const foreign = createSealer({ secret: randomBytes(32), clock });
    expect(foreign.unseal('tx', sealed)).toEqual({ ok: false, reason: 'unknown_key' });
    expect(sealer.unseal('tx', 'not.a.jwe')).toEqual({ ok: false, reason: 'malformed' });
    expect(sealer.unseal('tx', 'x'.repeat(10_000))).toEqual({ ok: false, reason: 'malformed' });
  });

  it('[STATELESS-SEALED] refuses a value once its lifetime is over', () => {
    const sealer = createSealer({ secret, clock });
    const sealed = sealer.seal('code', { a: 1 }, 10 * 60_000);
    clock.advance(10 * 60_000 - 1);
    expect(sealer.unseal('code', sealed).ok).toBe(true);
    clock.advance(1);
    expect(sealer.unseal('code', sealed)).toEqual({ ok: false, reason: 'expired' });
  });

  it('[CONFIG-ROTATION] the previous secret still opens values sealed before a rotation; new values use the new one', () => {
    const oldSecret = randomBytes(32);
    const newSecret = randomBytes(32);
    const before = createSealer({ secret: oldSecret, clock }).seal('tx', { a: 'in flight' }, 60_000);
    const rotated = createSealer({ secret: newSecret, previous: [oldSecret], clock });
    const opened = rotated.unseal<{ a: string }>('tx', before);
    expect(opened.ok && opened.value.a).toBe('in flight');
    const after = rotated.seal('tx', { a: 'new' }, 60_000);
    expect(createSealer({ secret: oldSecret, clock }).unseal('tx', after)).toEqual({ ok: false, reason: 'unknown_key' });
    expect(createSealer({ secret: newSecret, clock }).unseal('tx', before)).toEqual({ ok: false, reason: 'unknown_key' });
  });

  it("[STATELESS-SEALED] is a standard JWE (dir, A256GCM): jose opens ours and we open jose's", async () => {
    const sealer = createSealer({ secret, clock });
    const key = deriveSealKey(secret);
    const ours = sealer.seal('client', { id: 'x' }, undefined);
    const { plaintext, protectedHeader } = await compactDecrypt(ours, key.key);
    expect(JSON.parse(new TextDecoder().decode(plaintext))).toEqual({ id: 'x' });
    expect(protectedHeader).toMatchObject({ alg: 'dir', enc: 'A256GCM', kid: key.id, typ: 'client' });
    const theirs = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify({ id: 'y' })))
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: key.id, typ: 'client' })
      .encrypt(key.key);
    const opened = sealer.unseal<{ id: string }>('client', theirs);
    expect(opened.ok && opened.value.id).toBe('y');
  });
});
