/**
 * The dev forge's token endpoints with the rules of GitLab's Doorkeeper: the authorization code and refresh grants of
 * `POST /oauth/token`, `GET /oauth/token/info` and `POST /oauth/revoke` (forge-facts.md, "GitLab's OAuth
 * (Doorkeeper) as the forge"). HTTP lives in the routes.
 */
import { createHash } from 'node:crypto';
import { oauthError, oauthErrorHeaders, oauthErrorStatus, REVOKE_UNAUTHORIZED_BODY } from './devforge.errors.ts';
import type { OAuthError } from './devforge.errors.ts';
import { redirectUriMatches } from './devforge.redirect-uri.ts';
import { hashSecret, randomHexToken, secretsEqual } from './devforge.store.ts';
import type { DevForgeStore } from './devforge.store.ts';
import type { AccessTokenRecord, DevForgeApplication } from './devforge.types.ts';

/** An HTTP answer from the token, revoke and token-info endpoints. */
interface OAuthHttpAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

/** Client credentials from HTTP Basic or the request body (Doorkeeper's `from_basic, from_params`). */
export interface ClientCredentials {
  clientId?: string | undefined;
  clientSecret?: string | undefined;
}

/** Parameters of `POST /oauth/token`. */
export interface TokenParams {
  grant_type?: string | undefined;
  code?: string | undefined;
  redirect_uri?: string | undefined;
  code_verifier?: string | undefined;
  refresh_token?: string | undefined;
  scope?: string | undefined;
}

/** Splits a scope string like Ruby's `String#split` (runs of whitespace); duplicates collapse. */
export function parseScopes(scope: string): string[] {
  return [
    ...new Set(
      scope
        .trim()
        .split(/\s+/)
        .filter((s) => s !== ''),
    ),
  ];
}

/** `BASE64URL(SHA256(verifier))` without padding (RFC 7636 §4.2). */
export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** An access token's state at `now`. */
export function tokenState(record: AccessTokenRecord, now: number): 'active' | 'expired' | 'revoked' {
  if (record.revokedAt !== undefined) return 'revoked';
  if (now > record.createdAt + record.expiresInSeconds * 1000) return 'expired';
  return 'active';
}

/** The token endpoints of the OAuth service. */
export interface TokenEndpoints {
  /** `POST /oauth/token`. */
  token(params: TokenParams, credentials: ClientCredentials): OAuthHttpAnswer;
  /** `GET /oauth/token/info`. */
  tokenInfo(accessToken: string | undefined): OAuthHttpAnswer;
  /** `POST /oauth/revoke`. */
  revoke(token: string | undefined, tokenTypeHint: string | undefined, credentials: ClientCredentials): OAuthHttpAnswer;
  /** Looks an access token up, with its state at the current time. */
  lookupAccessToken(accessToken: string): { record: AccessTokenRecord; state: 'active' | 'expired' | 'revoked' } | undefined;
}

/** Creates the token endpoints over the store. */
export function createTokenEndpoints(deps: { store: DevForgeStore; clock: () => number; accessTokenTtlSeconds: number }): TokenEndpoints {
  const { store, clock } = deps;

  /** Client authentication (`Doorkeeper::OAuth::Client.authenticate`): public clients may omit the secret. */
  function authenticateClient(credentials: ClientCredentials): DevForgeApplication | undefined {
    if (!credentials.clientId) return undefined;
    const app = store.applications.get(credentials.clientId);
    if (!app) return undefined;
    if (!credentials.clientSecret) return app.confidential ? undefined : app;
    return app.secret !== undefined && secretsEqual(credentials.clientSecret, app.secret) ? app : undefined;
  }

  function errorAnswer(err: OAuthError): OAuthHttpAnswer {
    return {
      status: oauthErrorStatus(err.error),
      body: { error: err.error, error_description: err.description },
      headers: oauthErrorHeaders(err),
    };
  }

  function issueToken(applicationUid: string, userId: number, scopes: string[]): OAuthHttpAnswer {
    const accessToken = randomHexToken();
    const refreshToken = randomHexToken();
    const record: AccessTokenRecord = {
      id: store.nextId('token'),
      tokenHash: hashSecret(accessToken),
      refreshTokenHash: hashSecret(refreshToken),
      applicationUid,
      userId,
      scopes,
      createdAt: clock(),
      expiresInSeconds: deps.accessTokenTtlSeconds,
    };
    store.tokens.set(record.tokenHash, record);
    store.refreshIndex.set(record.refreshTokenHash, record.tokenHash);
    return {
      status: 200,
      body: {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: record.expiresInSeconds,
        refresh_token: refreshToken,
        scope: scopes.join(' '),
        created_at: Math.floor(record.createdAt / 1000),
      },
      headers: { 'cache-control': 'no-store', pragma: 'no-cache' },
    };
  }

  function findByRefresh(refreshToken: string): AccessTokenRecord | undefined {
    const accessHash = store.refreshIndex.get(hashSecret(refreshToken));
    return accessHash === undefined ? undefined : store.tokens.get(accessHash);
  }

  function authorizationCodeGrant(params: TokenParams, credentials: ClientCredentials): OAuthHttpAnswer {
    const now = clock();
    const grant = params.code ? store.grants.get(hashSecret(params.code)) : undefined;
    // Doorkeeper's AuthorizationCodeRequest validations, in its order: params, client, grant, redirect_uri,
    // code_verifier, then single use (so a replayed code is refused only after possession is proven).
    if (grant?.codeChallenge !== undefined && !params.code_verifier) {
      return errorAnswer(oauthError('invalid_request', 'code_verifier'));
    }
    if (!params.redirect_uri) return errorAnswer(oauthError('invalid_request', 'redirect_uri'));
    const client = authenticateClient(credentials);
    if (!client) return errorAnswer(oauthError('invalid_client'));
    const invalidGrant = errorAnswer(oauthError('invalid_grant'));
    if (!grant || grant.applicationUid !== client.uid) return invalidGrant;
    if (now > grant.createdAt + grant.expiresInSeconds * 1000) return invalidGrant;
    if (!redirectUriMatches(params.redirect_uri, grant.redirectUri)) return invalidGrant;
    if (params.code_verifier) {
      if (grant.codeChallenge === undefined) return invalidGrant;
      const expected = grant.codeChallengeMethod === 'S256' ? s256Challenge(params.code_verifier) : params.code_verifier;
      if (!secretsEqual(expected, grant.codeChallenge)) return invalidGrant;
    }
    if (grant.revokedAt !== undefined) return invalidGrant;
    grant.revokedAt = now;
    return issueToken(grant.applicationUid, grant.userId, grant.scopes);
  }

  function refreshTokenGrant(params: TokenParams, credentials: ClientCredentials): OAuthHttpAnswer {
    // Doorkeeper's RefreshTokenRequest order: presence, token, client, client match, scope.
    if (!params.refresh_token) return errorAnswer(oauthError('invalid_request', 'refresh_token'));
    const now = clock();
    const old = findByRefresh(params.refresh_token);
    if (!old || tokenState(old, now) === 'revoked') return errorAnswer(oauthError('invalid_grant'));
    const client = authenticateClient(credentials);
    if (credentials.clientId && !client) return errorAnswer(oauthError('invalid_client'));
    if (!client || client.uid !== old.applicationUid) return errorAnswer(oauthError('invalid_grant'));
    let scopes = old.scopes;
    if (params.scope !== undefined && params.scope !== '') {
      const requested = parseScopes(params.scope);
      if (/[\n\r\t]/.test(params.scope) || !requested.every((s) => old.scopes.includes(s))) {
        return errorAnswer(oauthError('invalid_scope'));
      }
      scopes = requested;
    }
    // Rotation: the old record holds both the old access token and the old refresh token, so revoking it
    // invalidates the pair (forge-facts.md, "Refresh … invalidates both old tokens").
    old.revokedAt = now;
    return issueToken(old.applicationUid, old.userId, scopes);
  }

  const endpoints: TokenEndpoints = {
    token(params, credentials) {
      if (!params.grant_type) return errorAnswer(oauthError('invalid_request', 'grant_type'));
      if (params.grant_type === 'authorization_code') return authorizationCodeGrant(params, credentials);
      if (params.grant_type === 'refresh_token') return refreshTokenGrant(params, credentials);
      return errorAnswer(oauthError('unsupported_grant_type'));
    },

    tokenInfo(accessToken) {
      const found = accessToken ? endpoints.lookupAccessToken(accessToken) : undefined;
      if (!found || found.state !== 'active') {
        // GitLab's TokenInfoController answers every failure with Doorkeeper's InvalidTokenResponse (reason
        // unknown), whose body carries `state: "unauthorized"`.
        const err = oauthError('invalid_token');
        return {
          status: 401,
          body: { error: err.error, error_description: err.description, state: 'unauthorized' },
          headers: oauthErrorHeaders(err),
        };
      }
      const { record } = found;
      const remaining = Math.max(0, Math.round((record.createdAt + record.expiresInSeconds * 1000 - clock()) / 1000));
      return {
        status: 200,
        body: {
          resource_owner_id: record.userId,
          scope: record.scopes,
          expires_in: remaining,
          application: { uid: record.applicationUid },
          created_at: Math.floor(record.createdAt / 1000),
          scopes: record.scopes,
          expires_in_seconds: remaining,
        },
        headers: {},
      };
    },

    revoke(token, tokenTypeHint, credentials) {
      const client = authenticateClient(credentials);
      // GitLab's `validate_presence_of_client`: without an authenticated client the request is refused.
      if (!client) return { status: 403, body: { ...REVOKE_UNAUTHORIZED_BODY }, headers: {} };
      if (!token) return { status: 200, body: {}, headers: {} };
      const byAccess = (): AccessTokenRecord | undefined => store.tokens.get(hashSecret(token));
      const record = tokenTypeHint === 'refresh_token' ? (findByRefresh(token) ?? byAccess()) : (byAccess() ?? findByRefresh(token));
      // RFC 7009 §2.2: an unknown token is answered like a successful revocation.
      if (!record) return { status: 200, body: {}, headers: {} };
      if (record.applicationUid !== client.uid) return { status: 403, body: { ...REVOKE_UNAUTHORIZED_BODY }, headers: {} };
      record.revokedAt ??= clock();
      return { status: 200, body: {}, headers: {} };
    },

    lookupAccessToken(accessToken) {
      const record = store.tokens.get(hashSecret(accessToken));
      return record ? { record, state: tokenState(record, clock()) } : undefined;
    },
  };
  return endpoints;
}
