// RubyGems (`Gem::Version`, osv-facts.md §6): `-` reads as `.pre.`; the version is the list of digit runs and letter
// runs; trailing zeros are dropped from the numeric head and from the rest; then segments compare pairwise
// (missing = 0), numbers numerically, strings by byte, and a string sorts below a number (`1.0.a < 1.0`).
import { cmpDigits, cmpStr, isDigitCode, isLetterCode, normDigits } from './numbers.ts';
import { coarseKey } from './coarse.ts';
import type { VersionOrder } from './types.ts';

/** A parsed RubyGems version: canonical segments; a segment is numeric when it starts with a digit. */
export interface RubyGemsVersion {
  readonly segments: readonly string[];
}

function dropTrailingZeros(segs: string[], from: number, to: number): string[] {
  let end = to;
  while (end > from && segs[end - 1] === '0') end--;
  return segs.slice(from, end);
}

/** Parses a gem version. Accepts any string (Gem::Version would reject some; upstream OSV does not). */
function parseRubyGems(version: string): RubyGemsVersion {
  const s = version.trim().replaceAll('-', '.pre.');
  const segs: string[] = [];
  let firstString = -1;
  const n = s.length;
  let i = 0;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (isDigitCode(c)) {
      let j = i + 1;
      while (j < n && isDigitCode(s.charCodeAt(j))) j++;
      segs.push(normDigits(s.slice(i, j)));
      i = j;
    } else if (isLetterCode(c)) {
      let j = i + 1;
      while (j < n && isLetterCode(s.charCodeAt(j))) j++;
      if (firstString === -1) firstString = segs.length;
      segs.push(s.slice(i, j));
      i = j;
    } else {
      i++;
    }
  }
  if (firstString === -1) return { segments: dropTrailingZeros(segs, 0, segs.length) };
  return { segments: [...dropTrailingZeros(segs, 0, firstString), ...dropTrailingZeros(segs, firstString, segs.length)] };
}

/** Gem::Version#<=>. */
function compareRubyGems(a: RubyGemsVersion, b: RubyGemsVersion): number {
  const as = a.segments;
  const bs = b.segments;
  const n = as.length > bs.length ? as.length : bs.length;
  for (let i = 0; i < n; i++) {
    const l = as[i] ?? '0';
    const r = bs[i] ?? '0';
    if (l === r) continue;
    const ln = isDigitCode(l.charCodeAt(0));
    const rn = isDigitCode(r.charCodeAt(0));
    if (ln !== rn) return ln ? 1 : -1;
    return ln ? cmpDigits(l, r) : cmpStr(l, r);
  }
  return 0;
}

/** RubyGems version order. Accepts any string. */
export const rubyGemsOrder: VersionOrder<RubyGemsVersion> = {
  parse: parseRubyGems,
  compare: compareRubyGems,
  // The numeric head: a string segment sorts below any number at its position.
  coarse(v) {
    const parts: string[] = [];
    for (const s of v.segments) {
      if (parts.length === 3 || !isDigitCode(s.charCodeAt(0))) break;
      parts.push(s);
    }
    return coarseKey('0', parts);
  },
};
