import { describe, expect, it } from 'vitest';
import { createFreshCoalescer } from './coalesce.ts';

/** A loader whose reads the test settles by hand, recording when each started. */
function manualLoader() {
  const reads: { key: string; started: number; resolve: (v: number) => void; reject: (e: Error) => void }[] = [];
  let clock = 0;
  const load = (key: string) =>
    new Promise<number>((resolve, reject) => {
      reads.push({ key, started: clock, resolve, reject });
    });
  return { reads, load, tick: () => ++clock, now: () => clock };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('fresh coalescing of account-state reads', () => {
  it('[ADM-READ-5] never answers a caller with a read that started before it arrived', async () => {
    const { reads, load, tick, now } = manualLoader();
    const coalescer = createFreshCoalescer(load);
    const first = coalescer.get('acct');
    expect(reads).toHaveLength(1);
    // A write commits here; a caller arriving now must not get the read already in flight.
    tick();
    const arrivedAt = now();
    const second = coalescer.get('acct');
    const third = coalescer.get('acct');
    expect(reads).toHaveLength(1);
    reads[0]?.resolve(1);
    expect(await first).toBe(1);
    await flush();
    // The queued read started only after the first settled, i.e. after the late callers arrived; they share it.
    expect(reads).toHaveLength(2);
    expect(reads[1]?.started).toBeGreaterThanOrEqual(arrivedAt);
    reads[1]?.resolve(2);
    expect(await second).toBe(2);
    expect(await third).toBe(2);
  });

  it('[ADM-READ-5] keeps keys apart, starts a fresh read once idle, and hands errors to the callers of that read only', async () => {
    const { reads, load } = manualLoader();
    const coalescer = createFreshCoalescer(load);
    const a = coalescer.get('a');
    const b = coalescer.get('b');
    expect(reads.map((r) => r.key)).toEqual(['a', 'b']);
    reads[0]?.reject(new Error('database down'));
    await expect(a).rejects.toThrow('database down');
    reads[1]?.resolve(7);
    expect(await b).toBe(7);
    // Idle again: the next caller starts its own read.
    const again = coalescer.get('a');
    expect(reads).toHaveLength(3);
    reads[2]?.resolve(3);
    expect(await again).toBe(3);
    // A failed read in flight does not stop the queued one.
    const inflight = coalescer.get('a');
    const queued = coalescer.get('a');
    reads[3]?.reject(new Error('timeout'));
    await expect(inflight).rejects.toThrow('timeout');
    await flush();
    reads[4]?.resolve(4);
    expect(await queued).toBe(4);
  });
});
