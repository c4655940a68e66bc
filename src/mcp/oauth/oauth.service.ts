/**
 * The authorization server in front of the forge (spec "Endpoints", "Callback proxy flow", "Passthrough flow").
 * HTTP-free: each operation takes the request's parameters and returns what to answer (a redirect, a page, or an
 * RFC 6749 JSON body); oauth.routes.ts writes it. Clients get generic messages; the reason goes to the log
 * (issue 3 item 10), never with a token, code, verifier or secret.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import { tokenCacheKey, type BearerValidator } from '../mcp.auth.ts';
import { isAllowedRedirectUri, type Allowlist } from './oauth.allowlist.ts';
import { MAX_SEALED_REDIRECT_URIS_BYTES, type ClientRegistry, type RegisteredClient } from './oauth.clients.ts';
import { hasApproval, readApprovals, withApproval } from './oauth.consent.ts';
import { revokeForgeTokens, type ForgeOAuth, type ForgeTokenResult } from './oauth.forge.ts';
import type { RateLimiter } from './oauth.rate-limit.ts';
import { checkRedirectUri, findRegisteredRedirectUri, withQuery } from './oauth.redirect-uri.ts';
import type { ReplayCache } from './oauth.replay.ts';
import type { Sealer } from './oauth.seal.ts';
import { PENDING_TTL_MS, PROXY_CODE_TTL_MS, type FlowStore, type ForgeTokens, type PendingTransaction } from './oauth.stores.ts';

export type OAuthMode = 'passthrough' | 'callback_proxy';

/** Scopes the forge knows (forge-facts.md "Scopes"); a client may ask for any of them. */
export const FORGE_SCOPES = new Set(['api', 'read_api', 'read_user', 'read_repository', 'write_repository', 'openid', 'profile', 'email']);

/** Longest client `state` carried through (it travels inside the forge's URL, sealed in stateless mode). */
const MAX_STATE_LENGTH = 1024;

export interface OAuthServiceDeps {
  mode: OAuthMode;
  /** `MCP_SERVER_URL`: the issuer, and the base of `/callback`. */
  serverUrl: string;
  forgeUrl: string;
  appId: string;
  /** Default scopes (`FORGE_OAUTH_SCOPES`). */
  scopes: string;
  allowlist: Allowlist;
  clients: ClientRegistry;
  flows: FlowStore;
  forge: ForgeOAuth;
  /** Seals consent requests and the consent cookie (the stateless secret when set, else a platform-derived key). */
  sealer: Sealer;
  registerLimiter: RateLimiter;
  /**
   * Sign-ins started (pending transactions created) per client address: without it anyone could fill the bounded
   * pending-transaction store and evict every sign-in in progress.
   */
  signinLimiter: RateLimiter;
  /** Remembers used consent forms (their `jti`), so a sealed consent request works once. */
  consentReplay: ReplayCache;
  /** The `/mcp` validation cache: revoked and refreshed-away tokens are dropped from it. */
  bearerCache: Pick<BearerValidator, 'forget'>;
  clock: Clock;
  log: Logger;
}

/** An RFC 6749 / RFC 7591 JSON answer. */
export interface JsonAnswer {
  kind: 'json';
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

export type AuthorizeAnswer =
  | { kind: 'redirect'; location: string; setConsentCookie?: string }
  | { kind: 'error_page'; status: number; title: string; message: string; headers?: Record<string, string> }
  | { kind: 'consent'; client: RegisteredClient; redirectUri: string; scope: string; sealedRequest: string };

/** The sealed content of a consent form: a validated authorization request, usable once (`jti`). */
interface ConsentRequest {
  cid: string;
  ru: string;
  st?: string;
  cc: string;
  sc: string;
  jti: string;
}

/** How long the service remembers which access token a refresh token came with (forge access tokens live 2 h). */
const TOKEN_LINK_TTL_MS = 2 * 3_600_000;

function oauthError(status: number, error: string, description: string, headers: Record<string, string> = {}): JsonAnswer {
  return { kind: 'json', status, body: { error, error_description: description }, headers };
}

/** RFC 7636 §4.2: S256 of a verifier, base64url without padding. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** An S256 challenge is the base64url of 32 bytes: exactly 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

function first(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

const registrationSchema = z.object({
  redirect_uris: z.array(z.string()).min(1).max(10),
  client_name: z.string().max(200).optional(),
  grant_types: z.array(z.string()).optional(),
  response_types: z.array(z.string()).optional(),
  token_endpoint_auth_method: z.string().optional(),
  scope: z.string().max(500).optional(),
});

/** The OAuth endpoints; `clientAddress` is the limit key of the requesting client (oauth.rate-limit.ts). */
export interface OAuthService {
  register(body: unknown, clientAddress: string): Promise<JsonAnswer>;
  authorize(query: Record<string, unknown>, consentCookie: string | undefined, clientAddress: string): Promise<AuthorizeAnswer>;
  decideConsent(input: { sealedRequest: string; decision: string; consentCookie: string | undefined; clientAddress: string }): Promise<AuthorizeAnswer>;
  callback(query: Record<string, unknown>): Promise<AuthorizeAnswer>;
  token(form: Record<string, unknown>, clientAddress: string): Promise<JsonAnswer>;
  revoke(form: Record<string, unknown>): Promise<JsonAnswer>;
}

export function createOAuthService(deps: OAuthServiceDeps): OAuthService {
  const { log, clock } = deps;
  const callbackUri = `${deps.serverUrl}/callback`;
  const forgeAuthorize = `${deps.forgeUrl.replace(/\/+$/, '')}/oauth/authorize`;
  const resourceIds = new Set([`${deps.serverUrl}/mcp`, deps.serverUrl, `${deps.serverUrl}/`]);
  const noStore = { 'cache-control': 'no-store', pragma: 'no-cache' };

  /** A redirect back to the client carrying an error (RFC 6749 §4.1.2.1) and `iss` (RFC 9207). */
  const clientError = (redirectUri: string, error: string, description: string, state: string | undefined): AuthorizeAnswer => ({
    kind: 'redirect',
    location: withQuery(redirectUri, { error, error_description: description, state, iss: deps.serverUrl }),
  });

  const errorPage = (title: string, message: string, status = 400, headers?: Record<string, string>): AuthorizeAnswer => ({
    kind: 'error_page',
    status,
    title,
    message,
    ...(headers ? { headers } : {}),
  });

  /** Which access token a refresh token was issued with (hashes only), so a refresh can drop the old one's cache. */
  const accessByRefresh = new LRUCache<string, string>({ max: 10_000, ttl: TOKEN_LINK_TTL_MS, ttlResolution: 0, perf: { now: () => clock.now() } });
  const linkTokens = (tokens: ForgeTokens): void => {
    if (tokens.refresh_token !== undefined) accessByRefresh.set(tokenCacheKey(tokens.refresh_token), tokenCacheKey(tokens.access_token));
  };
  /** Drops a token from the `/mcp` validation cache, and the access token a refresh token came with. */
  const forgetToken = (token: string): void => {
    deps.bearerCache.forget(token);
    const key = tokenCacheKey(token);
    const access = accessByRefresh.get(key);
    if (access !== undefined) {
      deps.bearerCache.forget({ key: access });
      accessByRefresh.delete(key);
    }
  };

  /**
   * Revokes at the forge, in the background, tokens no client will ever receive: a failed redemption burns the
   * proxy code, and the forge tokens behind it would otherwise stay valid for their 2 hours (and the refresh token
   * for longer).
   */
  const discardTokens = (tokens: ForgeTokens, reason: string): void => {
    log.info({ reason }, 'revoking forge tokens of a proxy code that will not be redeemed');
    void revokeForgeTokens(deps.forge, tokens, log);
  };

  /** The 429 page when a client address started too many sign-ins. */
  const tooManySignIns = (clientAddress: string, retryAfterSeconds: number): AuthorizeAnswer => {
    log.warn({ client_address: clientAddress }, 'sign-in refused: limit of sign-ins started per client address reached');
    return errorPage('Too many sign-ins', 'Too many sign-ins were started from your network. Wait a few minutes, then start the connection again from your application.', 429, {
      'retry-after': String(retryAfterSeconds),
    });
  };

  /** Sends the browser to the forge through our callback with a fresh proxy PKCE pair (spec flow step 3). */
  const startProxy = async (request: ConsentRequest, clientAddress: string): Promise<{ ok: true; location: string } | { ok: false; answer: AuthorizeAnswer }> => {
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
  };

  /** The client and redirect URI checks that decide whether redirecting is safe at all (RFC 6749 §4.1.2.1). */
  const checkClientAndRedirect = async (
    clientId: string | undefined,
    redirectUri: string | undefined,
    clientAddress: string,
  ): Promise<{ ok: true; client: RegisteredClient; redirectUri: string } | { ok: false; answer: AuthorizeAnswer }> => {
    const resolved = await deps.clients.resolve(clientId ?? '', clientAddress);
    if (!resolved.ok && resolved.retryAfterSeconds !== undefined) {
      return {
        ok: false,
        answer: errorPage('Too many requests', 'Too many new applications were looked up from your network. Wait a few minutes, then try again.', 429, {
          'retry-after': String(resolved.retryAfterSeconds),
        }),
      };
    }
    if (!resolved.ok) {
      log.warn({ reason: resolved.reason }, 'authorize refused: unknown client');
      return { ok: false, answer: errorPage('Unknown application', 'This sign-in link names an application this server does not know. Start the connection again from your application.') };
    }
    if (redirectUri === undefined) {
      log.warn({ client_id: resolved.client.clientId.slice(0, 80) }, 'authorize refused: redirect_uri missing');
      return { ok: false, answer: errorPage('Invalid sign-in request', 'The sign-in link has no callback address. Start the connection again from your application.') };
    }
    const registered = findRegisteredRedirectUri(redirectUri, resolved.client.redirectUris);
    if (registered === undefined) {
      log.warn({ refused_redirect_uri: redirectUri.slice(0, 300) }, 'authorize refused: redirect_uri is not registered for this client');
      return { ok: false, answer: errorPage('Invalid sign-in request', 'The callback address of this sign-in link is not registered for the application.') };
    }
    if (!isAllowedRedirectUri(deps.allowlist, redirectUri)) {
      // invalid_redirect_uri (spec "Errors"): the log lists the refused URL.
      log.warn({ refused_redirect_uri: redirectUri.slice(0, 300) }, 'invalid_redirect_uri: authorize refused a callback outside FORGE_OAUTH_ALLOWED_REDIRECT_URIS');
      return { ok: false, answer: errorPage('Callback not allowed', 'This server does not send sign-ins to the callback address of this application (invalid_redirect_uri).') };
    }
    return { ok: true, client: resolved.client, redirectUri };
  };

  return {
    async register(body, clientAddress) {
      const decision = deps.registerLimiter.hit(clientAddress);
      if (!decision.allowed) {
        log.warn({ client_address: clientAddress }, 'register refused: rate limit per client address reached');
        return oauthError(429, 'too_many_requests', 'Too many registrations from this address; try again later.', {
          'retry-after': String(decision.retryAfterSeconds),
          ...noStore,
        });
      }
      const parsed = registrationSchema.safeParse(body);
      if (!parsed.success) {
        const missingUris = body === null || typeof body !== 'object' || !('redirect_uris' in body);
        return oauthError(400, missingUris ? 'invalid_redirect_uri' : 'invalid_client_metadata', missingUris ? 'redirect_uris is required.' : 'The client metadata is not valid.', noStore);
      }
      const meta = parsed.data;
      // Stateless mode seals the registration into the client id, which travels in every /authorize URL: the
      // callbacks are bounded so the id stays well inside what browsers, proxies and our own unsealing accept.
      if (deps.clients.sealed && Buffer.byteLength(meta.redirect_uris.join(''), 'utf8') > MAX_SEALED_REDIRECT_URIS_BYTES) {
        log.warn({ redirect_uris: meta.redirect_uris.length }, 'register refused: redirect URIs too long for a sealed client id');
        return oauthError(400, 'invalid_client_metadata', `The redirect URIs may total at most ${MAX_SEALED_REDIRECT_URIS_BYTES} bytes.`, noStore);
      }
      for (const uri of meta.redirect_uris) {
        const safe = checkRedirectUri(uri, deps.allowlist.appSchemes);
        if (!safe.ok) {
          log.warn({ refused_redirect_uri: uri.slice(0, 300), reason: safe.reason }, 'invalid_redirect_uri: register refused an unsafe redirect URI');
          return oauthError(400, 'invalid_redirect_uri', 'A redirect URI is not acceptable.', noStore);
        }
        if (!isAllowedRedirectUri(deps.allowlist, uri)) {
          log.warn({ refused_redirect_uri: uri.slice(0, 300) }, 'invalid_redirect_uri: register refused a redirect URI outside FORGE_OAUTH_ALLOWED_REDIRECT_URIS');
          return oauthError(400, 'invalid_redirect_uri', 'A redirect URI is not allowed by this server.', noStore);
        }
      }
      const grants = meta.grant_types ?? ['authorization_code'];
      if (!grants.every((g) => g === 'authorization_code' || g === 'refresh_token')) {
        return oauthError(400, 'invalid_client_metadata', 'Only the authorization_code and refresh_token grants are supported.', noStore);
      }
      if (meta.response_types && !meta.response_types.every((r) => r === 'code')) {
        return oauthError(400, 'invalid_client_metadata', 'Only the code response type is supported.', noStore);
      }
      const clientName = meta.client_name?.trim() || undefined;
      const client = await deps.clients.register({ redirectUris: meta.redirect_uris, ...(clientName ? { clientName } : {}) });
      log.info({ redirect_uris: client.redirectUris, client_name: clientName }, 'client registered');
      return {
        kind: 'json',
        status: 201,
        headers: noStore,
        body: {
          client_id: client.clientId,
          client_id_issued_at: client.issuedAt,
          redirect_uris: client.redirectUris,
          ...(clientName ? { client_name: clientName } : {}),
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          // Public clients only: the forge application is public and PKCE replaces a secret (spec "Authentication" 4).
          token_endpoint_auth_method: 'none',
          scope: meta.scope ?? deps.scopes,
        },
      };
    },

    async authorize(query, consentCookie, clientAddress) {
      const checked = await checkClientAndRedirect(first(query.client_id), first(query.redirect_uri), clientAddress);
      if (!checked.ok) return checked.answer;
      const { client, redirectUri } = checked;
      const state = first(query.state);
      if (state !== undefined && state.length > MAX_STATE_LENGTH) return clientError(redirectUri, 'invalid_request', 'state is too long.', undefined);
      if (first(query.response_type) !== 'code') return clientError(redirectUri, 'unsupported_response_type', 'Only response_type=code is supported.', state);
      const challenge = first(query.code_challenge);
      const method = first(query.code_challenge_method);
      // PKCE with S256 is mandatory; "plain" (also the default when no method is named) is a downgrade.
      if (challenge === undefined) return clientError(redirectUri, 'invalid_request', 'code_challenge is required (PKCE).', state);
      if (method !== 'S256') {
        log.warn({ method: method ?? '(none)' }, 'authorize refused: PKCE method other than S256');
        return clientError(redirectUri, 'invalid_request', 'code_challenge_method must be S256.', state);
      }
      if (!S256_CHALLENGE.test(challenge)) return clientError(redirectUri, 'invalid_request', 'code_challenge is malformed.', state);
      const resource = first(query.resource);
      if (resource !== undefined && !resourceIds.has(resource)) return clientError(redirectUri, 'invalid_target', 'Unknown resource.', state);
      const requested = first(query.scope)?.split(/\s+/).filter(Boolean) ?? [];
      if (!requested.every((s) => FORGE_SCOPES.has(s))) return clientError(redirectUri, 'invalid_scope', 'A requested scope is not known.', state);
      const scope = requested.length > 0 ? requested.join(' ') : deps.scopes;

      if (deps.mode === 'passthrough') {
        // Spec "Endpoints" GET /authorize, passthrough: the real application id with the client's own parameters.
        return {
          kind: 'redirect',
          location: withQuery(forgeAuthorize, {
            client_id: deps.appId,
            redirect_uri: redirectUri,
            response_type: 'code',
            scope,
            state,
            code_challenge: challenge,
            code_challenge_method: 'S256',
          }),
        };
      }
      const request: ConsentRequest = {
        cid: client.clientId,
        ru: redirectUri,
        cc: challenge,
        sc: scope,
        ...(state !== undefined ? { st: state } : {}),
        jti: randomBytes(16).toString('base64url'),
      };
      if (hasApproval(readApprovals(deps.sealer, consentCookie, clock.now()), client.clientId, redirectUri)) {
        const started = await startProxy(request, clientAddress);
        return started.ok ? { kind: 'redirect', location: started.location } : started.answer;
      }
      return { kind: 'consent', client, redirectUri, scope, sealedRequest: deps.sealer.seal('authreq', request, PENDING_TTL_MS) };
    },

    async decideConsent({ sealedRequest, decision, consentCookie, clientAddress }) {
      const opened = deps.sealer.unseal<ConsentRequest & { exp?: unknown }>('authreq', sealedRequest);
      if (!opened.ok) {
        log.warn({ reason: opened.reason }, 'consent refused: the sealed request did not open');
        return errorPage('Sign-in expired', 'This sign-in page has expired. Start the connection again from your application.');
      }
      const request = opened.value;
      if (typeof request.jti !== 'string') return errorPage('Sign-in expired', 'This sign-in page has expired. Start the connection again from your application.');
      // A consent form works once: replaying one form must not create a pending transaction per post.
      const expiresAt = typeof request.exp === 'number' ? request.exp : clock.now() + PENDING_TTL_MS;
      let firstUse: boolean;
      try {
        firstUse = await deps.consentReplay.consume(`authreq:${request.jti}`, expiresAt);
      } catch (error) {
        log.error({ cause: (error as Error).message }, 'consent refused: the replay cache is unreachable');
        return errorPage('Temporarily unavailable', 'The sign-in cannot continue right now. Try again in a few minutes.', 503);
      }
      if (!firstUse) {
        log.warn('consent refused: the consent form was already used');
        return errorPage('Sign-in already used', 'This sign-in page was already used. Start the connection again from your application.');
      }
      // The client and callback are checked again: a metadata document may have changed, a registration expired.
      const checked = await checkClientAndRedirect(request.cid, request.ru, clientAddress);
      if (!checked.ok) return checked.answer;
      if (decision !== 'approve') {
        log.info('consent denied by the user');
        return clientError(request.ru, 'access_denied', 'The user denied the request.', request.st);
      }
      const started = await startProxy(request, clientAddress);
      if (!started.ok) return started.answer;
      const cookie = withApproval(deps.sealer, readApprovals(deps.sealer, consentCookie, clock.now()), request.cid, request.ru, clock.now());
      return { kind: 'redirect', location: started.location, setConsentCookie: cookie };
    },

    async callback(query) {
      const proxyState = first(query.state);
      if (deps.mode !== 'callback_proxy') return errorPage('Not found', 'This server does not receive forge callbacks.', 404);
      if (proxyState === undefined) return errorPage('Invalid sign-in response', 'The forge response has no state. Start the connection again from your application.');
      let taken: Awaited<ReturnType<FlowStore['takePending']>>;
      try {
        taken = await deps.flows.takePending(proxyState);
      } catch (error) {
        log.error({ cause: (error as Error).message }, 'callback failed: the pending transaction could not be taken');
        return errorPage('Temporarily unavailable', 'The sign-in cannot be completed right now. Start the connection again from your application in a few minutes.', 503);
      }
      if (!taken.ok && taken.reason === 'unavailable' && taken.known !== undefined) {
        // Sealed and intact, but its one-time use cannot be recorded (replay cache down): the client is known, so
        // it hears about the failure instead of the user facing a dead end.
        log.error('callback failed: the replay cache is unreachable; the client gets server_error');
        return clientError(taken.known.redirectUri, 'server_error', 'The sign-in could not be completed; try again.', taken.known.state);
      }
      if (!taken.ok) {
        log.warn({ reason: taken.reason }, 'callback refused: pending transaction not found (replayed, expired, tampered or from another replica)');
        return taken.reason === 'unavailable'
          ? errorPage('Temporarily unavailable', 'The sign-in cannot be completed right now. Start the connection again from your application in a few minutes.', 503)
          : errorPage('Sign-in expired', 'This sign-in was already completed or has expired. Start the connection again from your application.');
      }
      const tx = taken.value;
      try {
        return await finishCallback(tx, query);
      } catch (error) {
        log.error({ cause: (error as Error).message }, 'callback failed after the pending transaction was taken; the client gets server_error');
        return clientError(tx.redirectUri, 'server_error', 'The sign-in could not be completed; try again.', tx.state);
      }
    },

    async token(form, clientAddress) {
      const grantType = first(form.grant_type);
      if (grantType === 'refresh_token') {
        const refreshToken = first(form.refresh_token);
        if (!refreshToken) return oauthError(400, 'invalid_request', 'refresh_token is required.', noStore);
        const scope = first(form.scope);
        const result = await deps.forge.refresh({ refreshToken, ...(scope ? { scope } : {}) });
        // The forge invalidated the old pair (forge-facts.md "Refresh"): the old access token, when known, leaves
        // the validation cache at once instead of passing /mcp for up to a minute.
        if (result.ok) forgetToken(refreshToken);
        return tokenAnswer(result, 0);
      }
      if (grantType !== 'authorization_code') return oauthError(400, 'unsupported_grant_type', 'Only authorization_code and refresh_token are supported.', noStore);
      const code = first(form.code);
      const clientId = first(form.client_id);
      const redirectUri = first(form.redirect_uri);
      const verifier = first(form.code_verifier);
      if (!code) return oauthError(400, 'invalid_request', 'code is required.', noStore);

      if (deps.mode === 'passthrough') {
        const resolved = await deps.clients.resolve(clientId ?? '', clientAddress);
        if (!resolved.ok && resolved.retryAfterSeconds !== undefined) {
          return oauthError(429, 'too_many_requests', 'Too many requests from this address; try again later.', { 'retry-after': String(resolved.retryAfterSeconds), ...noStore });
        }
        if (!resolved.ok) {
          log.warn({ reason: resolved.reason }, 'token refused: unknown client');
          return oauthError(401, 'invalid_client', 'Unknown client.', noStore);
        }
        if (!redirectUri || !findRegisteredRedirectUri(redirectUri, resolved.client.redirectUris)) {
          return oauthError(400, 'invalid_grant', 'The redirect URI does not match the authorization request.', noStore);
        }
        // PKCE was required at /authorize, so a verifier is always due (spec "Authentication" 3).
        if (!verifier) return oauthError(400, 'invalid_request', 'code_verifier is required.', noStore);
        return tokenAnswer(await deps.forge.exchangeCode({ code, codeVerifier: verifier, redirectUri }), 0);
      }

      // Callback proxy, spec flow step 7. The code is taken first: it works once, even when this attempt fails —
      // and then the forge tokens behind it are revoked, since no client will ever receive them.
      const taken = await deps.flows.takeCode(code);
      if (!taken.ok) {
        log.warn({ reason: taken.reason }, 'token refused: proxy code not redeemable');
        return oauthError(400, 'invalid_grant', 'The authorization code is invalid, expired or already used.', noStore);
      }
      const record = taken.value;
      const now = clock.now();
      const refuse = (reason: string, answer: JsonAnswer): JsonAnswer => {
        log.warn(`token refused: ${reason}`);
        discardTokens(record.tokens, reason);
        return answer;
      };
      if (record.expiresAt <= now) {
        return refuse('proxy code expired', oauthError(400, 'invalid_grant', 'The authorization code is invalid, expired or already used.', noStore));
      }
      if (clientId !== record.clientId) {
        return refuse('proxy code issued to another client', oauthError(400, 'invalid_grant', 'The authorization code is invalid, expired or already used.', noStore));
      }
      if (redirectUri !== record.redirectUri) {
        return refuse('redirect_uri differs from the authorization request', oauthError(400, 'invalid_grant', 'The redirect URI does not match the authorization request.', noStore));
      }
      if (!verifier) return refuse('code_verifier missing', oauthError(400, 'invalid_request', 'code_verifier is required.', noStore));
      const expected = Buffer.from(record.codeChallenge);
      const actual = Buffer.from(VERIFIER.test(verifier) ? s256(verifier) : '');
      if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
        return refuse('PKCE verification failed', oauthError(400, 'invalid_grant', 'PKCE verification failed.', noStore));
      }
      const elapsedSeconds = Math.max(0, Math.floor((now - (record.expiresAt - PROXY_CODE_TTL_MS)) / 1000));
      return tokenAnswer({ ok: true, tokens: record.tokens }, elapsedSeconds);
    },

    async revoke(form) {
      const token = first(form.token);
      if (!token) return oauthError(400, 'invalid_request', 'token is required.', noStore);
      const hint = first(form.token_type_hint);
      const result = await deps.forge.revoke({ token, ...(hint ? { tokenTypeHint: hint } : {}) });
      // RFC 7009 §2.2: 200 also for unknown tokens; 503 when the forge cannot be asked.
      if (result.ok || (result.status >= 400 && result.status < 500)) {
        // The token stops passing /mcp at once, not when its validation cache entry lapses.
        forgetToken(token);
        return { kind: 'json', status: 200, body: {}, headers: noStore };
      }
      return oauthError(503, 'temporarily_unavailable', 'Revocation is unavailable; try again later.', noStore);
    },
  };

  /** Steps 4 to 6 of the callback-proxy flow, once the pending transaction is taken. */
  async function finishCallback(tx: PendingTransaction, query: Record<string, unknown>): Promise<AuthorizeAnswer> {
    if (tx.expiresAt <= clock.now()) {
      log.warn('callback refused: pending transaction expired');
      return clientError(tx.redirectUri, 'access_denied', 'The sign-in took too long.', tx.state);
    }
    const forgeError = first(query.error);
    if (forgeError !== undefined) {
      // Never a dead end: the forge's answer goes back to the client (issue 3 item 7).
      log.warn({ forge_error: forgeError.slice(0, 64) }, 'forge returned an error to the callback');
      return forgeError === 'access_denied'
        ? clientError(tx.redirectUri, 'access_denied', 'The user denied the request at the forge.', tx.state)
        : clientError(tx.redirectUri, 'server_error', 'The forge could not complete the sign-in.', tx.state);
    }
    const code = first(query.code);
    if (code === undefined) return clientError(tx.redirectUri, 'server_error', 'The forge could not complete the sign-in.', tx.state);
    const exchanged = await deps.forge.exchangeCode({ code, codeVerifier: tx.proxyVerifier, redirectUri: callbackUri });
    if (!exchanged.ok) return clientError(tx.redirectUri, 'server_error', 'The forge could not complete the sign-in.', tx.state);
    const proxyCode = await deps.flows.saveCode({
      clientId: tx.clientId,
      redirectUri: tx.redirectUri,
      codeChallenge: tx.codeChallenge,
      tokens: exchanged.tokens,
      expiresAt: clock.now() + PROXY_CODE_TTL_MS,
    });
    return { kind: 'redirect', location: withQuery(tx.redirectUri, { code: proxyCode, state: tx.state, iss: deps.serverUrl }) };
  }


  /** The client's token response (forge fields passed through), or the forge's error in generic words. */
  function tokenAnswer(result: ForgeTokenResult, elapsedSeconds: number): JsonAnswer {
    if (result.ok) linkTokens(result.tokens);
    if (!result.ok) {
      if (result.status >= 400 && result.status < 500 && ['invalid_grant', 'invalid_request', 'invalid_scope', 'unauthorized_client'].includes(result.error)) {
        return oauthError(400, result.error, 'The forge refused the grant.', noStore);
      }
      if (result.status >= 400 && result.status < 500) return oauthError(400, 'invalid_grant', 'The forge refused the grant.', noStore);
      return oauthError(502, 'server_error', 'The forge could not be reached; try again later.', noStore);
    }
    const t: ForgeTokens = result.tokens;
    return {
      kind: 'json',
      status: 200,
      headers: noStore,
      body: {
        access_token: t.access_token,
        token_type: 'Bearer',
        ...(t.expires_in !== undefined ? { expires_in: Math.max(0, t.expires_in - elapsedSeconds) } : {}),
        ...(t.refresh_token !== undefined ? { refresh_token: t.refresh_token } : {}),
        ...(t.scope !== undefined ? { scope: t.scope } : {}),
      },
    };
  }
}
