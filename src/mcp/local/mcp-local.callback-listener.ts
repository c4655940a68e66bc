/**
 * The loopback HTTP listener that receives the forge's redirect in the local OAuth flow (spec mcp-oauth.md point 4;
 * RFC 8252 §7.3). It answers only its callback path, accepts only a `state` equal to the one of this sign-in, and
 * stops after one accepted callback or when the time is up.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { stateMatches } from './mcp-local.pkce.ts';
import { redirectUriForPort, type LoopbackRedirect } from './mcp-local.redirect-uri.ts';

/** How long a sign-in may take by default. */
export const DEFAULT_CALLBACK_TIMEOUT_MS = 5 * 60_000;

/** A running callback listener. */
export interface CallbackListener {
  /** The redirect URI to send to the forge (the configured one, with the real port when it was 0). */
  readonly redirectUri: string;
  /** The authorization code of the first callback carrying the right state; rejects on a forge error or timeout. */
  readonly code: Promise<string>;
  /** Stops listening (idempotent); a pending `code` rejects. */
  close(): Promise<void>;
}

const PAGE_STYLE = 'body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5}';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(res: ServerResponse, status: number, title: string, text: string): void {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${PAGE_STYLE}</style></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    // The page is static text: nothing may load, nothing may frame it, and the code in the URL is not sent onwards.
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    'referrer-policy': 'no-referrer',
    connection: 'close',
  });
  res.end(body);
}

/**
 * Starts listening at `redirect` for the callback of the sign-in identified by `state`.
 * Throws AppError `conflict` when the address is in use (another sign-in running, or another program on the port).
 */
export async function startCallbackListener(deps: {
  redirect: LoopbackRedirect;
  state: string;
  log: Logger;
  timeoutMs?: number | undefined;
}): Promise<CallbackListener> {
  const { redirect, state, log } = deps;
  let settle: { resolve: (code: string) => void; reject: (error: Error) => void } | undefined;
  const code = new Promise<string>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // A caller that only awaits close() must not see an unhandled rejection.
  code.catch(() => undefined);
  let done = false;

  const finish = (outcome: { code: string } | { error: Error }): void => {
    if (done) return;
    done = true;
    if ('code' in outcome) settle?.resolve(outcome.code);
    else settle?.reject(outcome.error);
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://loopback.invalid');
    if (req.method !== 'GET' || url.pathname !== redirect.path) {
      page(res, 404, 'Not found', 'This address only receives the forge sign-in callback.');
      return;
    }
    if (done) {
      page(res, 410, 'Sign-in already finished', 'This sign-in is over. You can close this tab.');
      return;
    }
    // RFC 6749 §10.12: a callback without our state is someone else's (or a forged) response; ignore it and keep waiting.
    if (!stateMatches(state, url.searchParams.get('state'))) {
      log.warn('ignored a forge callback whose state does not match the sign-in in progress');
      page(
        res,
        400,
        'Sign-in not recognized',
        'This callback does not belong to the sign-in in progress. Start the sign-in again from the terminal.',
      );
      return;
    }
    const error = url.searchParams.get('error');
    if (error !== null) {
      page(res, 200, 'Sign-in not completed', 'The forge did not grant access. You can close this tab and return to the terminal.');
      const reason = /^[a-z_]{1,64}$/.test(error) ? error : 'unknown error';
      finish({
        error: new AppError(
          'unauthorized',
          error === 'access_denied' ? 'the sign-in was refused at the forge (access_denied)' : `the forge did not grant access (${reason})`,
        ),
      });
      return;
    }
    const received = url.searchParams.get('code');
    if (received === null || received === '') {
      page(res, 400, 'Sign-in not completed', 'The callback carries no authorization code. Start the sign-in again from the terminal.');
      return;
    }
    page(res, 200, 'Signed in', 'You are signed in to the forge. You can close this tab and return to the terminal.');
    finish({ code: received });
  };

  const server = createServer((req, res) => {
    try {
      handle(req, res);
    } catch (error) {
      log.error({ err: error }, 'callback listener failed');
      if (!res.headersSent) page(res, 500, 'Error', 'The sign-in callback could not be processed.');
    }
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new AppError(
              'conflict',
              `cannot listen on ${redirect.url.host} for FORGE_OAUTH_REDIRECT_URI: the port is in use (is another sign-in running?)`,
            )
          : new AppError(
              'unavailable',
              `cannot listen on ${redirect.url.host} for FORGE_OAUTH_REDIRECT_URI (${error.code ?? error.message})`,
            ),
      );
    };
    server.once('error', onError);
    server.listen(redirect.port, redirect.bindHost, () => {
      server.off('error', onError);
      resolve();
    });
  });

  const port = (server.address() as AddressInfo).port;
  const timer = setTimeout(() => {
    finish({
      error: new AppError(
        'deadline_exceeded',
        `no sign-in arrived within ${Math.round((deps.timeoutMs ?? DEFAULT_CALLBACK_TIMEOUT_MS) / 1000)} s`,
      ),
    });
  }, deps.timeoutMs ?? DEFAULT_CALLBACK_TIMEOUT_MS);
  timer.unref();

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      clearTimeout(timer);
      finish({ error: new AppError('unavailable', 'the sign-in was cancelled') });
      server.close(() => resolve());
      // The answer page is flushed on its `connection: close` socket; idle sockets (browser preconnects) go now,
      // anything still open after a moment is cut so the process can exit.
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 1000).unref();
    });
    return closing;
  };
  // Stop listening as soon as the outcome is known; the answer page has already been written.
  code.then(
    () => void close(),
    () => void close(),
  );

  return { redirectUri: redirectUriForPort(redirect, port), code, close };
}
