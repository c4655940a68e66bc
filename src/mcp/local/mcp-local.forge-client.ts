/**
 * The calls the local flow makes to the forge's OAuth endpoints (forge-facts.md, "GitLab's OAuth (Doorkeeper)"):
 * the authorization-code exchange with PKCE, the refresh grant (GitLab rotates the pair and invalidates the old
 * one), revocation and the current user. The application is public: `client_id` only, never a secret.
 */
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import type { StoredTokenSet } from './mcp-local.token-file.ts';

/** GitLab's access-token lifetime; used when a token response omits `expires_in`. */
const DEFAULT_EXPIRES_IN_SECONDS = 7200;

/** How long one forge request may take before the flow gives up. */
const REQUEST_TIMEOUT_MS = 30_000;

/** Where the forge is and who we are at it. */
export interface ForgeOAuthTarget {
  forgeUrl: string;
  clientId: string;
}

/** The forge's OAuth endpoints as used by the local flow. */
export interface ForgeOAuthClient {
  /** Redeems an authorization code. Throws AppError `unauthorized` when the forge refuses the grant. */
  exchangeCode(input: { code: string; redirectUri: string; codeVerifier: string }): Promise<StoredTokenSet>;
  /**
   * Trades a refresh token for a new pair. Throws AppError `unauthorized` when the forge refuses it (revoked,
   * already used, expired: sign in again) and `unavailable` when the forge cannot be reached (try later).
   */
  refresh(refreshToken: string): Promise<StoredTokenSet>;
  /** Revokes a token; the forge answers 200 for unknown tokens too. */
  revoke(token: string, hint: 'access_token' | 'refresh_token'): Promise<void>;
  /** The signed-in user's username, to confirm a sign-in. */
  username(accessToken: string): Promise<string>;
}

/** A forge OAuth client for `target`, using `fetch` and the `clock` that dates expiry. */
export function createForgeOAuthClient(deps: ForgeOAuthTarget & { fetch: typeof fetch; clock: Clock }): ForgeOAuthClient {
  const { forgeUrl, clientId, clock } = deps;
  const base = forgeUrl.replace(/\/+$/, '');

  async function post(path: string, form: Record<string, string>): Promise<Response> {
    try {
      return await deps.fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams(form).toString(),
        redirect: 'manual',
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw new AppError('unavailable', `the forge at ${base} cannot be reached`, { cause: error });
    }
  }

  async function tokenRequest(form: Record<string, string>, what: string): Promise<StoredTokenSet> {
    const startedAt = clock.now();
    const response = await post('/oauth/token', { ...form, client_id: clientId });
    const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (response.status === 400 || response.status === 401) {
      // Only the RFC 6749 error code is reported: GitLab's descriptions are generic and carry nothing secret,
      // but the code is all a user needs (forge-facts.md: invalid_grant for used, expired or mismatched grants).
      const code = typeof body?.error === 'string' ? body.error : `HTTP ${response.status}`;
      throw new AppError('unauthorized', `the forge refused the ${what} (${code})`);
    }
    if (!response.ok) throw new AppError('unavailable', `the forge answered HTTP ${response.status} to the ${what}`);
    const accessToken = body?.access_token;
    const refreshToken = body?.refresh_token;
    if (typeof accessToken !== 'string' || accessToken === '' || typeof refreshToken !== 'string' || refreshToken === '') {
      throw new AppError('unavailable', `the forge's answer to the ${what} has no token pair`);
    }
    const expiresIn = typeof body?.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_EXPIRES_IN_SECONDS;
    return {
      version: 1,
      forge_url: base,
      client_id: clientId,
      access_token: accessToken,
      refresh_token: refreshToken,
      // Dated from before the request by our own clock, so clock skew with the forge cannot make us late.
      expires_at: startedAt + expiresIn * 1000,
      scope: typeof body?.scope === 'string' ? body.scope : '',
    };
  }

  return {
    exchangeCode({ code, redirectUri, codeVerifier }) {
      return tokenRequest(
        { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: codeVerifier },
        'authorization code',
      );
    },

    refresh(refreshToken) {
      return tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken }, 'refresh token');
    },

    async revoke(token, hint) {
      const response = await post('/oauth/revoke', { client_id: clientId, token, token_type_hint: hint });
      await response.body?.cancel();
      if (!response.ok) throw new AppError('unavailable', `the forge answered HTTP ${response.status} to the revocation`);
    },

    async username(accessToken) {
      let response: Response;
      try {
        response = await deps.fetch(`${base}/api/v4/user`, {
          headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
      } catch (error) {
        throw new AppError('unavailable', `the forge at ${base} cannot be reached`, { cause: error });
      }
      const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
      if (response.status === 401) throw new AppError('unauthorized', 'the forge does not accept the token');
      if (!response.ok || typeof body?.username !== 'string')
        throw new AppError('unavailable', `the forge answered HTTP ${response.status} to /api/v4/user`);
      return body.username;
    },
  };
}
