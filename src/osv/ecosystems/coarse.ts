// Coarse version keys (osv-facts.md §6): `EE:XXXXXXXX.YYYYYYYY.ZZZZZZZZ`, a 2-digit epoch and three 8-digit numeric
// parts. The key is a range-index prefilter (`coarse_min <= coarse(v) <= coarse_max`), so it only has to be
// monotonic non-decreasing in the ecosystem's order; it need not tell versions apart.

/** The key of the `0` sentinel and of everything that sorts below the first numeric part. */
export const COARSE_ZERO = '00:00000000.00000000.00000000';
/** The largest key. */
export const COARSE_MAX = '99:99999999.99999999.99999999';

const PART_MAX = '99999999';
const PAD = '00000000';

/** What fills the parts after the last known one: zeros, or the maximum (for a tail that sorts above any number). */
export type CoarseTail = 'zero' | 'max';

/**
 * Builds a coarse key from a normalised epoch and up to three normalised numeric parts (digit strings without leading
 * zeros). Missing parts are filled per `tail`. A value too wide for its field saturates that field and every field
 * after it, which keeps the mapping monotonic for lexicographically compared numbers.
 */
export function coarseKey(epoch: string, parts: readonly string[], tail: CoarseTail = 'zero'): string {
  if (epoch.length > 2) return COARSE_MAX;
  let out = epoch.length === 2 ? epoch : '0' + epoch;
  out += ':';
  let saturated = false;
  for (let i = 0; i < 3; i++) {
    if (i > 0) out += '.';
    if (saturated) {
      out += PART_MAX;
      continue;
    }
    const p = parts[i];
    if (p === undefined) {
      out += tail === 'max' ? PART_MAX : PAD;
    } else if (p.length > 8) {
      saturated = true;
      out += PART_MAX;
    } else {
      out += PAD.slice(p.length) + p;
    }
  }
  return out;
}
