// CRAN (R `package_version`, osv-facts.md §6): numbers separated by `.` or `-` (both weigh the same); when the
// common components are equal the longer version is greater (`0.1.0 < 0.1.0.0`). Anything else is invalid.
import { cmpPadded, isDigitCode, normDigits } from './numbers.ts';
import { coarseOfComponents } from './semver.ts';
import type { VersionOrder } from './types.ts';

/** A parsed CRAN version: its numeric components. */
export interface CranVersion {
  readonly components: readonly string[];
}

/** Parses `1.2-3`; returns undefined for empty components or non-digits. The empty string is accepted (no components). */
function parseCran(version: string): CranVersion | undefined {
  if (version === '') return { components: [] };
  const components: string[] = [];
  let start = 0;
  for (let i = 0; i <= version.length; i++) {
    const c = i < version.length ? version.charCodeAt(i) : 46;
    if (c === 46 /* . */ || c === 45 /* - */) {
      if (i === start) return undefined;
      components.push(normDigits(version.slice(start, i)));
      start = i + 1;
    } else if (!isDigitCode(c)) {
      return undefined;
    }
  }
  return { components };
}

/** CRAN version order. */
export const cranOrder: VersionOrder<CranVersion> = {
  parse: parseCran,
  compare(a, b) {
    const d = cmpPadded(a.components, b.components);
    if (d !== 0) return d;
    const n = a.components.length - b.components.length;
    return n < 0 ? -1 : n > 0 ? 1 : 0;
  },
  coarse: (v) => coarseOfComponents(v.components),
};
