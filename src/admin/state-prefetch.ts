import type { FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { sha256Hex } from '../core/crypto.ts';
import type { Principal } from '../core/identity/identity.model.ts';

/** The bearer shape the authenticator accepts (src/core/identity/auth.ts); anything else is left to it. */
const BEARER = /^Bearer +([A-Za-z0-9._~+/=-]{1,128}) *$/i;

/** Token hashes whose Account is remembered: one entry per recently seen credential. */
const REMEMBERED_CREDENTIALS = 10_000;

/**
 * Starts a command's account-state read while its credential is still being looked up, instead of after. The two
 * are independent reads, so on PostgreSQL the command waits for one round trip where it waited for two.
 *
 * Which Account to read is known before the lookup answers because a credential never changes Account: the Account
 * that a token's last successful authentication named is remembered by the token's hash (bounded). The lookup itself
 * still runs on every request, so revocation, deactivation and demotion apply as before; the read started early is
 * used only when the lookup accepts the caller and names that same Account, and is discarded otherwise. It starts
 * after the request arrived, as the handler's own read would, so it is no older than what the handler would have
 * read (src/core/coalesce.ts). A first request of a token, a cookie, or a miss reads as before, in the handler.
 */
export function createStatePrefetch<S>(read: (accountId: string) => Promise<S>) {
  const accounts = new LRUCache<string, string>({ max: REMEMBERED_CREDENTIALS });
  const started = new WeakMap<FastifyRequest, { tokenHash: string; accountId?: string; state?: Promise<S> }>();

  return {
    /** For a route's `beforeAuth`: starts the read when the bearer's Account is remembered. */
    start(this: void, request: FastifyRequest): void {
      const token = BEARER.exec(request.headers.authorization ?? '')?.[1];
      if (token === undefined) return;
      const tokenHash = sha256Hex(token);
      const accountId = accounts.get(tokenHash);
      if (accountId === undefined) {
        started.set(request, { tokenHash });
        return;
      }
      const state = read(accountId);
      // A refused caller's read is dropped unawaited; its failure must not surface as an unhandled rejection.
      state.catch(() => undefined);
      started.set(request, { tokenHash, accountId, state });
    },

    /** In the handler: the read started for this request if it is the authenticated principal's Account. */
    take(this: void, request: FastifyRequest, principal: Principal): Promise<S> | undefined {
      const entry = started.get(request);
      started.delete(request);
      if (!entry || principal.via !== 'bearer') return undefined;
      accounts.set(entry.tokenHash, principal.accountId);
      return entry.accountId === principal.accountId ? entry.state : undefined;
    },
  };
}
