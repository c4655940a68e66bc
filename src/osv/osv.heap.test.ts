import { spawnSync } from 'node:child_process';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { compactHeap, createHeapSettler } from './osv.heap.ts';

/**
 * How many of a million objects made by one object literal, all kept alive, V8 allocated straight into the old
 * generation, in a fresh process (`%InYoungGeneration` needs --allow-natives-syntax, and the flag is process-wide).
 */
function pretenuredOfAMillion(tune: boolean): number {
  const module = new URL('./osv.heap.ts', import.meta.url).href;
  const script = `
    const { tuneReplicaHeap } = await import(${JSON.stringify(module)});
    if (${tune}) tuneReplicaHeap();
    const keep = [];
    const make = (i) => ({ a: i, b: i + 1, c: [i] });
    let old = 0;
    for (let i = 0; i < 1_000_000; i++) {
      const o = make(i);
      keep.push(o);
      if (!%InYoungGeneration(o)) old++;
    }
    console.log(old);`;
  // V8 decides on pretenuring only in young-generation collections at the young generation's largest size; a fixed
  // 1 MiB semi-space is at its largest from the start, so the decision does not depend on how V8 grew it (on a loaded
  // machine it had not grown at all in one run, and nothing was pretenured).
  const flags = ['--allow-natives-syntax', '--max-semi-space-size=1', '--min-semi-space-size=1'];
  const run = spawnSync(process.execPath, [...flags, '--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  expect(run.stderr).toBe('');
  return Number(run.stdout.trim());
}

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

  it('[OSV-HEAP-PRETENURING] a tuned process allocates long-lived literals in the young generation, an untuned one pretenures them', () => {
    // Without the tuning V8 sees every object of the literal survive and allocates the later ones in the old
    // generation; that is what made the objects of every Query go there after a QueryBatch (docs/osv.md).
    expect(pretenuredOfAMillion(false)).toBeGreaterThan(100_000);
    expect(pretenuredOfAMillion(true)).toBe(0);
  });
});
