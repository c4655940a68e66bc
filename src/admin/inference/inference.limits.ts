import type { Kysely } from 'kysely';
import type { Redis } from 'ioredis';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import type { AdminTables } from '../admin.table.ts';
import { createDatabaseLimits } from './inference.limits.db.ts';
import { createRedisLimits } from './inference.limits.redis.ts';
import { NO_SLOT, STREAM_LEASE_GRACE_MS, type InferenceLimiter, type LimitSettings } from './inference.limits.types.ts';

export { DEFAULT_MAX_STREAMS, DEFAULT_RATE_PER_MINUTE, type InferenceLimiter, type StreamSlot } from './inference.limits.types.ts';

/**
 * The limiter of one process: Redis when a client is given (one per process, owned by the caller), else the
 * database. A limit of 0 is not counted at all.
 */
export function createInferenceLimiter(deps: {
  db: Kysely<AdminTables>;
  clock: Clock;
  log: Logger;
  redis?: Redis | undefined;
  /** Redis key prefix (tests isolate runs with it). */
  keyPrefix?: string;
  ratePerMinute: number;
  maxStreams: number;
  /** `PLATFORM_INFERENCE_TIMEOUT_MS`. */
  inferenceTimeoutMs: number;
}): InferenceLimiter {
  const settings: LimitSettings = {
    ratePerMinute: deps.ratePerMinute,
    maxStreams: deps.maxStreams,
    streamLeaseMs: deps.inferenceTimeoutMs + STREAM_LEASE_GRACE_MS,
  };
  const backend = deps.redis
    ? createRedisLimits({
        redis: deps.redis,
        clock: deps.clock,
        log: deps.log,
        settings,
        ...(deps.keyPrefix ? { keyPrefix: deps.keyPrefix } : {}),
      })
    : createDatabaseLimits({ db: deps.db, clock: deps.clock, settings });
  return {
    async admitRequest(credentialId) {
      if (settings.ratePerMinute > 0) await backend.admitRequest(credentialId);
    },
    async openStream(credentialId) {
      return settings.maxStreams > 0 ? backend.openStream(credentialId) : NO_SLOT;
    },
  };
}
