/**
 * The `/mcp` request rate limits (issue 17 item 2): per client address (checked before the bearer, so a flood of
 * made-up tokens cannot make the server ask the forge about each) and per token (after it). Fixed one-minute
 * windows. With `PLATFORM_REDIS_URL` the counters live in Redis and every replica shares them; without it each
 * process counts for itself (one replica).
 *
 * Redis being unreachable lets requests through (logged once a minute): the limit protects the forge and the
 * server from one noisy client, and is not worth refusing every client while Redis is away.
 */
import { holdRedis } from '../core/redis-client.ts';
import { countWindowHits } from '../core/redis-window.ts';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';

export const MCP_RATE_WINDOW_MS = 60_000;

export type LimitKind = 'address' | 'token';

export interface LimitDecision {
  allowed: boolean;
  /** Seconds until the window ends (for `Retry-After`), when refused. */
  retryAfterSeconds: number;
}

/** A request refused by one of the limits, with the seconds until that limit's window ends. */
export interface LimitRefusal {
  kind: LimitKind;
  retryAfterSeconds: number;
}

export interface McpRequestLimiter {
  /** Counts one request of `key` (a client address, or a token's hash) against the `kind` limit. */
  hit(kind: LimitKind, key: string): Promise<LimitDecision>;
  /**
   * Both limits of a request whose token is known already (a cached bearer): the address is counted, and the
   * token only when the address is within its limit, exactly as `hit('address')` then `hit('token')` would; with
   * Redis in one exchange instead of two. Undefined when both allow the request.
   */
  hitRequest(address: string, tokenKey: string): Promise<LimitRefusal | undefined>;
  close(): Promise<void>;
}

export interface McpLimitSettings {
  /** Requests per minute per client address; 0: no limit. */
  perAddressPerMinute: number;
  /** Requests per minute per token; 0: no limit. */
  perTokenPerMinute: number;
}

const ALLOWED: LimitDecision = { allowed: true, retryAfterSeconds: 0 };

function limitOf(settings: McpLimitSettings, kind: LimitKind): number {
  return kind === 'address' ? settings.perAddressPerMinute : settings.perTokenPerMinute;
}

function decide(count: number, limit: number, windowStart: number, now: number): LimitDecision {
  if (count <= limit) return ALLOWED;
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + MCP_RATE_WINDOW_MS - now) / 1000)) };
}

/** Counters in this process (one replica). */
export function createMemoryMcpLimiter(deps: { clock: Clock; settings: McpLimitSettings }): McpRequestLimiter {
  const windows = new LRUCache<string, { start: number; count: number }>({ max: 100_000 });
  const count = (kind: LimitKind, key: string): LimitDecision => {
    const limit = limitOf(deps.settings, kind);
    if (limit === 0) return ALLOWED;
    const now = deps.clock.now();
    const start = now - (now % MCP_RATE_WINDOW_MS);
    const id = `${kind}:${key}`;
    let window = windows.get(id);
    if (!window || window.start !== start) {
      window = { start, count: 0 };
      windows.set(id, window);
    }
    window.count += 1;
    return decide(window.count, limit, start, now);
  };
  return {
    hit: async (kind, key) => count(kind, key),
    async hitRequest(address, tokenKey) {
      const byAddress = count('address', address);
      if (!byAddress.allowed) return { kind: 'address', retryAfterSeconds: byAddress.retryAfterSeconds };
      const byToken = count('token', tokenKey);
      return byToken.allowed ? undefined : { kind: 'token', retryAfterSeconds: byToken.retryAfterSeconds };
    },
    close: async () => undefined,
  };
}

/** Counters in Redis, shared by every replica pointed at the same server (`INCR` on a key per window). */
export function createRedisMcpLimiter(deps: {
  url: string;
  clock: Clock;
  log: Logger;
  settings: McpLimitSettings;
  /** Key prefix (tests use their own, so runs never share counters). */
  keyPrefix?: string;
}): McpRequestLimiter {
  const hold = holdRedis(deps.url, {
    clock: deps.clock,
    log: deps.log,
    onUnreachable: 'MCP rate limit: Redis unreachable; requests are not limited until it is back',
  });
  const prefix = deps.keyPrefix ?? 'platform:mcp:rate:';
  let lastLogged = 0;
  const complain = (error: unknown) => {
    if (deps.clock.now() - lastLogged < 60_000) return;
    lastLogged = deps.clock.now();
    deps.log.error(
      { err: { message: error instanceof Error ? error.message : String(error) } },
      'MCP rate limit: Redis unreachable; requests are not limited until it is back',
    );
  };
  /** Counts the kinds with a limit, in order; the first refusal, or undefined. */
  const count = async (hits: readonly (readonly [LimitKind, string])[]): Promise<LimitRefusal | undefined> => {
    const counted = hits.filter(([kind]) => limitOf(deps.settings, kind) > 0);
    if (counted.length === 0) return undefined;
    const now = deps.clock.now();
    const start = now - (now % MCP_RATE_WINDOW_MS);
    const limits = counted.map(([kind]) => limitOf(deps.settings, kind));
    let counts: number[];
    try {
      counts = await countWindowHits(
        hold.redis,
        counted.map(([kind, key]) => `${prefix}${kind}:${key}:${start}`),
        limits,
        MCP_RATE_WINDOW_MS,
      );
    } catch (error) {
      complain(error);
      return undefined;
    }
    for (let i = 0; i < counts.length; i += 1) {
      const decision = decide(counts[i] as number, limits[i] as number, start, now);
      if (!decision.allowed)
        return { kind: (counted[i] as readonly [LimitKind, string])[0], retryAfterSeconds: decision.retryAfterSeconds };
    }
    return undefined;
  };
  return {
    async hit(kind, key) {
      const refused = await count([[kind, key]]);
      return refused ? { allowed: false, retryAfterSeconds: refused.retryAfterSeconds } : ALLOWED;
    },
    hitRequest: (address, tokenKey) =>
      count([
        ['address', address],
        ['token', tokenKey],
      ]),
    async close() {
      hold.release();
    },
  };
}
