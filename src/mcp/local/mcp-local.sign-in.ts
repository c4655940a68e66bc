/**
 * The browser sign-in of the local OAuth flow (spec mcp-oauth.md point 4, issue 3 item 11): listen on the
 * loopback redirect URI, send the user's browser to the forge's authorize page with PKCE S256 and a fresh state,
 * receive the code, redeem it with the verifier.
 */
import type { Logger } from '../../core/logger.ts';
import type { BrowserOpener } from './mcp-local.browser.ts';
import { startCallbackListener } from './mcp-local.callback-listener.ts';
import type { ForgeOAuthClient } from './mcp-local.forge-client.ts';
import { createPkcePair, createState } from './mcp-local.pkce.ts';
import type { LoopbackRedirect } from './mcp-local.redirect-uri.ts';
import type { StoredTokenSet } from './mcp-local.token-file.ts';

/** What a browser sign-in needs. */
export interface BrowserSignInDeps {
  forgeUrl: string;
  clientId: string;
  scopes: readonly string[];
  redirect: LoopbackRedirect;
  forge: ForgeOAuthClient;
  openBrowser: BrowserOpener;
  /** Tells the user what is happening; must write to stderr (stdout is the MCP channel in stdio mode). */
  notify: (line: string) => void;
  log: Logger;
  /** How long to wait for the user; default 5 minutes. */
  timeoutMs?: number | undefined;
  /** Stops waiting (the caller is shutting down). */
  signal?: AbortSignal | undefined;
}

/** The forge's authorize URL for one sign-in (forge-facts.md, "Authorize"). */
export function authorizeUrl(input: {
  forgeUrl: string;
  clientId: string;
  redirectUri: string;
  state: string;
  scopes: readonly string[];
  codeChallenge: string;
}): string {
  const url = new URL(`${input.forgeUrl.replace(/\/+$/, '')}/oauth/authorize`);
  url.search = new URLSearchParams({
    client_id: input.clientId,
    redirect_uri: input.redirectUri,
    response_type: 'code',
    state: input.state,
    scope: input.scopes.join(' '),
    code_challenge: input.codeChallenge,
    code_challenge_method: 'S256',
  }).toString();
  return url.href;
}

/** Runs one browser sign-in and returns the new token set (not yet stored). */
export async function signInWithBrowser(deps: BrowserSignInDeps): Promise<StoredTokenSet> {
  const pkce = createPkcePair();
  const state = createState();
  deps.signal?.throwIfAborted();
  const listener = await startCallbackListener({ redirect: deps.redirect, state, log: deps.log, timeoutMs: deps.timeoutMs });
  const stop = () => void listener.close();
  deps.signal?.addEventListener('abort', stop, { once: true });
  try {
    const url = authorizeUrl({
      forgeUrl: deps.forgeUrl,
      clientId: deps.clientId,
      redirectUri: listener.redirectUri,
      state,
      scopes: deps.scopes,
      codeChallenge: pkce.challenge,
    });
    const opened = await deps.openBrowser(url).catch(() => false);
    // The URL carries only public values (client id, challenge, state), so showing it is safe; it is the way in
    // when no browser can be opened (ssh, containers) and a fallback when the opened one is on another screen.
    deps.notify(
      opened
        ? `Sign in to the forge in the browser window that opened. If none appeared, open:\n  ${url}`
        : `Open this URL in a browser to sign in to the forge:\n  ${url}`,
    );
    const code = await listener.code;
    const tokens = await deps.forge.exchangeCode({ code, redirectUri: listener.redirectUri, codeVerifier: pkce.verifier });
    deps.log.info({ forge: deps.forgeUrl, scope: tokens.scope }, 'signed in to the forge');
    return tokens;
  } finally {
    deps.signal?.removeEventListener('abort', stop);
    await listener.close();
  }
}
