/**
 * The authorization server in front of the forge (spec "Endpoints", "Callback proxy flow", "Passthrough flow"),
 * assembled from one module per endpoint. HTTP-free: each operation takes the request's parsed parameters and
 * returns what to answer (a redirect, a page, or an RFC 6749 JSON body); oauth.routes.ts writes it. Clients get
 * generic messages; the reason goes to the log (issue 3 item 10), never with a token, code, verifier or secret.
 */
import { createAuthorizeEndpoint } from './oauth.authorize.ts';
import { createCallbackEndpoint } from './oauth.callback.ts';
import { createConsentDecisionEndpoint, type ConsentDecision } from './oauth.consent-decision.ts';
import type { JsonAnswer } from './oauth.errors.ts';
import { createRegisterEndpoint } from './oauth.register.ts';
import { createRevokeEndpoint } from './oauth.revoke.ts';
import type { AuthorizeQuery, CallbackQuery, RevokeForm, TokenForm } from './oauth.schemas.ts';
import { createSignInSteps } from './oauth.sign-in.ts';
import { createTokenLinks } from './oauth.token-links.ts';
import { createTokenEndpoint } from './oauth.token.ts';
import type { AuthorizeAnswer, OAuthServiceDeps } from './oauth.types.ts';

export type { AuthorizeAnswer, OAuthMode, OAuthServiceDeps } from './oauth.types.ts';

/** The OAuth endpoints; `clientAddress` is the limit key of the requesting client (oauth.rate-limit.ts). */
export interface OAuthService {
  register(body: unknown, clientAddress: string): Promise<JsonAnswer>;
  authorize(query: AuthorizeQuery, consentCookie: string | undefined, clientAddress: string): Promise<AuthorizeAnswer>;
  decideConsent(input: ConsentDecision): Promise<AuthorizeAnswer>;
  callback(query: CallbackQuery): Promise<AuthorizeAnswer>;
  token(form: TokenForm, clientAddress: string): Promise<JsonAnswer>;
  revoke(form: RevokeForm): Promise<JsonAnswer>;
}

export function createOAuthService(deps: OAuthServiceDeps): OAuthService {
  const steps = createSignInSteps(deps);
  const links = createTokenLinks(deps);
  return {
    register: createRegisterEndpoint(deps),
    authorize: createAuthorizeEndpoint(deps, steps),
    decideConsent: createConsentDecisionEndpoint(deps, steps),
    callback: createCallbackEndpoint(deps, steps),
    token: createTokenEndpoint(deps, links),
    revoke: createRevokeEndpoint(deps, links),
  };
}
