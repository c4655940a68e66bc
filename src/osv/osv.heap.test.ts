import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { compactHeap, createHeapSettler } from './osv.heap.ts';

describe('compactHeap', () => {
  it('[OSV-HEAP-SETTLED] collects what nothing references any more and reports the heap before and after', () => {
    let garbage: { at: number; text: string }[] | undefined = Array.from({ length: 400_000 }, (_v, at) => ({ at, text: `row ${at}` }));
    expect(garbage.length).toBe(400_000);
    garbage = undefined;
    const compaction = compactHeap();
    expect(compaction.heap_before_mib - compaction.heap_after_mib).toBeGreaterThanOrEqual(10);
    expect(compaction.ms).toBeGreaterThanOrEqual(0);
  });

  it('[OSV-HEAP-SETTLED] leaves no gc global behind, in this context or in contexts made later', () => {
    compactHeap();
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });

  it('[OSV-HEAP-SETTLED] settling collects only when V8 holds more pages than the slack above the last live heap', () => {
    const eager = createHeapSettler(0);
    expect(eager().collected).toBe(true);
    const never = createHeapSettler(Number.MAX_SAFE_INTEGER);
    const skipped = never();
    expect(skipped.collected).toBe(false);
    expect(skipped.compaction).toBeUndefined();
    expect(skipped.heap_total_mib).toBeGreaterThan(0);
  });
});
