/** `GET /authorize` (spec "Endpoints"): checks the request, then the forge (passthrough) or the consent page. */
import { randomBytes } from 'node:crypto';
import { hasApproval, readApprovals } from './oauth.consent.ts';
import { isNarrowedMcpPath } from './oauth.metadata.ts';
import { withQuery } from './oauth.redirect-uri.ts';
import type { AuthorizeQuery } from './oauth.schemas.ts';
import type { SignInSteps } from './oauth.sign-in.ts';
import { PENDING_TTL_MS } from './oauth.stores.ts';
import type { AuthorizeAnswer, ConsentRequest, OAuthServiceDeps } from './oauth.types.ts';

/** Scopes the forge knows (forge-facts.md "Scopes"); a client may ask for any of them. */
export const FORGE_SCOPES = new Set(['api', 'read_api', 'read_user', 'read_repository', 'write_repository', 'openid', 'profile', 'email']);

/** Longest client `state` carried through (it travels inside the forge's URL, sealed in stateless mode). */
const MAX_STATE_LENGTH = 1024;

/** An S256 challenge is the base64url of 32 bytes: exactly 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export type AuthorizeDeps = Pick<OAuthServiceDeps, 'mode' | 'serverUrl' | 'appId' | 'scopes' | 'sealer' | 'clock' | 'log'>;

export function createAuthorizeEndpoint(
  deps: AuthorizeDeps,
  steps: SignInSteps,
): (query: AuthorizeQuery, consentCookie: string | undefined, clientAddress: string) => Promise<AuthorizeAnswer> {
  const { log, clock } = deps;
  const { clientError } = steps;
  const resourceIds = new Set([`${deps.serverUrl}/mcp`, deps.serverUrl, `${deps.serverUrl}/`]);

  return async (query, consentCookie, clientAddress) => {
    const checked = await steps.checkClientAndRedirect(query.client_id, query.redirect_uri, clientAddress);
    if (!checked.ok) return checked.answer;
    const { client, redirectUri } = checked;
    const state = query.state;
    if (state !== undefined && state.length > MAX_STATE_LENGTH)
      return clientError(redirectUri, 'invalid_request', 'state is too long.', undefined);
    if (query.response_type !== 'code')
      return clientError(redirectUri, 'unsupported_response_type', 'Only response_type=code is supported.', state);
    const challenge = query.code_challenge;
    const method = query.code_challenge_method;
    // PKCE with S256 is mandatory; "plain" (also the default when no method is named) is a downgrade.
    if (challenge === undefined) return clientError(redirectUri, 'invalid_request', 'code_challenge is required (PKCE).', state);
    if (method !== 'S256') {
      log.warn({ method: method ?? '(none)' }, 'authorize refused: PKCE method other than S256');
      return clientError(redirectUri, 'invalid_request', 'code_challenge_method must be S256.', state);
    }
    if (!S256_CHALLENGE.test(challenge)) return clientError(redirectUri, 'invalid_request', 'code_challenge is malformed.', state);
    const resource = query.resource;
    // `/mcp`, the server itself, or a narrowed `/mcp/x/…` URL (its own resource; the token works on every URL).
    const known =
      resource === undefined ||
      resourceIds.has(resource) ||
      (resource.startsWith(`${deps.serverUrl}/mcp/x/`) && isNarrowedMcpPath(resource.slice(deps.serverUrl.length)));
    if (!known) return clientError(redirectUri, 'invalid_target', 'Unknown resource.', state);
    const requested = query.scope?.split(/\s+/).filter(Boolean) ?? [];
    if (!requested.every((s) => FORGE_SCOPES.has(s)))
      return clientError(redirectUri, 'invalid_scope', 'A requested scope is not known.', state);
    const scope = requested.length > 0 ? requested.join(' ') : deps.scopes;

    if (deps.mode === 'passthrough') {
      // Spec "Endpoints" GET /authorize, passthrough: the real application id with the client's own parameters.
      return {
        kind: 'redirect',
        location: withQuery(steps.forgeAuthorize, {
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
      const started = await steps.startProxy(request, clientAddress);
      return started.ok ? { kind: 'redirect', location: started.location } : started.answer;
    }
    return { kind: 'consent', client, redirectUri, scope, sealedRequest: deps.sealer.seal('authreq', request, PENDING_TTL_MS) };
  };
}
