import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { AppError } from '../core/errors.ts';
import type { PageCursor } from './documents.store.ts';

/** Signs and checks ListDocuments page tokens. */
export interface PageTokenCodec {
  /** An opaque token naming where the next page of `accountId` starts. */
  sign(accountId: string, cursor: PageCursor): string;
  /** The cursor in a token; INVALID_ARGUMENT when it was altered, made with an unknown key or for another Account. */
  verify(accountId: string, token: string): PageCursor;
}

const VERSION = 1;
const MAC_BYTES = 16;

function deriveKey(secret: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'platform/documents/page-token/v1', 32));
}

function invalid(): AppError {
  return new AppError('parameter_invalid', 'page_token is not valid (use next_page_token from the previous page)');
}

/**
 * Page tokens are `<payload>.<mac>` in base64url: the payload holds the version, the Account and the last
 * (created_at, id) of the page; the MAC is HMAC-SHA-256 (truncated to 128 bits) under a key derived from the
 * platform secret key with HKDF. Tokens are tamper-evident and bound to the Account, so a token can neither be
 * forged nor replayed by another organization. `secrets[0]` signs; every key verifies (rotation).
 */
export function createPageTokenCodec(secrets: readonly Buffer[]): PageTokenCodec {
  if (secrets.length === 0) throw new Error('page tokens need at least one secret key');
  const keys = secrets.map(deriveKey);
  const mac = (key: Buffer, payload: string) => createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES);

  return {
    sign(accountId, cursor) {
      const payload = Buffer.from(JSON.stringify([VERSION, accountId, cursor.created_at, cursor.id])).toString('base64url');
      return `${payload}.${mac(keys[0] as Buffer, payload).toString('base64url')}`;
    },
    verify(accountId, token) {
      if (token.length > 1024) throw invalid();
      const [payload, tag, extra] = token.split('.');
      if (!payload || !tag || extra !== undefined) throw invalid();
      const given = Buffer.from(tag, 'base64url');
      if (given.length !== MAC_BYTES || !keys.some((key) => timingSafeEqual(mac(key, payload), given))) throw invalid();
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw invalid();
      }
      if (!Array.isArray(parsed) || parsed.length !== 4) throw invalid();
      const [version, account, createdAt, id] = parsed as unknown[];
      if (
        version !== VERSION ||
        account !== accountId ||
        typeof createdAt !== 'number' ||
        !Number.isSafeInteger(createdAt) ||
        typeof id !== 'string'
      )
        throw invalid();
      return { created_at: createdAt, id };
    },
  };
}
