/**
 * Keeps the `/mcp` validation cache in step with `/token` and `/revoke`: a revoked or refreshed-away token stops
 * passing `/mcp` at once instead of when its cache entry lapses.
 */
import { LRUCache } from 'lru-cache';
import { tokenCacheKey } from '../mcp.auth.ts';
import type { ForgeTokens } from './oauth.stores.ts';
import type { OAuthServiceDeps } from './oauth.types.ts';

/** How long we remember which access token a refresh token came with (forge access tokens live 2 h). */
const TOKEN_LINK_TTL_MS = 2 * 3_600_000;

export interface TokenLinks {
  /** Remembers which access token a refresh token was issued with (hashes only). */
  link(tokens: ForgeTokens): void;
  /** Drops a token from the `/mcp` validation cache, and the access token a refresh token came with. */
  forget(token: string): void;
}

export function createTokenLinks(deps: Pick<OAuthServiceDeps, 'bearerCache' | 'clock'>): TokenLinks {
  const accessByRefresh = new LRUCache<string, string>({
    max: 10_000,
    ttl: TOKEN_LINK_TTL_MS,
    ttlResolution: 0,
    perf: { now: () => deps.clock.now() },
  });
  return {
    link(tokens) {
      if (tokens.refresh_token !== undefined) accessByRefresh.set(tokenCacheKey(tokens.refresh_token), tokenCacheKey(tokens.access_token));
    },
    forget(token) {
      deps.bearerCache.forget(token);
      const key = tokenCacheKey(token);
      const access = accessByRefresh.get(key);
      if (access !== undefined) {
        deps.bearerCache.forget({ key: access });
        accessByRefresh.delete(key);
      }
    },
  };
}
