/** `GET /callback`: the forge's answer in callback-proxy mode (spec "Callback proxy flow", steps 4 to 6). */
import type { CallbackQuery } from './oauth.schemas.ts';
import { errorPage, type SignInSteps } from './oauth.sign-in.ts';
import { withQuery } from './oauth.redirect-uri.ts';
import { PROXY_CODE_TTL_MS, type FlowStore, type PendingTransaction } from './oauth.stores.ts';
import type { AuthorizeAnswer, OAuthServiceDeps } from './oauth.types.ts';

export type CallbackDeps = Pick<OAuthServiceDeps, 'mode' | 'serverUrl' | 'flows' | 'forge' | 'clock' | 'log'>;

const UNAVAILABLE = 'The sign-in cannot be completed right now. Start the connection again from your application in a few minutes.';

export function createCallbackEndpoint(deps: CallbackDeps, steps: SignInSteps): (query: CallbackQuery) => Promise<AuthorizeAnswer> {
  const { log, clock } = deps;
  const { clientError } = steps;

  /** Steps 4 to 6 of the callback-proxy flow, once the pending transaction is taken. */
  async function finishCallback(tx: PendingTransaction, query: CallbackQuery): Promise<AuthorizeAnswer> {
    if (tx.expiresAt <= clock.now()) {
      log.warn('callback refused: pending transaction expired');
      return clientError(tx.redirectUri, 'access_denied', 'The sign-in took too long.', tx.state);
    }
    const forgeError = query.error;
    if (forgeError !== undefined) {
      // Never a dead end: the forge's answer goes back to the client (issue 3 item 7).
      log.warn({ forge_error: forgeError.slice(0, 64) }, 'forge returned an error to the callback');
      return forgeError === 'access_denied'
        ? clientError(tx.redirectUri, 'access_denied', 'The user denied the request at the forge.', tx.state)
        : clientError(tx.redirectUri, 'server_error', 'The forge could not complete the sign-in.', tx.state);
    }
    const code = query.code;
    if (code === undefined) return clientError(tx.redirectUri, 'server_error', 'The forge could not complete the sign-in.', tx.state);
    const exchanged = await deps.forge.exchangeCode({ code, codeVerifier: tx.proxyVerifier, redirectUri: steps.callbackUri });
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

  return async (query) => {
    const proxyState = query.state;
    if (deps.mode !== 'callback_proxy') return errorPage('Not found', 'This server does not receive forge callbacks.', 404);
    if (proxyState === undefined)
      return errorPage('Invalid sign-in response', 'The forge response has no state. Start the connection again from your application.');
    let taken: Awaited<ReturnType<FlowStore['takePending']>>;
    try {
      taken = await deps.flows.takePending(proxyState);
    } catch (error) {
      log.error({ cause: (error as Error).message }, 'callback failed: the pending transaction could not be taken');
      return errorPage('Temporarily unavailable', UNAVAILABLE, 503);
    }
    if (!taken.ok && taken.reason === 'unavailable' && taken.known !== undefined) {
      // Sealed and intact, but its one-time use cannot be recorded (replay cache down): the client is known, so
      // it hears about the failure instead of the user facing a dead end.
      log.error('callback failed: the replay cache is unreachable; the client gets server_error');
      return clientError(taken.known.redirectUri, 'server_error', 'The sign-in could not be completed; try again.', taken.known.state);
    }
    if (!taken.ok) {
      log.warn(
        { reason: taken.reason },
        'callback refused: pending transaction not found (replayed, expired, tampered or from another replica)',
      );
      return taken.reason === 'unavailable'
        ? errorPage('Temporarily unavailable', UNAVAILABLE, 503)
        : errorPage(
            'Sign-in expired',
            'This sign-in was already completed or has expired. Start the connection again from your application.',
          );
    }
    const tx = taken.value;
    try {
      return await finishCallback(tx, query);
    } catch (error) {
      log.error(
        { cause: (error as Error).message },
        'callback failed after the pending transaction was taken; the client gets server_error',
      );
      return clientError(tx.redirectUri, 'server_error', 'The sign-in could not be completed; try again.', tx.state);
    }
  };
}
