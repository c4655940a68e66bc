/**
 * Steps of the browser sign-in that several endpoints share (`/authorize`, the consent form, `/callback`): the
 * client and redirect URI checks that decide whether redirecting is safe at all, error redirects and pages, and
 * the start of the callback-proxy flow with a fresh PKCE pair.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { RegisteredClient } from './oauth.clients.ts';
import type { OAuthErrorCode } from './oauth.errors.ts';
import { isAllowedRedirectUri } from './oauth.allowlist.ts';
import { findRegisteredRedirectUri, withQuery } from './oauth.redirect-uri.ts';
import { PENDING_TTL_MS } from './oauth.stores.ts';
import type { AuthorizeAnswer, ConsentRequest, OAuthServiceDeps } from './oauth.types.ts';

/** RFC 7636 §4.2: S256 of a verifier, base64url without padding. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** A page shown in the browser instead of a redirect (the client or its callback cannot be trusted). */
export function errorPage(title: string, message: string, status = 400, headers?: Record<string, string>): AuthorizeAnswer {
  return { kind: 'error_page', status, title, message, ...(headers ? { headers } : {}) };
}

export type SignInDeps = Pick<
  OAuthServiceDeps,
  'serverUrl' | 'forgeUrl' | 'appId' | 'allowlist' | 'clients' | 'flows' | 'signinLimiter' | 'clock' | 'log'
>;

export interface SignInSteps {
  /** `{forge}/oauth/authorize`. */
  forgeAuthorize: string;
  /** `{MCP_SERVER_URL}/callback`: the redirect URI registered at the forge in callback-proxy mode. */
  callbackUri: string;
  /** A redirect back to the client carrying an error (RFC 6749 §4.1.2.1) and `iss` (RFC 9207). */
  clientError: (redirectUri: string, error: OAuthErrorCode, description: string, state: string | undefined) => AuthorizeAnswer;
  /** The client and redirect URI checks that decide whether redirecting is safe at all (RFC 6749 §4.1.2.1). */
  checkClientAndRedirect: (
    clientId: string | undefined,
    redirectUri: string | undefined,
    clientAddress: string,
  ) => Promise<{ ok: true; client: RegisteredClient; redirectUri: string } | { ok: false; answer: AuthorizeAnswer }>;
  /** Sends the browser to the forge through our callback with a fresh proxy PKCE pair (spec flow step 3). */
  startProxy: (
    request: ConsentRequest,
    clientAddress: string,
  ) => Promise<{ ok: true; location: string } | { ok: false; answer: AuthorizeAnswer }>;
}

export function createSignInSteps(deps: SignInDeps): SignInSteps {
  const { log, clock } = deps;
  const callbackUri = `${deps.serverUrl}/callback`;
  const forgeAuthorize = `${deps.forgeUrl.replace(/\/+$/, '')}/oauth/authorize`;

  /** The 429 page when a client address started too many sign-ins. */
  const tooManySignIns = (clientAddress: string, retryAfterSeconds: number): AuthorizeAnswer => {
    log.warn({ client_address: clientAddress }, 'sign-in refused: limit of sign-ins started per client address reached');
    return errorPage(
      'Too many sign-ins',
      'Too many sign-ins were started from your network. Wait a few minutes, then start the connection again from your application.',
      429,
      {
        'retry-after': String(retryAfterSeconds),
      },
    );
  };

  return {
    forgeAuthorize,
    callbackUri,

    clientError: (redirectUri, error, description, state) => ({
      kind: 'redirect',
      location: withQuery(redirectUri, { error, error_description: description, state, iss: deps.serverUrl }),
    }),

    async checkClientAndRedirect(clientId, redirectUri, clientAddress) {
      const resolved = await deps.clients.resolve(clientId ?? '', clientAddress);
      if (!resolved.ok && resolved.retryAfterSeconds !== undefined) {
        return {
          ok: false,
          answer: errorPage(
            'Too many requests',
            'Too many new applications were looked up from your network. Wait a few minutes, then try again.',
            429,
            {
              'retry-after': String(resolved.retryAfterSeconds),
            },
          ),
        };
      }
      if (!resolved.ok) {
        log.warn({ reason: resolved.reason }, 'authorize refused: unknown client');
        return {
          ok: false,
          answer: errorPage(
            'Unknown application',
            'This sign-in link names an application this server does not know. Start the connection again from your application.',
          ),
        };
      }
      if (redirectUri === undefined) {
        log.warn({ client_id: resolved.client.clientId.slice(0, 80) }, 'authorize refused: redirect_uri missing');
        return {
          ok: false,
          answer: errorPage(
            'Invalid sign-in request',
            'The sign-in link has no callback address. Start the connection again from your application.',
          ),
        };
      }
      const registered = findRegisteredRedirectUri(redirectUri, resolved.client.redirectUris);
      if (registered === undefined) {
        log.warn({ refused_redirect_uri: redirectUri.slice(0, 300) }, 'authorize refused: redirect_uri is not registered for this client');
        return {
          ok: false,
          answer: errorPage('Invalid sign-in request', 'The callback address of this sign-in link is not registered for the application.'),
        };
      }
      if (!isAllowedRedirectUri(deps.allowlist, redirectUri)) {
        // invalid_redirect_uri (spec "Errors"): the log lists the refused URL.
        log.warn(
          { refused_redirect_uri: redirectUri.slice(0, 300) },
          'invalid_redirect_uri: authorize refused a callback outside FORGE_OAUTH_ALLOWED_REDIRECT_URIS',
        );
        return {
          ok: false,
          answer: errorPage(
            'Callback not allowed',
            'This server does not send sign-ins to the callback address of this application (invalid_redirect_uri).',
          ),
        };
      }
      return { ok: true, client: resolved.client, redirectUri };
    },

    async startProxy(request, clientAddress) {
      const decision = deps.signinLimiter.hit(clientAddress);
      if (!decision.allowed) return { ok: false, answer: tooManySignIns(clientAddress, decision.retryAfterSeconds) };
      const proxyVerifier = randomBytes(32).toString('base64url');
      const proxyState = await deps.flows.savePending({
        clientId: request.cid,
        redirectUri: request.ru,
        ...(request.st !== undefined ? { state: request.st } : {}),
        codeChallenge: request.cc,
        scope: request.sc,
        proxyVerifier,
        expiresAt: clock.now() + PENDING_TTL_MS,
      });
      return {
        ok: true,
        location: withQuery(forgeAuthorize, {
          client_id: deps.appId,
          redirect_uri: callbackUri,
          response_type: 'code',
          scope: request.sc,
          state: proxyState,
          code_challenge: s256(proxyVerifier),
          code_challenge_method: 'S256',
        }),
      };
    },
  };
}
