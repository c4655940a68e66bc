/** `POST /revoke` (RFC 7009): revokes at the forge and drops the token from the `/mcp` validation cache. */
import { oauthError, oauthJson, type JsonAnswer } from './oauth.errors.ts';
import type { RevokeForm } from './oauth.schemas.ts';
import type { TokenLinks } from './oauth.token-links.ts';
import type { OAuthServiceDeps } from './oauth.types.ts';

export function createRevokeEndpoint(deps: Pick<OAuthServiceDeps, 'forge'>, links: TokenLinks): (form: RevokeForm) => Promise<JsonAnswer> {
  return async (form) => {
    const token = form.token;
    if (!token) return oauthError(400, 'invalid_request', 'token is required.');
    const hint = form.token_type_hint;
    const result = await deps.forge.revoke({ token, ...(hint ? { tokenTypeHint: hint } : {}) });
    // RFC 7009 §2.2: 200 also for unknown tokens; 503 when the forge cannot be asked.
    if (result.ok || (result.status >= 400 && result.status < 500)) {
      // The token stops passing /mcp at once, not when its validation cache entry lapses.
      links.forget(token);
      return oauthJson(200, {});
    }
    return oauthError(503, 'temporarily_unavailable', 'Revocation is unavailable; try again later.');
  };
}
