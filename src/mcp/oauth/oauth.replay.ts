/**
 * One-time use of sealed values in stateless mode (issue 3 item 8): a sealed proxy code or proxy state carries a
 * random id (`jti`); consuming it records the id until the value expires anyway. Without a shared store this holds
 * per replica; with `OAUTH_REPLAY_CACHE_URL=redis://…` every replica sees every consumption.
 */
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../core/clock.ts';
import { holdRedis } from '../../core/redis-client.ts';
import type { Logger } from '../../core/logger.ts';

export interface ReplayCache {
  /**
   * Marks `id` used until `expiresAt` (epoch ms). Resolves true the first time, false for a replay. Rejects when
   * the shared store cannot be reached (callers fail closed).
   */
  consume(id: string, expiresAt: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Bound of the in-process record; ids expire with their values (10 minutes at most). */
const MEMORY_MAX = 100_000;

/** An in-process replay record bounded in size, timed by `clock`. */
export function createMemoryReplayCache(deps: { clock: Clock; max?: number }): ReplayCache {
  const seen = new LRUCache<string, true>({
    max: deps.max ?? MEMORY_MAX,
    ttlAutopurge: false,
    ttlResolution: 0,
    perf: { now: () => deps.clock.now() },
  });
  return {
    async consume(id, expiresAt) {
      if (seen.get(id) !== undefined) return false;
      seen.set(id, true, { ttl: Math.max(1, expiresAt - deps.clock.now()) });
      return true;
    },
    async close() {
      seen.clear();
    },
  };
}

/**
 * A replay record in Redis (`SET key 1 PX ttl NX`), with the in-process record in front so a replay on the same
 * replica costs no round trip.
 */
export function createRedisReplayCache(deps: {
  url: string;
  clock: Clock;
  log: Logger;
  keyPrefix?: string;
  /** The error logged while Redis cannot be reached (default: the sealed codes' wording). */
  onUnreachable?: string;
}): ReplayCache {
  const local = createMemoryReplayCache({ clock: deps.clock });
  const hold = holdRedis(deps.url, {
    clock: deps.clock,
    log: deps.log,
    onUnreachable: deps.onUnreachable ?? 'replay cache (Redis) unreachable; sealed codes are refused until it is back',
  });
  const { redis } = hold;
  const prefix = deps.keyPrefix ?? 'platform:mcp:oauth:used:';
  return {
    async consume(id, expiresAt) {
      const ttl = Math.max(1, expiresAt - deps.clock.now());
      if (!(await local.consume(id, expiresAt))) return false;
      const answer = await redis.set(`${prefix}${id}`, '1', 'PX', ttl, 'NX');
      return answer === 'OK';
    },
    async close() {
      await local.close();
      hold.release();
    },
  };
}
