/** The p-th percentile (0–100) of ascending `sorted` by the nearest-rank rule; NaN for no samples. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
