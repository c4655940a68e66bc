import type { Redis } from 'ioredis';

/**
 * Adds one hit to a fixed-window counter in Redis and answers the window's count. The key names the window, so it
 * expires after two windows (a late hit of the previous window still finds its own key); INCR and PEXPIRE go in one
 * MULTI so a key is never left without its expiry.
 */
export async function countWindowHit(redis: Redis, key: string, windowMs: number): Promise<number> {
  const answers = await redis
    .multi()
    .incr(key)
    .pexpire(key, 2 * windowMs)
    .exec();
  const [error, value] = answers?.[0] ?? [new Error('the transaction was discarded'), null];
  if (error) throw error;
  return Number(value);
}
