/**
 * The dev forge's authorization endpoint with the rules of GitLab's Doorkeeper: pre-authorization of
 * `/oauth/authorize` (client and redirect URI first, never redirected to), consent skipping, codes and refusals
 * (forge-facts.md, "GitLab's OAuth (Doorkeeper) as the forge"). HTTP lives in the routes.
 */
import { oauthError } from './devforge.errors.ts';
import type { OAuthError } from './devforge.errors.ts';
import { parseScopes, tokenState } from './devforge.oauth.tokens.ts';
import { isRegisteredRedirectUri, appendQuery } from './devforge.redirect-uri.ts';
import { hashSecret, randomHexToken } from './devforge.store.ts';
import type { DevForgeStore } from './devforge.store.ts';
import { DEFAULT_SCOPES, KNOWN_SCOPES } from './devforge.types.ts';
import type { DevForgeApplication } from './devforge.types.ts';

/** Authorization code lifetime (Doorkeeper's `authorization_code_expires_in`, 10 minutes). */
const CODE_TTL_SECONDS = 600;

/** Parameters of `/oauth/authorize`, as strings (absent when missing or not a string). */
export interface AuthorizeParams {
  client_id?: string | undefined;
  redirect_uri?: string | undefined;
  response_type?: string | undefined;
  state?: string | undefined;
  scope?: string | undefined;
  code_challenge?: string | undefined;
  code_challenge_method?: string | undefined;
}

/** A validated authorization request (Doorkeeper's `PreAuthorization`). */
export interface PreAuthorization {
  application: DevForgeApplication;
  redirectUri: string;
  responseType: 'code';
  state?: string | undefined;
  scopes: string[];
  codeChallenge?: string | undefined;
  codeChallengeMethod?: 'plain' | 'S256' | undefined;
}

/**
 * Outcome of validating an authorization request. `fatal` errors (no client, unregistered redirect URI) must never
 * be redirected to; `redirect` errors go back to the (registered) redirect URI.
 */
export type PreAuthResult =
  | { kind: 'ok'; preAuth: PreAuthorization }
  | { kind: 'fatal'; error: OAuthError }
  | { kind: 'redirect'; error: OAuthError; location: string };

/** The authorization steps of the OAuth service. */
export interface AuthorizeFlow {
  /** Checks only the client and its redirect URI (the part that decides whether redirecting is safe at all). */
  checkClient(
    params: AuthorizeParams,
  ): { kind: 'ok'; application: DevForgeApplication; redirectUri: string } | { kind: 'fatal'; error: OAuthError };
  /** Full validation of an authorization request. */
  preAuthorize(params: AuthorizeParams): PreAuthResult;
  /** Whether GitLab would skip its authorize page for this user (trusted app, or confidential app already approved). */
  canSkipConsent(preAuth: PreAuthorization, userId: number): boolean;
  /** Issues a code and returns the redirect location `redirect_uri?code=…&state=…`. */
  approve(preAuth: PreAuthorization, userId: number): string;
  /** The redirect location for a refusal (`error=access_denied`). */
  denyLocation(redirectUri: string, state: string | undefined): string;
}

function sameScopes(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((s) => b.includes(s));
}

/** Creates the authorization steps over the store. */
export function createAuthorizeFlow(deps: { store: DevForgeStore; clock: () => number }): AuthorizeFlow {
  const { store, clock } = deps;

  /** Doorkeeper's `ScopeChecker.valid?`: non-blank, no control whitespace, known to the server and the application. */
  function scopesValid(scopeString: string, app: DevForgeApplication): boolean {
    if (scopeString.trim() === '' || /[\n\r\t]/.test(scopeString)) return false;
    const requested = parseScopes(scopeString);
    const known: readonly string[] = KNOWN_SCOPES;
    return requested.every((s) => known.includes(s) && (app.scopes.length === 0 || app.scopes.includes(s)));
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

  const flow: AuthorizeFlow = {
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
      const client = flow.checkClient(params);
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
  };
  return flow;
}
