/**
 * The dev forge's OAuth provider: the rules of GitLab's Doorkeeper for pre-authorization, codes, tokens, refresh,
 * revocation and token info (forge-facts.md, "GitLab's OAuth (Doorkeeper) as the forge"). HTTP lives in the routes.
 */
import { createHash } from 'node:crypto';
import { oauthError, oauthErrorHeaders, oauthErrorStatus, REVOKE_UNAUTHORIZED_BODY } from './devforge.errors.ts';
import type { OAuthError } from './devforge.errors.ts';
import { isRegisteredRedirectUri, redirectUriMatches, appendQuery } from './devforge.redirect-uri.ts';
import { hashSecret, randomHexToken, secretsEqual } from './devforge.store.ts';
import type { DevForgeStore } from './devforge.store.ts';
import { DEFAULT_SCOPES, KNOWN_SCOPES } from './devforge.types.ts';
import type { AccessTokenRecord, DevForgeApplication } from './devforge.types.ts';

/** Authorization code lifetime (Doorkeeper's `authorization_code_expires_in`, 10 minutes). */
const CODE_TTL_SECONDS = 600;

/** Parameters of `/oauth/authorize`, as strings (absent when missing or not a string). */
export interface AuthorizeParams {
  client_id?: string;
  redirect_uri?: string;
  response_type?: string;
  state?: string;
  scope?: string;
  code_challenge?: string;
  code_challenge_method?: string;
}

/** A validated authorization request (Doorkeeper's `PreAuthorization`). */
interface PreAuthorization {
  application: DevForgeApplication;
  redirectUri: string;
  responseType: 'code';
  state?: string;
  scopes: string[];
  codeChallenge?: string;
  codeChallengeMethod?: 'plain' | 'S256';
}

/**
 * Outcome of validating an authorization request. `fatal` errors (no client, unregistered redirect URI) must never
 * be redirected to; `redirect` errors go back to the (registered) redirect URI.
 */
type PreAuthResult =
  | { kind: 'ok'; preAuth: PreAuthorization }
  | { kind: 'fatal'; error: OAuthError }
  | { kind: 'redirect'; error: OAuthError; location: string };

/** An HTTP answer from the token, revoke and token-info endpoints. */
interface OAuthHttpAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

/** Client credentials from HTTP Basic or the request body (Doorkeeper's `from_basic, from_params`). */
export interface ClientCredentials {
  clientId?: string;
  clientSecret?: string;
}

/** Parameters of `POST /oauth/token`. */
interface TokenParams {
  grant_type?: string;
  code?: string;
  redirect_uri?: string;
  code_verifier?: string;
  refresh_token?: string;
  scope?: string;
}

/** The OAuth service of the dev forge. */
export interface OAuthService {
  /** Checks only the client and its redirect URI (the part that decides whether redirecting is safe at all). */
  checkClient(params: AuthorizeParams): { kind: 'ok'; application: DevForgeApplication; redirectUri: string } | { kind: 'fatal'; error: OAuthError };
  /** Full validation of an authorization request. */
  preAuthorize(params: AuthorizeParams): PreAuthResult;
  /** Whether GitLab would skip its authorize page for this user (trusted app, or confidential app already approved). */
  canSkipConsent(preAuth: PreAuthorization, userId: number): boolean;
  /** Issues a code and returns the redirect location `redirect_uri?code=…&state=…`. */
  approve(preAuth: PreAuthorization, userId: number): string;
  /** The redirect location for a refusal (`error=access_denied`). */
  denyLocation(redirectUri: string, state: string | undefined): string;
  /** `POST /oauth/token`. */
  token(params: TokenParams, credentials: ClientCredentials): OAuthHttpAnswer;
  /** `GET /oauth/token/info`. */
  tokenInfo(accessToken: string | undefined): OAuthHttpAnswer;
  /** `POST /oauth/revoke`. */
  revoke(token: string | undefined, tokenTypeHint: string | undefined, credentials: ClientCredentials): OAuthHttpAnswer;
  /** Looks an access token up, with its state at the current time. */
  lookupAccessToken(accessToken: string): { record: AccessTokenRecord; state: 'active' | 'expired' | 'revoked' } | undefined;
  /** Test hook: revokes every grant and OAuth token of a user. */
  revokeAllOf(userId: number): void;
}

/** Splits a scope string like Ruby's `String#split` (runs of whitespace); duplicates collapse. */
export function parseScopes(scope: string): string[] {
  return [...new Set(scope.trim().split(/\s+/).filter((s) => s !== ''))];
}

/** `BASE64URL(SHA256(verifier))` without padding (RFC 7636 §4.2). */
export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

function sameScopes(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((s) => b.includes(s));
}

/** Creates the OAuth service over the store. */
export function createOAuthService(deps: {
  store: DevForgeStore;
  clock: () => number;
  accessTokenTtlSeconds: number;
}): OAuthService {
  const { store, clock } = deps;

  function tokenState(record: AccessTokenRecord, now: number): 'active' | 'expired' | 'revoked' {
    if (record.revokedAt !== undefined) return 'revoked';
    if (now > record.createdAt + record.expiresInSeconds * 1000) return 'expired';
    return 'active';
  }

  /** Doorkeeper's `ScopeChecker.valid?`: non-blank, no control whitespace, known to the server and the application. */
  function scopesValid(scopeString: string, app: DevForgeApplication): boolean {
    if (scopeString.trim() === '' || /[\n\r\t]/.test(scopeString)) return false;
    const requested = parseScopes(scopeString);
    const known: readonly string[] = KNOWN_SCOPES;
    return requested.every((s) => known.includes(s) && (app.scopes.length === 0 || app.scopes.includes(s)));
  }

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

  let approvalsSincePrune = 0;
  /**
   * Drops used and expired codes now and then so memory stays bounded under benchmarks. Behaviour is unchanged:
   * an unknown code is refused with the same `invalid_grant` as a used or expired one.
   */
  function pruneGrants(): void {
    approvalsSincePrune += 1;
    if (approvalsSincePrune < 256) return;
    approvalsSincePrune = 0;
    const now = clock();
    for (const [key, g] of store.grants) {
      if (g.revokedAt !== undefined || now > g.createdAt + g.expiresInSeconds * 1000) store.grants.delete(key);
    }
  }

  const service: OAuthService = {
    checkClient(params) {
      if (!params.client_id) return { kind: 'fatal', error: oauthError('invalid_request', 'client_id') };
      const application = store.applications.get(params.client_id);
      if (!application) return { kind: 'fatal', error: oauthError('invalid_client') };
      const redirectUri = params.redirect_uri;
      if (!redirectUri || !isRegisteredRedirectUri(redirectUri, application.redirectUris)) {
        return { kind: 'fatal', error: oauthError('invalid_redirect_uri') };
      }
      return { kind: 'ok', application, redirectUri };
    },

    preAuthorize(params) {
      const client = service.checkClient(params);
      if (client.kind === 'fatal') return client;
      const { application, redirectUri } = client;
      const redirect = (error: OAuthError): PreAuthResult => ({
        kind: 'redirect',
        error,
        location: appendQuery(redirectUri, {
          error: error.error,
          error_description: error.description,
          state: params.state,
        }),
      });
      if (!params.response_type) return redirect(oauthError('invalid_request', 'response_type'));
      if (params.response_type !== 'code') return redirect(oauthError('unsupported_response_type'));
      // No scope: GitLab's default scopes, restricted to those the application allows (Doorkeeper `build_scopes`).
      const scopeString =
        params.scope !== undefined && params.scope.trim() !== ''
          ? params.scope
          : DEFAULT_SCOPES.filter((s) => application.scopes.length === 0 || application.scopes.includes(s)).join(' ');
      if (!scopesValid(scopeString, application)) return redirect(oauthError('invalid_scope'));
      let method: 'plain' | 'S256' | undefined;
      if (params.code_challenge) {
        // Current Doorkeeper requires the method to be named; `plain` and `S256` are both accepted.
        if (params.code_challenge_method !== 'plain' && params.code_challenge_method !== 'S256') {
          return redirect(oauthError('invalid_code_challenge_method'));
        }
        method = params.code_challenge_method;
      }
      return {
        kind: 'ok',
        preAuth: {
          application,
          redirectUri,
          responseType: 'code',
          state: params.state,
          scopes: parseScopes(scopeString),
          codeChallenge: params.code_challenge || undefined,
          codeChallengeMethod: method,
        },
      };
    },

    canSkipConsent(preAuth, userId) {
      if (preAuth.application.trusted) return true;
      // GitLab skips for an existing matching token only when the application is confidential: public clients
      // always see the authorize page (Oauth::AuthorizationsController#new, Doorkeeper >= 5.5).
      if (!preAuth.application.confidential) return false;
      const now = clock();
      for (const t of store.tokens.values()) {
        if (
          t.userId === userId &&
          t.applicationUid === preAuth.application.uid &&
          tokenState(t, now) === 'active' &&
          sameScopes(t.scopes, preAuth.scopes)
        ) {
          return true;
        }
      }
      return false;
    },

    approve(preAuth, userId) {
      pruneGrants();
      const code = randomHexToken();
      store.grants.set(hashSecret(code), {
        codeHash: hashSecret(code),
        applicationUid: preAuth.application.uid,
        userId,
        redirectUri: preAuth.redirectUri,
        scopes: preAuth.scopes,
        codeChallenge: preAuth.codeChallenge,
        codeChallengeMethod: preAuth.codeChallengeMethod,
        createdAt: clock(),
        expiresInSeconds: CODE_TTL_SECONDS,
      });
      return appendQuery(preAuth.redirectUri, { code, state: preAuth.state });
    },

    denyLocation(redirectUri, state) {
      const err = oauthError('access_denied');
      return appendQuery(redirectUri, { error: err.error, error_description: err.description, state });
    },

    token(params, credentials) {
      if (!params.grant_type) return errorAnswer(oauthError('invalid_request', 'grant_type'));
      if (params.grant_type === 'authorization_code') return authorizationCodeGrant(params, credentials);
      if (params.grant_type === 'refresh_token') return refreshTokenGrant(params, credentials);
      return errorAnswer(oauthError('unsupported_grant_type'));
    },

    tokenInfo(accessToken) {
      const found = accessToken ? service.lookupAccessToken(accessToken) : undefined;
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
      const record =
        tokenTypeHint === 'refresh_token' ? (findByRefresh(token) ?? byAccess()) : (byAccess() ?? findByRefresh(token));
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

    revokeAllOf(userId) {
      const now = clock();
      for (const g of store.grants.values()) if (g.userId === userId) g.revokedAt ??= now;
      for (const t of store.tokens.values()) if (t.userId === userId) t.revokedAt ??= now;
    },
  };
  return service;
}
