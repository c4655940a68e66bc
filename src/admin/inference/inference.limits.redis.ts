import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { countWindowHit } from '../../core/redis-window.ts';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import {
  NO_SLOT,
  RATE_WINDOW_MS,
  rateRefusal,
  streamRefusal,
  windowStartOf,
  type InferenceLimiter,
  type LimitSettings,
} from './inference.limits.types.ts';

/**
 * Takes a stream slot: drops the leases that expired (a crashed replica's), then adds ours if fewer than the limit
 * remain. One script, so the check and the add are atomic across replicas.
 * KEYS[1] the credential's set; ARGV: now, limit, our expiry, our lease id, the key's time to live.
 */
const TAKE_SLOT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`;

/**
 * The limits in Redis, shared by every replica pointed at it. Rate: a counter per credential and fixed minute
 * (`INCR`, expiring after the minute), refused past the limit until the minute ends. Streams: a sorted set per
 * credential of lease ids scored by their expiry (the inference deadline plus a grace), so a crashed replica's slots
 * drop out by themselves; a stream gives its slot back with `ZREM`.
 *
 * When Redis cannot be reached the limits fail open (the call goes through, the error is logged): they protect the
 * providers' quotas and the platform from one noisy credential, and are not worth an outage of every call.
 */
export function createRedisLimits(deps: {
  redis: Redis;
  clock: Clock;
  log: Logger;
  settings: LimitSettings;
  keyPrefix?: string;
}): InferenceLimiter {
  const { redis, clock, log, settings } = deps;
  const prefix = deps.keyPrefix ?? 'platform:inference:';
  const unreachable = (error: unknown, what: string) =>
    log.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, `inference limits: ${what} not counted (Redis)`);

  return {
    async admitRequest(credentialId) {
      const now = clock.now();
      const windowStart = windowStartOf(now);
      const key = `${prefix}rate:${credentialId}:${windowStart}`;
      let count: number;
      try {
        count = await countWindowHit(redis, key, RATE_WINDOW_MS);
      } catch (error) {
        unreachable(error, 'a request was');
        return;
      }
      if (count > settings.ratePerMinute) throw rateRefusal(settings.ratePerMinute, windowStart, now);
    },

    async openStream(credentialId) {
      const now = clock.now();
      const key = `${prefix}streams:${credentialId}`;
      const leaseId = randomUUID();
      let taken: unknown;
      try {
        taken = await redis.eval(
          TAKE_SLOT,
          1,
          key,
          now,
          settings.maxStreams,
          now + settings.streamLeaseMs,
          leaseId,
          settings.streamLeaseMs,
        );
      } catch (error) {
        unreachable(error, 'a stream was');
        return NO_SLOT;
      }
      if (Number(taken) !== 1) throw streamRefusal(settings.maxStreams);
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          // A slot that cannot be given back drops out when its lease expires.
          await redis.zrem(key, leaseId).catch(() => undefined);
        },
      };
    },
  };
}
