/**
 * Sealing of OAuth state into opaque parameters (spec "Stateless mode"): the pending transaction inside the proxy
 * `state`, the stored tokens inside the proxy `code`, the client registration inside the virtual `client_id`, and
 * the consent cookie.
 *
 * Format: a standard JWE in compact serialization (RFC 7516) with `alg: "dir"` and `enc: "A256GCM"`, so any JOSE
 * library (jose, used by the tests) opens it. The protected header carries `kid` (which secret sealed it, for
 * rotation with `OAUTH_STATELESS_PREVIOUS_SECRET`) and `typ` (the purpose, so a sealed client id can never be
 * replayed as a proxy code). We seal with node:crypto directly rather than through jose: jose goes through
 * WebCrypto's asynchronous API, which costs ~150 µs per seal+unseal here against ~15 µs, and the issue sets a
 * budget of 50 µs (bench/mcp.bench.ts measures it).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import { secretKeyId } from '../../core/crypto.ts';

/** What a sealed value is for; part of the authenticated header. */
export type SealPurpose = 'client' | 'tx' | 'code' | 'authreq' | 'consent';

export type UnsealFailure = 'malformed' | 'unknown_key' | 'tampered' | 'wrong_purpose' | 'expired';

export type UnsealResult<T> = { ok: true; value: T; kid: string } | { ok: false; reason: UnsealFailure };

export interface Sealer {
  /** Seals `value`; it opens until `ttlMs` from now (`undefined`: no expiry). */
  seal(purpose: SealPurpose, value: object, ttlMs: number | undefined): string;
  /** Opens a sealed value with the current or a previous secret; checks purpose and expiry. */
  unseal<T>(purpose: SealPurpose, sealed: string): UnsealResult<T>;
}

interface SealKey {
  id: string;
  key: Buffer;
}

/** Derives the AES key from a configured secret, so the raw secret is never used directly (HKDF-SHA256). */
export function deriveSealKey(secret: Buffer): SealKey {
  const key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'platform mcp oauth seal v1', 32));
  return { id: secretKeyId(key), key };
}

/** Longest sealed value accepted (a proxy code with two forge tokens is under 1 KiB). */
const MAX_SEALED_LENGTH = 8192;

/**
 * A sealer over `secret` (sealing and opening) and `previous` (opening only). Payloads carry `exp` (epoch ms)
 * checked against `clock`.
 */
export function createSealer(deps: { secret: Buffer; previous?: readonly Buffer[]; clock: Clock }): Sealer {
  const current = deriveSealKey(deps.secret);
  const keys = new Map<string, Buffer>([[current.id, current.key]]);
  for (const old of deps.previous ?? []) {
    const derived = deriveSealKey(old);
    if (!keys.has(derived.id)) keys.set(derived.id, derived.key);
  }
  // Encoded headers of our own values, and their AAD bytes, computed once per purpose.
  const headers = new Map<SealPurpose, { text: string; aad: Buffer }>();
  const headerFor = (purpose: SealPurpose): { text: string; aad: Buffer } => {
    let header = headers.get(purpose);
    if (header === undefined) {
      const text = Buffer.from(JSON.stringify({ alg: 'dir', enc: 'A256GCM', kid: current.id, typ: purpose })).toString('base64url');
      header = { text, aad: Buffer.from(text, 'ascii') };
      headers.set(purpose, header);
    }
    return header;
  };
  /** Parsed protected headers by their encoded text (a handful of distinct values: purposes times keys). */
  type ParsedHeader = { alg?: unknown; enc?: unknown; kid?: unknown; typ?: unknown };
  const parsedHeaders = new Map<string, ParsedHeader>();

  return {
    seal(purpose, value, ttlMs) {
      const header = headerFor(purpose);
      const payload = ttlMs === undefined ? value : { ...value, exp: deps.clock.now() + ttlMs };
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current.key, iv);
      // RFC 7516 §5.1: the additional authenticated data is the ASCII of the encoded protected header.
      cipher.setAAD(header.aad);
      const ciphertext = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()]);
      return `${header.text}..${iv.toString('base64url')}.${ciphertext.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
    },

    unseal<T>(purpose: SealPurpose, sealed: string): UnsealResult<T> {
      if (typeof sealed !== 'string' || sealed.length > MAX_SEALED_LENGTH) return { ok: false, reason: 'malformed' };
      const parts = sealed.split('.');
      if (parts.length !== 5 || parts[1] !== '') return { ok: false, reason: 'malformed' };
      const [header, , ivText, ciphertextText, tagText] = parts as [string, string, string, string, string];
      let parsed: ParsedHeader | null | undefined = parsedHeaders.get(header);
      if (parsed === undefined) {
        try {
          const value = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as unknown;
          parsed = value !== null && typeof value === 'object' ? value : null;
        } catch {
          parsed = null;
        }
        // Only well-formed headers naming one of our keys are remembered, so the map stays small.
        if (parsed && typeof parsed.kid === 'string' && keys.has(parsed.kid) && parsedHeaders.size < 64) parsedHeaders.set(header, parsed);
      }
      if (!parsed || parsed.alg !== 'dir' || parsed.enc !== 'A256GCM') return { ok: false, reason: 'malformed' };
      const key = typeof parsed.kid === 'string' ? keys.get(parsed.kid) : undefined;
      if (!key) return { ok: false, reason: 'unknown_key' };
      const iv = Buffer.from(ivText, 'base64url');
      const tag = Buffer.from(tagText, 'base64url');
      if (iv.length !== 12 || tag.length !== 16) return { ok: false, reason: 'malformed' };
      let plaintext: string;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
        decipher.setAAD(Buffer.from(header, 'ascii'));
        decipher.setAuthTag(tag);
        plaintext = Buffer.concat([decipher.update(Buffer.from(ciphertextText, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        return { ok: false, reason: 'tampered' };
      }
      // The purpose is checked only after authentication, so it cannot be forged.
      if (parsed.typ !== purpose) return { ok: false, reason: 'wrong_purpose' };
      let value: unknown;
      try {
        value = JSON.parse(plaintext);
      } catch {
        return { ok: false, reason: 'malformed' };
      }
      if (value === null || typeof value !== 'object') return { ok: false, reason: 'malformed' };
      const exp = (value as { exp?: unknown }).exp;
      if (typeof exp === 'number' && exp <= deps.clock.now()) return { ok: false, reason: 'expired' };
      return { ok: true, value: value as T, kid: parsed.kid as string };
    },
  };
}
