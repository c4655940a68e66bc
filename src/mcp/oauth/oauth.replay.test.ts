import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeClock } from '../../core/clock.ts';
import { silentLogger } from '../../core/logger.ts';
import { REDIS_URL, redisAvailable } from '../mcp.testkit.ts';
import { createMemoryReplayCache, createRedisReplayCache, type ReplayCache } from './oauth.replay.ts';

const hasRedis = await redisAvailable();

describe('replay cache', () => {
  const opened: ReplayCache[] = [];
  afterAll(async () => {
    for (const cache of opened) await cache.close();
  });

  it('[REPLAY-LOCAL] remembers a consumed id until it expires', async () => {
    const clock = fakeClock();
    const cache = createMemoryReplayCache({ clock });
    expect(await cache.consume('a', clock.now() + 1000)).toBe(true);
    expect(await cache.consume('a', clock.now() + 1000)).toBe(false);
    expect(await cache.consume('b', clock.now() + 1000)).toBe(true);
  });

  it.skipIf(!hasRedis)('[REPLAY-REDIS] a consumption on one replica is seen by every other replica through Redis', async () => {
    const clock = fakeClock(Date.now());
    const prefix = `test:mcp:${randomUUID()}:`;
    const replicas = [0, 1, 2].map(() => createRedisReplayCache({ url: REDIS_URL, clock, log: silentLogger(), keyPrefix: prefix }));
    opened.push(...replicas);
    const id = randomUUID();
    const [a, b, c] = replicas as [ReplayCache, ReplayCache, ReplayCache];
    expect(await a.consume(id, clock.now() + 60_000)).toBe(true);
    expect(await b.consume(id, clock.now() + 60_000)).toBe(false);
    expect(await c.consume(id, clock.now() + 60_000)).toBe(false);
    expect(await a.consume(id, clock.now() + 60_000)).toBe(false);
    // Concurrent first uses on different replicas: exactly one wins.
    const raced = randomUUID();
    const results = await Promise.all(replicas.map((r) => r.consume(raced, clock.now() + 60_000)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it.skipIf(!hasRedis)('[REPLAY-REDIS] fails closed when Redis cannot be reached', async () => {
    const clock = fakeClock(Date.now());
    const cache = createRedisReplayCache({ url: 'redis://127.0.0.1:1', clock, log: silentLogger() });
    opened.push(cache);
    await expect(cache.consume(randomUUID(), clock.now() + 60_000)).rejects.toThrow();
  });
});
