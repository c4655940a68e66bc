/** `POST /register`: dynamic client registration (RFC 7591; spec "Endpoints"), public clients only. */
import { isAllowedRedirectUri } from './oauth.allowlist.ts';
import { MAX_SEALED_REDIRECT_URIS_BYTES } from './oauth.clients.ts';
import { oauthError, oauthJson, type JsonAnswer } from './oauth.errors.ts';
import { checkRedirectUri } from './oauth.redirect-uri.ts';
import { checkInput } from '../../core/validation.ts';
import { registrationSchema } from './oauth.schemas.ts';
import type { OAuthServiceDeps } from './oauth.types.ts';

export type RegisterDeps = Pick<OAuthServiceDeps, 'scopes' | 'allowlist' | 'clients' | 'registerLimiter' | 'log'>;

export function createRegisterEndpoint(deps: RegisterDeps): (body: unknown, clientAddress: string) => Promise<JsonAnswer> {
  const { log } = deps;
  return async (body, clientAddress) => {
    const decision = deps.registerLimiter.hit(clientAddress);
    if (!decision.allowed) {
      log.warn({ client_address: clientAddress }, 'register refused: rate limit per client address reached');
      return oauthError(429, 'too_many_requests', 'Too many registrations from this address; try again later.', {
        'retry-after': String(decision.retryAfterSeconds),
      });
    }
    const parsed = checkInput(registrationSchema, body, 'body');
    if (!parsed.ok) {
      const missingUris = body === null || typeof body !== 'object' || !('redirect_uris' in body);
      return oauthError(
        400,
        missingUris ? 'invalid_redirect_uri' : 'invalid_client_metadata',
        missingUris ? 'redirect_uris is required.' : 'The client metadata is not valid.',
      );
    }
    const meta = parsed.value;
    // Stateless mode seals the registration into the client id, which travels in every /authorize URL: the
    // callbacks are bounded so the id stays well inside what browsers, proxies and our own unsealing accept.
    if (deps.clients.sealed && Buffer.byteLength(meta.redirect_uris.join(''), 'utf8') > MAX_SEALED_REDIRECT_URIS_BYTES) {
      log.warn({ redirect_uris: meta.redirect_uris.length }, 'register refused: redirect URIs too long for a sealed client id');
      return oauthError(400, 'invalid_client_metadata', `The redirect URIs may total at most ${MAX_SEALED_REDIRECT_URIS_BYTES} bytes.`);
    }
    for (const uri of meta.redirect_uris) {
      const safe = checkRedirectUri(uri, deps.allowlist.appSchemes);
      if (!safe.ok) {
        log.warn(
          { refused_redirect_uri: uri.slice(0, 300), reason: safe.reason },
          'invalid_redirect_uri: register refused an unsafe redirect URI',
        );
        return oauthError(400, 'invalid_redirect_uri', 'A redirect URI is not acceptable.');
      }
      if (!isAllowedRedirectUri(deps.allowlist, uri)) {
        log.warn(
          { refused_redirect_uri: uri.slice(0, 300) },
          'invalid_redirect_uri: register refused a redirect URI outside FORGE_OAUTH_ALLOWED_REDIRECT_URIS',
        );
        return oauthError(400, 'invalid_redirect_uri', 'A redirect URI is not allowed by this server.');
      }
    }
    const grants = meta.grant_types ?? ['authorization_code'];
    if (!grants.every((g) => g === 'authorization_code' || g === 'refresh_token')) {
      return oauthError(400, 'invalid_client_metadata', 'Only the authorization_code and refresh_token grants are supported.');
    }
    if (meta.response_types && !meta.response_types.every((r) => r === 'code')) {
      return oauthError(400, 'invalid_client_metadata', 'Only the code response type is supported.');
    }
    const clientName = meta.client_name?.trim() || undefined;
    const client = await deps.clients.register({ redirectUris: meta.redirect_uris, ...(clientName ? { clientName } : {}) });
    log.info({ redirect_uris: client.redirectUris, client_name: clientName }, 'client registered');
    return oauthJson(201, {
      client_id: client.clientId,
      client_id_issued_at: client.issuedAt,
      redirect_uris: client.redirectUris,
      ...(clientName ? { client_name: clientName } : {}),
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      // Public clients only: the forge application is public and PKCE replaces a secret (spec "Authentication" 4).
      token_endpoint_auth_method: 'none',
      scope: meta.scope ?? deps.scopes,
    });
  };
}
