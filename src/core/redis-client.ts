import { Redis } from 'ioredis';
import type { Clock } from './clock.ts';
import type { Logger } from './logger.ts';

/**
 * One Redis connection per URL per process. The `/mcp` limits, the inference limits and the OAuth replay cache each
 * talk to Redis; with the usual single `redis://…` for all three, a replica opened three connections where one
 * does (ioredis pipelines the commands of every user on it). Holders are counted; the connection closes with the
 * last release.
 *
 * Commands fail fast when Redis is away (one retry, 1 s per command) instead of holding requests: each user decides
 * what a failure means (the limits let calls through, the replay cache refuses the sealed value).
 */
const shared = new Map<string, { redis: Redis; holders: number }>();

export interface RedisHold {
  redis: Redis;
  /** Stops this holder's error reports; the connection closes when no holder is left. */
  release(): void;
}

/**
 * A hold on the process's connection to `url`. `onUnreachable` is told of connection errors, at most once a
 * minute per holder (a down Redis repeats its error on every reconnect attempt).
 */
export function holdRedis(url: string, deps: { clock: Clock; log: Logger; onUnreachable: string }): RedisHold {
  let entry = shared.get(url);
  if (entry === undefined) {
    entry = { redis: new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2_000, commandTimeout: 1_000 }), holders: 0 };
    shared.set(url, entry);
  }
  entry.holders += 1;
  const held = entry;
  let lastLogged = 0;
  const report = (error: Error) => {
    if (lastLogged !== 0 && deps.clock.now() - lastLogged < 60_000) return;
    lastLogged = deps.clock.now();
    deps.log.error({ err: { message: error.message } }, deps.onUnreachable);
  };
  held.redis.on('error', report);
  let released = false;
  return {
    redis: held.redis,
    release() {
      if (released) return;
      released = true;
      held.redis.off('error', report);
      held.holders -= 1;
      if (held.holders === 0) {
        shared.delete(url);
        held.redis.disconnect();
      }
    },
  };
}
