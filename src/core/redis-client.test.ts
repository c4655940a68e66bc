import { describe, expect, it, vi } from 'vitest';
import { fakeClock } from './clock.ts';
import { silentLogger } from './logger.ts';
import { holdRedis } from './redis-client.ts';

// Nothing listens on port 1: the client keeps failing to connect, which is what the error reports need.
const UNREACHABLE = 'redis://127.0.0.1:1';

describe('one Redis connection per URL per process', () => {
  it('shares the connection between holders of one URL and closes it with the last release', async () => {
    const deps = { clock: fakeClock(), log: silentLogger(), onUnreachable: 'test' };
    const a = holdRedis(UNREACHABLE, deps);
    const b = holdRedis(UNREACHABLE, deps);
    const other = holdRedis('redis://127.0.0.1:2', deps);
    expect(b.redis).toBe(a.redis);
    expect(other.redis).not.toBe(a.redis);
    a.release();
    a.release(); // a second release of the same hold changes nothing
    expect(b.redis.status).not.toBe('end');
    b.release();
    await vi.waitFor(() => expect(b.redis.status).toBe('end'), { timeout: 5_000 });
    const again = holdRedis(UNREACHABLE, deps);
    expect(again.redis).not.toBe(a.redis);
    again.release();
    other.release();
  });

  it('reports an unreachable Redis to each holder at most once a minute, and not after its release', async () => {
    const clock = fakeClock();
    const log = silentLogger();
    const error = vi.spyOn(log, 'error');
    const hold = holdRedis(UNREACHABLE, { clock, log, onUnreachable: 'limits: Redis unreachable' });
    await vi.waitFor(() => expect(error).toHaveBeenCalledTimes(1), { timeout: 5_000 });
    expect(error.mock.calls[0]?.[1]).toBe('limits: Redis unreachable');
    // Reconnect attempts fail again within the minute: no new line.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(error).toHaveBeenCalledTimes(1);
    clock.advance(61_000);
    await vi.waitFor(() => expect(error).toHaveBeenCalledTimes(2), { timeout: 5_000 });
    hold.release();
    clock.advance(61_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(error).toHaveBeenCalledTimes(2);
  });
});
