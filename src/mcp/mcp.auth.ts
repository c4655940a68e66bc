/**
 * Bearer validation for `/mcp` (spec "Authentication" 1; issue 3 item 9): the forge decides whether a token is
 * good (`/oauth/token/info`), and a bounded cache keyed by a hash of the token (never the token itself) keeps a
 * burst of tool calls to one forge check per token per TTL (at most 60 s). Concurrent first requests share one
 * check. An entry is dropped when the forge answers 401 to a tool call; refusals are remembered for the same TTL.
 */
import { hash } from 'node:crypto';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { ForgeOAuth } from './oauth/oauth.forge.ts';

/** Issue 3 item 9: the validation cache keeps an answer at most 60 s. */
export const MAX_VALIDATION_TTL_MS = 60_000;

export type BearerResult =
  /** `key`: the token's {@link tokenCacheKey}, hashed once per request (the per-token rate limit counts by it too). */
  { ok: true; authInfo: AuthInfo; key: string } | { ok: false; reason: 'invalid' | 'expired' | 'wrong_application' | 'unavailable' };

export interface BearerValidator {
  validate(token: string): Promise<BearerResult>;
  /**
   * The cached answer for a token the cache holds as valid (what `validate` would answer without asking the forge),
   * else undefined. The route uses it to count both rate limits at once for a known caller.
   */
  cachedValid(token: string): Extract<BearerResult, { ok: true }> | undefined;
  /**
   * Forgets a token — the forge rejected it on a tool call, it was revoked, or a refresh replaced it — given itself
   * or its cache key ({@link tokenCacheKey}); it stays refused for the cache TTL.
   */
  forget(token: string | { key: string }): void;
  /** Cached entries, for tests and the benchmark. */
  size(): number;
}

export function tokenCacheKey(token: string): string {
  // The one-shot digest: no Hash object per request (the same bytes as createHash(...).update(token).digest).
  return hash('sha256', token, 'base64url');
}

export function createBearerValidator(deps: {
  forge: Pick<ForgeOAuth, 'tokenInfo'>;
  clock: Clock;
  log: Logger;
  /** When set, tokens of other forge applications are refused (the audience check). */
  appId?: string;
  /** Cache lifetime in ms, capped at 60 s; 0 disables the cache (the benchmark compares both). */
  ttlMs?: number;
  max?: number;
}): BearerValidator {
  const ttl = Math.min(deps.ttlMs ?? MAX_VALIDATION_TTL_MS, MAX_VALIDATION_TTL_MS);
  const cache = new LRUCache<string, { authInfo: AuthInfo; validUntil: number }>({
    max: deps.max ?? 10_000,
    ttl: Math.max(ttl, 1),
    ttlResolution: 0,
    perf: { now: () => deps.clock.now() },
  });
  const inflight = new Map<string, Promise<BearerResult>>();
  // Refusals are remembered too: a token the forge refused never becomes valid, and a client (or an attacker)
  // repeating a bad token must not cost a forge request each time.
  const refused = new LRUCache<string, { reason: 'invalid' | 'expired' | 'wrong_application'; until: number }>({
    max: deps.max ?? 10_000,
    ttl: Math.max(ttl, 1),
    ttlResolution: 0,
    perf: { now: () => deps.clock.now() },
  });
  const refuse = (key: string, reason: 'invalid' | 'expired' | 'wrong_application'): BearerResult => {
    if (ttl > 0) refused.set(key, { reason, until: deps.clock.now() + ttl });
    return { ok: false, reason };
  };

  const check = async (token: string, key: string): Promise<BearerResult> => {
    const info = await deps.forge.tokenInfo(token);
    if (!info.ok) return info.kind === 'invalid' ? refuse(key, 'invalid') : { ok: false, reason: 'unavailable' };
    const { expiresIn, applicationUid, scopes, resourceOwnerId } = info.info;
    if (expiresIn !== null && expiresIn <= 0) return refuse(key, 'expired');
    if (deps.appId !== undefined && applicationUid !== undefined && applicationUid !== deps.appId) {
      deps.log.warn('bearer refused: token issued to another forge application');
      return refuse(key, 'wrong_application');
    }
    const now = deps.clock.now();
    const authInfo: AuthInfo = {
      token,
      clientId: applicationUid ?? 'forge',
      scopes,
      ...(expiresIn !== null ? { expiresAt: Math.floor(now / 1000) + expiresIn } : {}),
      extra: { forgeUserId: resourceOwnerId },
    };
    if (ttl > 0) {
      // Never cache past the token's own expiry.
      const entryTtl = expiresIn !== null ? Math.min(ttl, expiresIn * 1000) : ttl;
      cache.set(key, { authInfo, validUntil: now + entryTtl }, { ttl: Math.max(1, entryTtl) });
    }
    return { ok: true, authInfo, key };
  };

  /** The cached valid answer for `key`; an entry past its own deadline is dropped. */
  const fresh = (key: string): Extract<BearerResult, { ok: true }> | undefined => {
    const cached = ttl > 0 ? cache.get(key) : undefined;
    if (!cached) return undefined;
    // The entry's own deadline is checked too, so the cache never answers past its TTL or the token's expiry.
    if (cached.validUntil > deps.clock.now()) return { ok: true, authInfo: cached.authInfo, key };
    cache.delete(key);
    return undefined;
  };

  return {
    cachedValid: (token) => fresh(tokenCacheKey(token)),
    async validate(token) {
      const key = tokenCacheKey(token);
      const valid = fresh(key);
      if (valid) return valid;
      const known = ttl > 0 ? refused.get(key) : undefined;
      if (known && known.until > deps.clock.now()) return { ok: false, reason: known.reason };
      let pending = inflight.get(key);
      if (!pending) {
        pending = check(token, key).finally(() => inflight.delete(key));
        inflight.set(key, pending);
      }
      return pending;
    },
    forget(token) {
      // The token is no longer good (a forge 401 on a tool call, a revocation, a refresh).
      const key = typeof token === 'string' ? tokenCacheKey(token) : token.key;
      cache.delete(key);
      if (ttl > 0) refused.set(key, { reason: 'invalid', until: deps.clock.now() + ttl });
    },
    size: () => cache.size,
  };
}
