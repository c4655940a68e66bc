// dpkg versions (Debian, Ubuntu, opam; osv-facts.md §6; deb-version(7)): `[epoch:]upstream[-revision]`. The epoch is
// numeric; upstream and revision compare by alternating non-digit and digit runs, where in the non-digit runs `~`
// sorts before everything (even the end of the string), then the end, then letters, then all other characters; digit
// runs compare numerically. A missing revision compares like `0`.
import { COARSE_MAX, coarseKey } from './coarse.ts';
import type { CoarseTail } from './coarse.ts';
import { cmpDigits, isAllDigits, isDigitCode, isLetterCode, normDigits } from './numbers.ts';
import type { VersionOrder } from './types.ts';

/** A parsed dpkg version. */
export interface DpkgVersion {
  readonly epoch: string;
  readonly upstream: string;
  readonly revision: string;
}

/**
 * Parses a dpkg version; returns undefined when the epoch (the text before the first `:`) is not a number, e.g.
 * `1.2.3-not-a-debian:version!@#$`. Surrounding whitespace is ignored. The revision starts after the last `-`.
 */
function parseDpkg(version: string): DpkgVersion | undefined {
  let s = version.trim();
  let epoch = '0';
  const colon = s.indexOf(':');
  if (colon !== -1) {
    const e = s.slice(0, colon);
    if (!isAllDigits(e)) return undefined;
    epoch = normDigits(e);
    s = s.slice(colon + 1);
  }
  const dash = s.lastIndexOf('-');
  if (dash === -1) return { epoch, upstream: s, revision: '0' };
  return { epoch, upstream: s.slice(0, dash), revision: s.slice(dash + 1) };
}

// Sort weight of a character in a non-digit run; -1 stands for the end of the run.
function weight(c: number): number {
  if (c === 126 /* ~ */) return 1;
  if (c === -1) return 2;
  if (isLetterCode(c)) return c;
  return c + 122;
}

/** dpkg's verrevcmp over one upstream or revision string. */
function verrevcmp(a: string, b: string): number {
  if (a === b) return 0;
  let i = 0;
  let j = 0;
  const an = a.length;
  const bn = b.length;
  while (i < an || j < bn) {
    // non-digit runs, compared character by character
    while ((i < an && !isDigitCode(a.charCodeAt(i))) || (j < bn && !isDigitCode(b.charCodeAt(j)))) {
      const ac = i < an && !isDigitCode(a.charCodeAt(i)) ? a.charCodeAt(i) : -1;
      const bc = j < bn && !isDigitCode(b.charCodeAt(j)) ? b.charCodeAt(j) : -1;
      const d = weight(ac) - weight(bc);
      if (d !== 0) return d < 0 ? -1 : 1;
      if (ac !== -1) i++;
      if (bc !== -1) j++;
    }
    // digit runs, compared numerically
    let ai = i;
    while (ai < an && a.charCodeAt(ai) === 48) ai++;
    let ae = ai;
    while (ae < an && isDigitCode(a.charCodeAt(ae))) ae++;
    let bj = j;
    while (bj < bn && b.charCodeAt(bj) === 48) bj++;
    let be = bj;
    while (be < bn && isDigitCode(b.charCodeAt(be))) be++;
    if (ae - ai !== be - bj) return ae - ai < be - bj ? -1 : 1;
    for (let k = 0; k < ae - ai; k++) {
      const d = a.charCodeAt(ai + k) - b.charCodeAt(bj + k);
      if (d !== 0) return d < 0 ? -1 : 1;
    }
    i = ae;
    j = be;
  }
  return 0;
}

/** dpkg order: epoch, then upstream, then revision. */
function compareDpkg(a: DpkgVersion, b: DpkgVersion): number {
  return cmpDigits(a.epoch, b.epoch) || verrevcmp(a.upstream, b.upstream) || verrevcmp(a.revision, b.revision);
}

// Coarse key: the epoch and the leading `.`-separated numbers of upstream. At the first other separator the rest
// of the key is 0 when that separator sorts below `.` (e.g. `~`, `+`, letters) and the maximum when it sorts above
// it (e.g. `:`, `_`, `.a`), so the key stays monotonic.
function dpkgCoarse(v: DpkgVersion): string {
  if (v.epoch.length > 2) return COARSE_MAX;
  const s = v.upstream;
  const n = s.length;
  const parts: string[] = [];
  let i = 0;
  let tail: CoarseTail = 'zero';
  if (n > 0 && !isDigitCode(s.charCodeAt(0))) {
    // a leading non-digit run: `~` sorts below every digit-led upstream, anything else above
    return coarseKey(v.epoch, parts, s.charCodeAt(0) === 126 ? 'zero' : 'max');
  }
  while (i < n && parts.length < 3) {
    let j = i;
    while (j < n && isDigitCode(s.charCodeAt(j))) j++;
    parts.push(normDigits(s.slice(i, j)));
    if (j >= n || parts.length === 3) break;
    // the separator run s[j, k)
    let k = j;
    while (k < n && !isDigitCode(s.charCodeAt(k))) k++;
    const first = s.charCodeAt(j);
    if (first !== 46 /* . */) {
      tail = weight(first) < weight(46) ? 'zero' : 'max';
      break;
    }
    if (k > j + 1) {
      tail = s.charCodeAt(j + 1) === 126 ? 'zero' : 'max';
      break;
    }
    i = k;
  }
  return coarseKey(v.epoch, parts, tail);
}

/** dpkg version order. */
export const dpkgOrder: VersionOrder<DpkgVersion> = {
  parse: parseDpkg,
  compare: compareDpkg,
  coarse: dpkgCoarse,
};
