/** The p-th percentile (0–100) of ascending `sorted` by the nearest-rank rule; NaN for no samples. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** What `timeCalls` measured: calls completed, their rate, and latency percentiles in milliseconds. */
export interface CallTimings {
  calls: number;
  perSecond: number;
  p50: number;
  p99: number;
}

/** A closed loop: `concurrency` loops each await `call` back to back for `seconds`; every call's latency counts. */
export async function timeCalls(call: () => Promise<void>, seconds: number, concurrency = 1): Promise<CallTimings> {
  const latencies: number[] = [];
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        await call();
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { calls: latencies.length, perSecond: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}
