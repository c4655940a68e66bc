/**
 * `POST /token` (spec "Endpoints"; RFC 6749 §4.1.3, §6; RFC 7636 §4.6): passthrough exchanges at the forge,
 * callback-proxy redeems its own one-time code; refresh always goes to the forge.
 */
import { timingSafeEqual } from 'node:crypto';
import { oauthError, oauthJson, type JsonAnswer, type OAuthErrorCode } from './oauth.errors.ts';
import { revokeForgeTokens, type ForgeTokenResult } from './oauth.forge.ts';
import { findRegisteredRedirectUri } from './oauth.redirect-uri.ts';
import type { TokenForm } from './oauth.schemas.ts';
import { s256 } from './oauth.sign-in.ts';
import { PROXY_CODE_TTL_MS, type ForgeTokens } from './oauth.stores.ts';
import type { TokenLinks } from './oauth.token-links.ts';
import type { OAuthServiceDeps } from './oauth.types.ts';

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** Forge errors passed on by name; any other 4xx from the forge becomes `invalid_grant`. */
const FORGE_GRANT_ERRORS: ReadonlySet<string> = new Set<OAuthErrorCode>([
  'invalid_grant',
  'invalid_request',
  'invalid_scope',
  'unauthorized_client',
]);

function isForgeGrantError(error: string): error is OAuthErrorCode {
  return FORGE_GRANT_ERRORS.has(error);
}

const CODE_UNUSABLE = 'The authorization code is invalid, expired or already used.';
const REDIRECT_MISMATCH = 'The redirect URI does not match the authorization request.';

export type TokenDeps = Pick<OAuthServiceDeps, 'mode' | 'clients' | 'flows' | 'forge' | 'clock' | 'log'>;

export function createTokenEndpoint(deps: TokenDeps, links: TokenLinks): (form: TokenForm, clientAddress: string) => Promise<JsonAnswer> {
  const { log, clock } = deps;

  /**
   * Revokes at the forge, in the background, tokens no client will ever receive: a failed redemption burns the
   * proxy code, and the forge tokens behind it would otherwise stay valid for their 2 hours (and the refresh token
   * for longer).
   */
  const discardTokens = (tokens: ForgeTokens, reason: string): void => {
    log.info({ reason }, 'revoking forge tokens of a proxy code that will not be redeemed');
    void revokeForgeTokens(deps.forge, tokens, log);
  };

  /** The client's token response (forge fields passed through), or the forge's error in generic words. */
  function tokenAnswer(result: ForgeTokenResult, elapsedSeconds: number): JsonAnswer {
    if (!result.ok) {
      if (result.status >= 400 && result.status < 500 && isForgeGrantError(result.error))
        return oauthError(400, result.error, 'The forge refused the grant.');
      if (result.status >= 400 && result.status < 500) return oauthError(400, 'invalid_grant', 'The forge refused the grant.');
      return oauthError(502, 'server_error', 'The forge could not be reached; try again later.');
    }
    links.link(result.tokens);
    const t = result.tokens;
    return oauthJson(200, {
      access_token: t.access_token,
      token_type: 'Bearer',
      ...(t.expires_in !== undefined ? { expires_in: Math.max(0, t.expires_in - elapsedSeconds) } : {}),
      ...(t.refresh_token !== undefined ? { refresh_token: t.refresh_token } : {}),
      ...(t.scope !== undefined ? { scope: t.scope } : {}),
    });
  }

  return async (form, clientAddress) => {
    const grantType = form.grant_type;
    if (grantType === 'refresh_token') {
      const refreshToken = form.refresh_token;
      if (!refreshToken) return oauthError(400, 'invalid_request', 'refresh_token is required.');
      const scope = form.scope;
      const result = await deps.forge.refresh({ refreshToken, ...(scope ? { scope } : {}) });
      // The forge invalidated the old pair (forge-facts.md "Refresh"): the old access token, when known, leaves
      // the validation cache at once instead of passing /mcp for up to a minute.
      if (result.ok) links.forget(refreshToken);
      return tokenAnswer(result, 0);
    }
    if (grantType !== 'authorization_code')
      return oauthError(400, 'unsupported_grant_type', 'Only authorization_code and refresh_token are supported.');
    const { code, client_id: clientId, redirect_uri: redirectUri, code_verifier: verifier } = form;
    if (!code) return oauthError(400, 'invalid_request', 'code is required.');

    if (deps.mode === 'passthrough') {
      const resolved = await deps.clients.resolve(clientId ?? '', clientAddress);
      if (!resolved.ok && resolved.retryAfterSeconds !== undefined) {
        return oauthError(429, 'too_many_requests', 'Too many requests from this address; try again later.', {
          'retry-after': String(resolved.retryAfterSeconds),
        });
      }
      if (!resolved.ok) {
        log.warn({ reason: resolved.reason }, 'token refused: unknown client');
        return oauthError(401, 'invalid_client', 'Unknown client.');
      }
      if (!redirectUri || !findRegisteredRedirectUri(redirectUri, resolved.client.redirectUris))
        return oauthError(400, 'invalid_grant', REDIRECT_MISMATCH);
      // PKCE was required at /authorize, so a verifier is always due (spec "Authentication" 3).
      if (!verifier) return oauthError(400, 'invalid_request', 'code_verifier is required.');
      return tokenAnswer(await deps.forge.exchangeCode({ code, codeVerifier: verifier, redirectUri }), 0);
    }

    // Callback proxy, spec flow step 7. The code is taken first: it works once, even when this attempt fails —
    // and then the forge tokens behind it are revoked, since no client will ever receive them.
    const taken = await deps.flows.takeCode(code);
    if (!taken.ok) {
      log.warn({ reason: taken.reason }, 'token refused: proxy code not redeemable');
      return oauthError(400, 'invalid_grant', CODE_UNUSABLE);
    }
    const record = taken.value;
    const now = clock.now();
    const refuse = (reason: string, answer: JsonAnswer): JsonAnswer => {
      log.warn(`token refused: ${reason}`);
      discardTokens(record.tokens, reason);
      return answer;
    };
    if (record.expiresAt <= now) return refuse('proxy code expired', oauthError(400, 'invalid_grant', CODE_UNUSABLE));
    if (clientId !== record.clientId) return refuse('proxy code issued to another client', oauthError(400, 'invalid_grant', CODE_UNUSABLE));
    if (redirectUri !== record.redirectUri)
      return refuse('redirect_uri differs from the authorization request', oauthError(400, 'invalid_grant', REDIRECT_MISMATCH));
    if (!verifier) return refuse('code_verifier missing', oauthError(400, 'invalid_request', 'code_verifier is required.'));
    const expected = Buffer.from(record.codeChallenge);
    const actual = Buffer.from(VERIFIER.test(verifier) ? s256(verifier) : '');
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
      return refuse('PKCE verification failed', oauthError(400, 'invalid_grant', 'PKCE verification failed.'));
    }
    const elapsedSeconds = Math.max(0, Math.floor((now - (record.expiresAt - PROXY_CODE_TTL_MS)) / 1000));
    return tokenAnswer({ ok: true, tokens: record.tokens }, elapsedSeconds);
  };
}
