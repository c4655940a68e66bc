/**
 * The dev forge's OAuth provider: the rules of GitLab's Doorkeeper for pre-authorization, codes, tokens, refresh,
 * revocation and token info (forge-facts.md, "GitLab's OAuth (Doorkeeper) as the forge"). HTTP lives in the routes.
 */
import type { AuthorizeFlow } from './devforge.oauth.authorize.ts';
import { createAuthorizeFlow } from './devforge.oauth.authorize.ts';
import type { TokenEndpoints } from './devforge.oauth.tokens.ts';
import { createTokenEndpoints } from './devforge.oauth.tokens.ts';
import type { DevForgeStore } from './devforge.store.ts';

/** The OAuth service of the dev forge: the authorization steps, the token endpoints and a test hook. */
export interface OAuthService extends AuthorizeFlow, TokenEndpoints {
  /** Test hook: revokes every grant and OAuth token of a user. */
  revokeAllOf(userId: number): void;
}

/** Creates the OAuth service over the store. */
export function createOAuthService(deps: { store: DevForgeStore; clock: () => number; accessTokenTtlSeconds: number }): OAuthService {
  const { store, clock } = deps;
  return {
    ...createAuthorizeFlow(deps),
    ...createTokenEndpoints(deps),
    revokeAllOf(userId) {
      const now = clock();
      for (const g of store.grants.values()) if (g.userId === userId) g.revokedAt ??= now;
      for (const t of store.tokens.values()) if (t.userId === userId) t.revokedAt ??= now;
    },
  };
}
