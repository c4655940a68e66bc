/**
 * Composition root of the forge MCP server's HTTP listener: settings in, a Fastify app out. Everything with state
 * or time (clock, fetch, replay cache, metadata-document fetcher) is passed in, so tests and the benchmark build
 * the same app with fakes.
 */
import { hkdfSync } from 'node:crypto';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance } from 'fastify';
import type { Clock } from '../core/clock.ts';
import type { CoreConfig, TrustProxy } from '../core/config.core.ts';
import { closeGracefully, createHttpApp } from '../core/http/server.ts';
import type { Logger } from '../core/logger.ts';
import { createBearerValidator, type BearerValidator } from './mcp.auth.ts';
import type { McpConfig } from './mcp.config.ts';
import { createMcpGuard } from './mcp.guard.ts';
import { createMemoryMcpLimiter, createRedisMcpLimiter, type McpLimitSettings, type McpRequestLimiter } from './mcp.limits.ts';
import { registerMcpRoutes } from './mcp.routes.ts';
import type { Allowlist } from './oauth/oauth.allowlist.ts';
import { createClientMetadataResolver, type FetchedDocument } from './oauth/oauth.client-metadata.ts';
import { createClientRegistry } from './oauth/oauth.clients.ts';
import { createForgeOAuth, createForgeUserTokenCheck, revokeForgeTokens } from './oauth/oauth.forge.ts';
import { serverPathPrefix, type MetadataSettings } from './oauth/oauth.metadata.ts';
import { createWindowRateLimiter } from './oauth/oauth.rate-limit.ts';
import { createMemoryReplayCache, createRedisReplayCache, type ReplayCache } from './oauth/oauth.replay.ts';
import { registerOAuthRoutes } from './oauth/oauth.routes.ts';
import { createSealer } from './oauth/oauth.seal.ts';
import type { ForgeSend } from './tools/forge.client.ts';
import { createConfirmer } from './tools/tool.confirm.ts';
import { FULL_SURFACE, type ToolSurface } from './tools/tool.surface.ts';
import { oauthError, sendOAuthJson } from './oauth/oauth.errors.ts';
import { createOAuthService, type OAuthMode } from './oauth/oauth.service.ts';
import { createMemoryFlowStore, createSealedFlowStore, type FlowStore } from './oauth/oauth.stores.ts';

/** Everything the listener needs to know, resolved from the configuration (and the dev forge under `npm start`). */
export interface McpSettings {
  /** `none`: no remote OAuth; `/mcp` takes any token the forge accepts (`/api/v4/user`). */
  mode: OAuthMode | 'none';
  /** `MCP_SERVER_URL`, no trailing slash; required for the OAuth modes. */
  serverUrl: string | undefined;
  forgeUrl: string;
  appId: string | undefined;
  scopes: string;
  allowlist: Allowlist;
  registerLimitPerHour: number;
  /** Sign-ins started (pending transactions) per client address per 10 minutes (`OAUTH_SIGNIN_RATE_LIMIT_PER_10_MIN`). */
  signinLimitPer10Min: number;
  /** Stateless mode: the shared secret (and the one being rotated out), and the optional Redis replay cache. */
  stateless: { secret: Buffer; previous?: Buffer; replayCacheUrl?: string } | undefined;
  /**
   * The key that seals consent forms and cookies when stateless mode is off (derived from the platform secret key,
   * so approvals survive restarts). In stateless mode the stateless secret is used instead.
   */
  localSecret: Buffer;
  trustProxy: TrustProxy;
  bodyLimit: number;
  /** Bearer validation cache lifetime (ms, at most 60 s; 0 turns the cache off). */
  validationCacheTtlMs?: number;
  /** Browser origins allowed on `/mcp` besides `serverUrl`'s own (`MCP_ALLOWED_ORIGINS`). */
  allowedOrigins?: readonly string[];
  /** The listener's bind address (`PLATFORM_HOST`); on loopback the `Host` header is checked. Unset: no check. */
  bindHost?: string;
  /** `/mcp` request limits per minute (`MCP_RATE_LIMIT_PER_MINUTE`, `MCP_ADDRESS_RATE_LIMIT_PER_MINUTE`). */
  rateLimits?: McpLimitSettings;
  /**
   * `PLATFORM_REDIS_URL`: the `/mcp` rate limits are shared there across replicas, and so are the confirmation
   * nonces when stateless mode's replay cache is not shared.
   */
  redisUrl?: string;
  /** `FORGE_ALLOW_QUICK_ACTIONS`. */
  allowQuickActions?: boolean;
  /** `FORGE_TIMEOUT_MS`. */
  forgeTimeoutMs?: number;
  /** The operator's bound on the tool surface; default: every tool. */
  toolSurface?: ToolSurface;
}

/** The defaults of `MCP_RATE_LIMIT_PER_MINUTE` and `MCP_ADDRESS_RATE_LIMIT_PER_MINUTE`. */
const DEFAULT_RATE_LIMITS: McpLimitSettings = { perTokenPerMinute: 600, perAddressPerMinute: 6000 };

/** Resolves settings from the parsed configuration; `forge` overrides the forge when the dev forge runs. */
export function mcpSettingsFromConfig(
  config: McpConfig,
  core: Pick<CoreConfig, 'TRUST_PROXY' | 'PLATFORM_BODY_LIMIT_BYTES' | 'PLATFORM_HOST'>,
  localSecret: Buffer,
  forge?: { forgeUrl: string; appId: string; serverUrl: string },
): McpSettings {
  const forgeUrl = forge?.forgeUrl ?? config.FORGE_URL;
  if (forgeUrl === undefined) throw new Error('no forge: set FORGE_URL or run the dev forge');
  // Replicas in stateless mode must share the used codes; the platform's Redis is that place unless one is named.
  const replayCacheUrl = config.OAUTH_REPLAY_CACHE_URL ?? config.PLATFORM_REDIS_URL;
  const mode: McpSettings['mode'] = forge
    ? 'callback_proxy'
    : !config.FORGE_MCP_OAUTH
      ? 'none'
      : config.FORGE_OAUTH_CALLBACK_PROXY
        ? 'callback_proxy'
        : 'passthrough';
  return {
    mode,
    serverUrl: forge?.serverUrl ?? config.MCP_SERVER_URL,
    forgeUrl,
    appId: forge?.appId ?? config.FORGE_OAUTH_APP_ID,
    scopes: config.FORGE_OAUTH_SCOPES,
    allowlist: config.allowlist,
    registerLimitPerHour: config.OAUTH_REGISTER_RATE_LIMIT_PER_HOUR,
    signinLimitPer10Min: config.OAUTH_SIGNIN_RATE_LIMIT_PER_10_MIN,
    stateless:
      config.OAUTH_STATELESS_MODE && config.OAUTH_STATELESS_SECRET
        ? {
            secret: config.OAUTH_STATELESS_SECRET,
            ...(config.OAUTH_STATELESS_PREVIOUS_SECRET ? { previous: config.OAUTH_STATELESS_PREVIOUS_SECRET } : {}),
            ...(replayCacheUrl ? { replayCacheUrl } : {}),
          }
        : undefined,
    localSecret,
    trustProxy: core.TRUST_PROXY,
    bodyLimit: core.PLATFORM_BODY_LIMIT_BYTES,
    allowedOrigins: config.allowedOrigins,
    bindHost: core.PLATFORM_HOST,
    rateLimits: { perTokenPerMinute: config.MCP_RATE_LIMIT_PER_MINUTE, perAddressPerMinute: config.MCP_ADDRESS_RATE_LIMIT_PER_MINUTE },
    ...(config.PLATFORM_REDIS_URL ? { redisUrl: config.PLATFORM_REDIS_URL } : {}),
    allowQuickActions: config.FORGE_ALLOW_QUICK_ACTIONS,
    forgeTimeoutMs: config.FORGE_TIMEOUT_MS,
    toolSurface: config.toolSurface,
  };
}

export interface McpAppDeps {
  settings: McpSettings;
  log: Logger;
  clock: Clock;
  fetch: typeof fetch;
  /** Fetcher of client ID metadata documents (default: the guarded https fetch). */
  fetchClientMetadata?: (url: URL) => Promise<FetchedDocument>;
  /** Replay cache for stateless mode (default: Redis when configured, else in-process). */
  replay?: ReplayCache;
  /** TLS key and certificate (PEM), as the other listeners take them from PLATFORM_TLS_CERT/KEY. */
  https?: { key: Buffer; cert: Buffer };
  /** The `/mcp` rate limiter (default: Redis when `redisUrl` is set, else in-process). */
  limiter?: McpRequestLimiter;
  /** The tools' REST transport (forge.http.ts `send`); default: `fetch`. */
  forgeSend?: ForgeSend;
}

export interface McpApp {
  app: FastifyInstance;
  validator: BearerValidator;
  /** The flow store (tests look into the LRU of stateful mode). */
  flows: FlowStore | undefined;
  /** Stops accepting, lets in-flight requests finish, closes the replay cache. */
  close(): Promise<void>;
}

/** Builds the listener's app (not yet listening). */
export async function buildMcpApp(deps: McpAppDeps): Promise<McpApp> {
  const { settings, log, clock } = deps;
  const app = createHttpApp({
    log,
    trustProxy: settings.trustProxy,
    bodyLimit: settings.bodyLimit,
    ...(deps.https ? { https: deps.https } : {}),
  });
  await app.register(fastifyFormbody);
  const bases = settings.serverUrl ? [...new Set(['', serverPathPrefix(settings.serverUrl)])] : [''];
  let replay: ReplayCache | undefined;
  let flows: FlowStore | undefined;
  let validator: BearerValidator;
  let sweeper: NodeJS.Timeout | undefined;

  if (settings.mode === 'none') {
    validator = createBearerValidator({
      forge: createForgeUserTokenCheck({ forgeUrl: settings.forgeUrl, fetch: deps.fetch, log }),
      clock,
      log,
      ...(settings.validationCacheTtlMs !== undefined ? { ttlMs: settings.validationCacheTtlMs } : {}),
    });
  } else {
    const { serverUrl, appId } = settings;
    if (!serverUrl || !appId) throw new Error('remote OAuth needs MCP_SERVER_URL and FORGE_OAUTH_APP_ID');
    const forge = createForgeOAuth({ forgeUrl: settings.forgeUrl, appId, fetch: deps.fetch, log });
    validator = createBearerValidator({
      forge,
      clock,
      log,
      appId,
      ...(settings.validationCacheTtlMs !== undefined ? { ttlMs: settings.validationCacheTtlMs } : {}),
    });
    const secret = settings.stateless?.secret ?? settings.localSecret;
    const previous = settings.stateless?.previous ? [settings.stateless.previous] : [];
    const sealer = createSealer({ secret, previous, clock });
    let consentReplay: ReplayCache;
    if (settings.stateless) {
      replay =
        deps.replay ??
        (settings.stateless.replayCacheUrl
          ? createRedisReplayCache({ url: settings.stateless.replayCacheUrl, clock, log })
          : createMemoryReplayCache({ clock }));
      flows = createSealedFlowStore({ sealer, replay, clock });
      consentReplay = replay;
    } else {
      // A proxy code that leaves the store unredeemed (evicted, expired) takes its forge tokens' validity with it.
      const memoryFlows = createMemoryFlowStore({
        clock,
        onCodeDiscarded: (record) => {
          log.info('revoking forge tokens of a proxy code that expired or was evicted unredeemed');
          void revokeForgeTokens(forge, record.tokens, log);
        },
      });
      flows = memoryFlows;
      sweeper = setInterval(() => memoryFlows.sweep(), 60_000);
      sweeper.unref();
      consentReplay = createMemoryReplayCache({ clock });
    }
    const metadata = createClientMetadataResolver({
      allowlist: settings.allowlist,
      clock,
      log,
      ...(deps.fetchClientMetadata ? { fetch: deps.fetchClientMetadata } : {}),
    });
    const clients = createClientRegistry({ clock, metadata, ...(settings.stateless ? { sealer } : {}) });
    const service = createOAuthService({
      mode: settings.mode,
      serverUrl,
      forgeUrl: settings.forgeUrl,
      appId,
      scopes: settings.scopes,
      allowlist: settings.allowlist,
      clients,
      flows,
      forge,
      sealer,
      registerLimiter: createWindowRateLimiter({ clock, limit: settings.registerLimitPerHour, windowMs: 3_600_000 }),
      signinLimiter: createWindowRateLimiter({ clock, limit: settings.signinLimitPer10Min, windowMs: 10 * 60_000 }),
      consentReplay,
      bearerCache: validator,
      clock,
      log,
    });
    const metadataSettings: MetadataSettings = { serverUrl, scopes: settings.scopes, mode: settings.mode };
    // The CSRF key follows the sealing secrets: tokens are made with the current one and accepted with any, so a
    // consent page rendered before a rotation (or by a replica not yet rotated) can still be submitted.
    const csrfKeys = [secret, ...previous].map((s) =>
      Buffer.from(hkdfSync('sha256', s, Buffer.alloc(0), 'platform mcp consent csrf v1', 32)),
    );
    await app.register(async (scope) => {
      // OAuth endpoints answer in RFC 6749 form, also for bodies Fastify could not parse (STYLE.md 7).
      scope.setErrorHandler(async (error: FastifyError, request, reply) => {
        const status = error.statusCode ?? 500;
        if (status >= 500) request.log.error({ err: error }, 'OAuth endpoint failed');
        return sendOAuthJson(
          reply,
          status >= 500
            ? oauthError(500, 'server_error', 'Internal error.')
            : oauthError(status === 413 || status === 415 ? status : 400, 'invalid_request', 'Malformed request.'),
        );
      });
      registerOAuthRoutes(scope, { service, metadata: metadataSettings, forgeUrl: settings.forgeUrl, csrfKeys, bases });
    });
  }

  const rateLimits = settings.rateLimits ?? DEFAULT_RATE_LIMITS;
  const limiter =
    deps.limiter ??
    (settings.redisUrl
      ? createRedisMcpLimiter({ url: settings.redisUrl, clock, log, settings: rateLimits })
      : createMemoryMcpLimiter({ clock, settings: rateLimits }));
  // Nonces of confirmation tokens must be shared by every replica, or a token is redeemed once per replica: the
  // replay cache of stateless mode when it is shared (OAUTH_REPLAY_CACHE_URL or PLATFORM_REDIS_URL, or one a caller
  // passed in), else the Redis of PLATFORM_REDIS_URL (replicas share it for the rate limits already, in any mode),
  // else an in-process record (a single replica).
  const sharedReplay = replay && (deps.replay || settings.stateless?.replayCacheUrl) ? replay : undefined;
  const ownConfirmReplay =
    sharedReplay === undefined && settings.redisUrl
      ? createRedisReplayCache({
          url: settings.redisUrl,
          clock,
          log,
          keyPrefix: 'platform:mcp:confirm:used:',
          onUnreachable: 'confirmation replay record (Redis) unreachable; confirmation tokens are refused until it is back',
        })
      : undefined;
  const confirmReplay = sharedReplay ?? ownConfirmReplay ?? replay ?? createMemoryReplayCache({ clock });
  await app.register(async (scope) => {
    registerMcpRoutes(scope, {
      validator,
      guard: createMcpGuard({
        serverUrl: settings.serverUrl,
        allowedOrigins: settings.allowedOrigins ?? [],
        bindHost: settings.bindHost ?? '0.0.0.0',
      }),
      limiter,
      forgeUrl: settings.forgeUrl,
      allowQuickActions: settings.allowQuickActions ?? false,
      forgeTimeoutMs: settings.forgeTimeoutMs ?? 15_000,
      toolSurface: settings.toolSurface ?? FULL_SURFACE,
      fetch: deps.fetch,
      ...(deps.forgeSend ? { forgeSend: deps.forgeSend } : {}),
      log,
      serverUrl: settings.mode === 'none' ? undefined : settings.serverUrl,
      scopes: settings.scopes,
      bases,
      // Confirmation tokens of high-impact writes: signed with the secret every replica shares (the stateless
      // secret, else the key derived from the platform secret), their nonces consumed as chosen above.
      confirmer: createConfirmer({
        secret: settings.stateless?.secret ?? settings.localSecret,
        replay: confirmReplay,
        now: () => clock.now(),
      }),
    });
  });
  app.get('/healthz', async () => ({ status: 'ok' }));

  return {
    app,
    validator,
    flows,
    async close() {
      if (sweeper) clearInterval(sweeper);
      await closeGracefully(app);
      // An injected replay cache belongs to the caller.
      if (replay && !deps.replay) await replay.close();
      await ownConfirmReplay?.close();
      if (!deps.limiter) await limiter.close();
    },
  };
}
