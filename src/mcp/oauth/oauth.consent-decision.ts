/**
 * `POST /authorize`: the user's decision on the consent page (callback-proxy mode). The page itself, its cookies
 * and CSRF token are in oauth.consent.ts; the route checks the CSRF token before this runs.
 */
import { readApprovals, withApproval } from './oauth.consent.ts';
import { errorPage, type SignInSteps } from './oauth.sign-in.ts';
import { PENDING_TTL_MS } from './oauth.stores.ts';
import type { AuthorizeAnswer, ConsentRequest, OAuthServiceDeps } from './oauth.types.ts';

export interface ConsentDecision {
  sealedRequest: string;
  decision: string;
  consentCookie: string | undefined;
  clientAddress: string;
}

export type ConsentDecisionDeps = Pick<OAuthServiceDeps, 'sealer' | 'consentReplay' | 'clock' | 'log'>;

const EXPIRED = 'This sign-in page has expired. Start the connection again from your application.';

export function createConsentDecisionEndpoint(
  deps: ConsentDecisionDeps,
  steps: SignInSteps,
): (input: ConsentDecision) => Promise<AuthorizeAnswer> {
  const { log, clock } = deps;
  return async ({ sealedRequest, decision, consentCookie, clientAddress }) => {
    const opened = deps.sealer.unseal<ConsentRequest & { exp?: unknown }>('authreq', sealedRequest);
    if (!opened.ok) {
      log.warn({ reason: opened.reason }, 'consent refused: the sealed request did not open');
      return errorPage('Sign-in expired', EXPIRED);
    }
    const request = opened.value;
    if (typeof request.jti !== 'string') return errorPage('Sign-in expired', EXPIRED);
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
    const checked = await steps.checkClientAndRedirect(request.cid, request.ru, clientAddress);
    if (!checked.ok) return checked.answer;
    if (decision !== 'approve') {
      log.info('consent denied by the user');
      return steps.clientError(request.ru, 'access_denied', 'The user denied the request.', request.st);
    }
    const started = await steps.startProxy(request, clientAddress);
    if (!started.ok) return started.answer;
    const cookie = withApproval(deps.sealer, readApprovals(deps.sealer, consentCookie, clock.now()), request.cid, request.ru, clock.now());
    return { kind: 'redirect', location: started.location, setConsentCookie: cookie };
  };
}
