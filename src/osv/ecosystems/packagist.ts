// Packagist (osv-facts.md §6): PHP `version_compare` over a canonical form, as OSV's comparator does it: a leading
// `v`/`V` is dropped, `-`, `_` and `+` become `.`, and a `.` is inserted between a digit and a non-digit. Components
// then compare numerically, or by their special-form weight: dev < alpha/a < beta/b < RC/rc < number (`#`) <
// pl/p, unknown words counting as `dev`. A longer version wins when its next component is a number, otherwise the
// rest is compared against `#` (so `1.0.0 > 1.0` but `1.0-rc < 1.0`).
import { coarseKey } from './coarse.ts';
import { cmpDigits, isDigitCode, normDigits } from './numbers.ts';
import type { VersionOrder } from './types.ts';

/** A parsed Packagist version: canonical components, numbers normalised. */
export interface PackagistVersion {
  readonly components: readonly string[];
}

/** Canonicalises and splits a version. Accepts any string. */
function parsePackagist(version: string): PackagistVersion {
  let s = version;
  if (s.charCodeAt(0) === 118 /* v */) s = s.slice(1);
  if (s.charCodeAt(0) === 86 /* V */) s = s.slice(1);
  const components: string[] = [];
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46 || c === 45 || c === 95 || c === 43) {
      // . - _ +  all separate components
      components.push(finish(s.slice(start, i)));
      start = i + 1;
    } else if (i > start && isDigitCode(c) !== isDigitCode(s.charCodeAt(i - 1))) {
      // a digit/non-digit transition inside a component separates too
      components.push(finish(s.slice(start, i)));
      start = i;
    }
  }
  components.push(finish(s.slice(start)));
  return { components };
}

function finish(part: string): string {
  return part.length > 0 && isDigitCode(part.charCodeAt(0)) ? normDigits(part) : part;
}

function isNum(part: string): boolean {
  return part.length > 0 && isDigitCode(part.charCodeAt(0));
}

// PHP's special forms, matched as prefixes; a number weighs as `#`.
function weight(part: string): number {
  if (part.startsWith('RC')) return 3;
  if (part.startsWith('dev')) return 0;
  if (part.startsWith('a')) return 1;
  if (part.startsWith('b')) return 2;
  if (part.startsWith('rc')) return 3;
  if (part.startsWith('#')) return 4;
  if (part.startsWith('p')) return 5;
  return 0;
}

const NUMBER_WEIGHT = 4;

function compareFrom(a: readonly string[], ai: number, b: readonly string[], bi: number): number {
  while (ai < a.length && bi < b.length) {
    const x = a[ai] as string;
    const y = b[bi] as string;
    const xn = isNum(x);
    const yn = isNum(y);
    let d: number;
    if (xn && yn) d = cmpDigits(x, y);
    else {
      const wx = xn ? NUMBER_WEIGHT : weight(x);
      const wy = yn ? NUMBER_WEIGHT : weight(y);
      d = wx < wy ? -1 : wx > wy ? 1 : 0;
    }
    if (d !== 0) return d;
    ai++;
    bi++;
  }
  if (ai < a.length) return isNum(a[ai] as string) ? 1 : compareFrom(a, ai, HASH, 0);
  if (bi < b.length) return isNum(b[bi] as string) ? -1 : compareFrom(HASH, 0, b, bi);
  return 0;
}

const HASH = ['#'];

/** Packagist order. */
function comparePackagist(a: PackagistVersion, b: PackagistVersion): number {
  return compareFrom(a.components, 0, b.components, 0);
}

/** Packagist version order. Accepts any string. */
export const packagistOrder: VersionOrder<PackagistVersion> = {
  parse: parsePackagist,
  compare: comparePackagist,
  // Leading numbers; a p/pl component sorts above every number at its position (max tail), a lower form below
  // (zero tail). `#` equals every number, which no key can honour; it gets the zero tail.
  coarse(v) {
    const parts: string[] = [];
    for (const c of v.components) {
      if (parts.length === 3) break;
      if (isNum(c)) {
        parts.push(c);
        continue;
      }
      return coarseKey('0', parts, weight(c) > NUMBER_WEIGHT ? 'max' : 'zero');
    }
    return coarseKey('0', parts);
  },
};
