/**
 * PKCE (RFC 7636) with S256 and the `state` value of the local flow. The forge application is a public client
 * (spec mcp-oauth.md "Authentication" 4), so the verifier is what stops a stolen code from being redeemed.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A verifier and its S256 challenge. */
export interface PkcePair {
  verifier: string;
  challenge: string;
  method: 'S256';
}

/** 32 random bytes as base64url: a 43-character verifier, the minimum length RFC 7636 §4.1 allows and plenty of entropy. */
export function createPkcePair(): PkcePair {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: s256(verifier), method: 'S256' };
}

/** BASE64URL(SHA256(ASCII(verifier))), RFC 7636 §4.2. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** An unguessable `state` binding the callback to this login attempt (RFC 6749 §10.12). */
export function createState(): string {
  return randomBytes(24).toString('base64url');
}

/** Constant-time comparison, so the state check leaks nothing through timing. */
export function stateMatches(expected: string, received: string | null | undefined): boolean {
  if (typeof received !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(received);
  return a.length === b.length && timingSafeEqual(a, b);
}
