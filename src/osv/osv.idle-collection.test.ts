import { describe, expect, it } from 'vitest';
import { createIdleCollectionJudge, startIdleCollection, type IdleCollectionPolicy } from './osv.idle-collection.ts';

const MiB = 1024 * 1024;
const POLICY: IdleCollectionPolicy = { tickMs: 100, quietMs: 300, quietUtilization: 0.02, growthBytes: 24 * MiB, minIntervalMs: 5_000 };

/** Feeds the judge one sample per tick from `start`; the ticks at which it said to collect. */
function run(samples: readonly { utilization: number; mib: number }[], start = 0): number[] {
  const judge = createIdleCollectionJudge(POLICY);
  const due: number[] = [];
  samples.forEach((sample, tick) => {
    const at = start + tick * POLICY.tickMs;
    if (judge.observe({ at, utilization: sample.utilization, oldGenerationBytes: sample.mib * MiB })) {
      due.push(tick);
      judge.collected(at, 60 * MiB);
    }
  });
  return due;
}

const busy = (mib: number) => ({ utilization: 0.6, mib });
const quiet = (mib: number) => ({ utilization: 0.001, mib });

describe('idle collection', () => {
  it('[OSV-HEAP-IDLE] collects once the loop has been quiet for quietMs after the old generation grew by growthBytes', () => {
    // 60 MiB live, a burst promotes 30 MiB, then quiet: the last three ticks (300 ms) quiet on average.
    const due = run([busy(60), busy(75), busy(90), quiet(90), quiet(90), quiet(90), quiet(90), quiet(90)]);
    expect(due).toEqual([5]);
  });

  it('[OSV-HEAP-IDLE] does not collect while busy, when the growth is small, or when activity breaks the quiet', () => {
    expect(run([busy(60), ...Array.from({ length: 20 }, () => busy(200))])).toEqual([]);
    expect(run([busy(60), busy(80), ...Array.from({ length: 20 }, () => quiet(80))])).toEqual([]);
    // A request every third tick: no 300 ms without one.
    expect(run([busy(60), ...Array.from({ length: 20 }, (_v, i) => (i % 3 === 2 ? busy(100) : quiet(100)))])).toEqual([]);
  });

  it("[OSV-HEAP-IDLE] counts growth from V8's own last full collection, and waits minIntervalMs between its own", () => {
    // V8 collected during the burst (100 → 62 MiB): 12 MiB over the lowest size seen is below growthBytes.
    expect(run([busy(60), busy(100), busy(62), busy(72), quiet(72), quiet(72), quiet(72), quiet(72)])).toEqual([]);
    // Garbage from before V8's collection (100 → 60 MiB) does not count, the 30 MiB promoted after it does.
    expect(run([busy(100), busy(60), busy(90), quiet(90), quiet(90), quiet(90), quiet(90)])).toEqual([5]);
    // Two bursts half a second apart: the second waits out the 5 s interval, then collects.
    const bursts = [
      busy(60),
      busy(90),
      quiet(90),
      quiet(90),
      quiet(90),
      busy(95),
      busy(100),
      ...Array.from({ length: 50 }, () => quiet(100)),
    ];
    const due = run(bursts);
    expect(due[0]).toBe(4);
    expect(due[1]).toBe(4 + POLICY.minIntervalMs / POLICY.tickMs);
    expect(due).toHaveLength(2);
  });

  it('[OSV-HEAP-IDLE] in a live process, frees the promoted garbage of a burst once the loop is quiet, and logs it', async () => {
    const lines: { fields: Record<string, number>; message: string }[] = [];
    const log = { info: (fields: Record<string, number>, message: string) => void lines.push({ fields, message }) };
    const stop = startIdleCollection(log as never, {
      tickMs: 20,
      quietMs: 100,
      quietUtilization: 0.05,
      growthBytes: 16 * MiB,
      minIntervalMs: 0,
    });
    try {
      // A burst whose objects live long enough to be promoted, then die.
      let burst: { at: number; text: string }[][] | undefined = [];
      for (let round = 0; round < 8; round++) burst.push(Array.from({ length: 60_000 }, (_v, at) => ({ at, text: `row ${round} ${at}` })));
      expect(burst.flat().length).toBe(480_000);
      burst = undefined;
      const deadline = Date.now() + 10_000;
      while (lines.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      stop();
    }
    expect(lines[0]?.message).toBe('OSV heap collected while idle');
    const fields = lines[0]?.fields ?? {};
    expect((fields.old_generation_before_mib ?? 0) - (fields.old_generation_after_mib ?? 0)).toBeGreaterThanOrEqual(16);
  });
});
