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
import { countWindowHit } from '../core/redis-window.ts';
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

export interface McpRequestLimiter {
  /** Counts one request of `key` (a client address, or a token's hash) against the `kind` limit. */
  hit(kind: LimitKind, key: string): Promise<LimitDecision>;
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
  return {
    async hit(kind, key) {
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
  const { redis } = hold;
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
  return {
    async hit(kind, key) {
      const limit = limitOf(deps.settings, kind);
      if (limit === 0) return ALLOWED;
      const now = deps.clock.now();
      const start = now - (now % MCP_RATE_WINDOW_MS);
      const id = `${prefix}${kind}:${key}:${start}`;
      try {
        return decide(await countWindowHit(redis, id, MCP_RATE_WINDOW_MS), limit, start, now);
      } catch (error) {
        complain(error);
        return ALLOWED;
      }
    },
    async close() {
      hold.release();
    },
  };
}
