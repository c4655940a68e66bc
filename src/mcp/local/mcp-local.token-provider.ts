/**
 * Where the stdio MCP server gets its forge token (issue 3 item 11): a static personal access token, or the local
 * OAuth token set kept in the token file, refreshed before it expires and replaced by a new browser sign-in when
 * the forge refuses the refresh.
 */
import type { Clock } from '../../core/clock.ts';
import { isAppError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { ForgeOAuthClient } from './mcp-local.forge-client.ts';
import type { StoredTokenSet, TokenFile } from './mcp-local.token-file.ts';

/** Refresh this long before the access token expires, so a tool call never races the expiry. */
export const DEFAULT_REFRESH_MARGIN_MS = 5 * 60_000;

/** Gives the MCP server a forge token for each call. */
export interface ForgeTokenProvider {
  /** A currently valid access token; may refresh or run a browser sign-in first. */
  getToken(): Promise<string>;
  /** Reports that the forge answered 401 to `token`, so the next `getToken` does not return it again. */
  invalidate(token: string): void;
}

/** A personal access token from the environment (`FORGE_PERSONAL_ACCESS_TOKEN`); it cannot be renewed. */
export function staticTokenProvider(token: string): ForgeTokenProvider {
  return { getToken: () => Promise.resolve(token), invalidate: () => undefined };
}

/** What the OAuth provider needs. */
export interface OAuthTokenProviderDeps {
  forgeUrl: string;
  clientId: string;
  tokenFile: TokenFile;
  forge: ForgeOAuthClient;
  /** Runs a browser sign-in and returns the new set (the provider stores it). */
  signIn: () => Promise<StoredTokenSet>;
  clock: Clock;
  log: Logger;
  refreshMarginMs?: number;
}

/**
 * The local OAuth provider. Concurrent callers share one refresh or sign-in (GitLab rotates refresh tokens, so two
 * parallel refreshes with the same token would make one of them fail). Before refreshing, and again after a
 * refused refresh, it re-reads the file: another process using the same file (a second editor window) may already
 * have rotated the pair.
 */
export function createOAuthTokenProvider(deps: OAuthTokenProviderDeps): ForgeTokenProvider {
  const { tokenFile, forge, clock, log } = deps;
  const forgeUrl = deps.forgeUrl.replace(/\/+$/, '');
  const margin = deps.refreshMarginMs ?? DEFAULT_REFRESH_MARGIN_MS;
  let current: StoredTokenSet | undefined;
  const invalidated = new Set<string>();
  let inFlight: Promise<string> | undefined;

  // Not a type predicate: its false branch would wrongly narrow a stale-but-present set to `undefined`.
  const fresh = (set: StoredTokenSet): boolean => !invalidated.has(set.access_token) && set.expires_at - margin > clock.now();

  /** The file's set if it was issued by this forge to this application; a token is never sent to another forge. */
  async function readOwn(): Promise<StoredTokenSet | undefined> {
    const set = await tokenFile.read();
    if (set === undefined) return undefined;
    if (set.forge_url !== forgeUrl || set.client_id !== deps.clientId) {
      log.warn({ path: tokenFile.path }, 'the forge token file was issued by another forge or application; signing in again');
      return undefined;
    }
    return set;
  }

  async function store(set: StoredTokenSet): Promise<string> {
    await tokenFile.write(set);
    current = set;
    return set.access_token;
  }

  async function signInAgain(): Promise<string> {
    return store(await deps.signIn());
  }

  async function obtain(): Promise<string> {
    const onDisk = await readOwn();
    if (onDisk === undefined) return signInAgain();
    if (fresh(onDisk)) {
      current = onDisk;
      return onDisk.access_token;
    }
    try {
      const renewed = await forge.refresh(onDisk.refresh_token);
      log.info({ forge: forgeUrl }, 'refreshed the forge token');
      return await store(renewed);
    } catch (error) {
      // Only a refusal means "sign in again"; an unreachable forge is reported and the stored pair kept for later.
      if (!isAppError(error) || error.code !== 'unauthorized') throw error;
      const again = await readOwn();
      if (again !== undefined && fresh(again) && again.refresh_token !== onDisk.refresh_token) {
        current = again;
        return again.access_token;
      }
      log.warn({ forge: forgeUrl }, 'the forge refused the refresh token; starting a new browser sign-in');
      await tokenFile.remove();
      current = undefined;
      return signInAgain();
    }
  }

  return {
    getToken() {
      if (current !== undefined && fresh(current)) return Promise.resolve(current.access_token);
      inFlight ??= obtain().finally(() => {
        inFlight = undefined;
      });
      return inFlight;
    },
    invalidate(token) {
      invalidated.add(token);
      if (current?.access_token === token) current = undefined;
    },
  };
}
