import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * Counts one hit on each fixed-window key in order, stopping after the first key over its limit (the keys after it
 * are not counted), and answers the counts made. The key names the window, so it expires after two windows (a late
 * hit of the previous window still finds its own key), set with the increment in one script so a key is never left
 * without its expiry. One script call is one command: a MULTI/INCR/PEXPIRE/EXEC per key was four, and one exchange
 * per key, for the CPU of both ends. KEYS: the counters; ARGV[1]: the expiry in ms; ARGV[1 + i]: the limit of KEYS[i].
 */
const WINDOW_SCRIPT = `
local counts = {}
for i, key in ipairs(KEYS) do
  local n = redis.call('INCR', key)
  redis.call('PEXPIRE', key, ARGV[1])
  counts[i] = n
  if n > tonumber(ARGV[i + 1]) then break end
end
return counts`;
const WINDOW_SCRIPT_SHA = createHash('sha1').update(WINDOW_SCRIPT).digest('hex');

/** Runs the window script by its digest, loading it when this Redis does not know it yet (a restart, a new server). */
export async function countWindowHits(
  redis: Redis,
  keys: readonly string[],
  limits: readonly number[],
  windowMs: number,
): Promise<number[]> {
  const args = [String(2 * windowMs), ...limits.map(String)];
  let answer: unknown;
  try {
    answer = await redis.evalsha(WINDOW_SCRIPT_SHA, keys.length, ...keys, ...args);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
    answer = await redis.eval(WINDOW_SCRIPT, keys.length, ...keys, ...args);
  }
  if (!Array.isArray(answer)) throw new Error('the rate window script answered no list');
  return answer.map(Number);
}

/** Adds one hit to a fixed-window counter in Redis and answers the window's count (no limit stops it). */
export async function countWindowHit(redis: Redis, key: string, windowMs: number): Promise<number> {
  const [count] = await countWindowHits(redis, [key], [Number.MAX_SAFE_INTEGER], windowMs);
  if (count === undefined) throw new Error('the rate window script counted nothing');
  return count;
}
