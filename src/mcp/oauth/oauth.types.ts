/** Types shared by the OAuth endpoint modules (oauth.register.ts, oauth.authorize.ts, ...) and their composition. */
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import type { BearerValidator } from '../mcp.auth.ts';
import type { Allowlist } from './oauth.allowlist.ts';
import type { ClientRegistry, RegisteredClient } from './oauth.clients.ts';
import type { ForgeOAuth } from './oauth.forge.ts';
import type { RateLimiter } from './oauth.rate-limit.ts';
import type { ReplayCache } from './oauth.replay.ts';
import type { Sealer } from './oauth.seal.ts';
import type { FlowStore } from './oauth.stores.ts';

export type OAuthMode = 'passthrough' | 'callback_proxy';

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

/** What a browser-facing endpoint answers: a redirect, an error page, or the consent page. */
export type AuthorizeAnswer =
  | { kind: 'redirect'; location: string; setConsentCookie?: string }
  | { kind: 'error_page'; status: number; title: string; message: string; headers?: Record<string, string> }
  | { kind: 'consent'; client: RegisteredClient; redirectUri: string; scope: string; sealedRequest: string };

/** The sealed content of a consent form: a validated authorization request, usable once (`jti`). */
export interface ConsentRequest {
  cid: string;
  ru: string;
  st?: string;
  cc: string;
  sc: string;
  jti: string;
}
