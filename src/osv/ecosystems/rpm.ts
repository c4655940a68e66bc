// RPM versions (Red Hat, AlmaLinux, Rocky Linux, SUSE, openSUSE, openEuler, Mageia, Azure Linux; osv-facts.md §6):
// `[epoch:]version[-release]`, each part compared with rpmvercmp. Only an all-digit prefix before the first `:` is
// an epoch (`1.m+e2:1` has none); the release starts at the first `-` and keeps it, so `1 < 1-` and `1 < 1-0`.
// Every string parses.
import { coarseKey } from './coarse.ts';
import { isAllDigits, isDigitCode, isLetterCode, normDigits } from './numbers.ts';
import type { VersionOrder } from './types.ts';

/** A parsed RPM version. */
export interface RpmVersion {
  readonly epoch: string;
  readonly version: string;
  readonly release: string;
}

/** Splits `[epoch:]version[-release]`. */
function parseRpm(input: string): RpmVersion {
  let epoch = '0';
  let vr = input;
  const colon = input.indexOf(':');
  if (colon !== -1) {
    const e = input.slice(0, colon);
    if (e === '' || isAllDigits(e)) {
      epoch = e === '' ? '0' : e;
      vr = input.slice(colon + 1);
    }
  }
  const dash = vr.indexOf('-');
  if (dash === -1) return { epoch, version: vr, release: '' };
  return { epoch, version: vr.slice(0, dash), release: vr.slice(dash) };
}

function isAlnum(c: number): boolean {
  return isDigitCode(c) || isLetterCode(c);
}

// Characters rpmvercmp skips: everything but ASCII letters, digits, `~` and `^`.
function skipped(c: number): boolean {
  return !isAlnum(c) && c !== 126 && c !== 94;
}

/** rpmvercmp(3) on one epoch, version or release string. */
function rpmvercmp(a: string, b: string): number {
  if (a === b) return 0;
  if (a === '') return -1;
  if (b === '') return 1;
  const an = a.length;
  const bn = b.length;
  let i = 0;
  let j = 0;
  for (;;) {
    while (i < an && skipped(a.charCodeAt(i))) i++;
    while (j < bn && skipped(b.charCodeAt(j))) j++;
    // `~` sorts before everything, even the end
    const at = i < an && a.charCodeAt(i) === 126;
    const bt = j < bn && b.charCodeAt(j) === 126;
    if (at || bt) {
      if (at && bt) {
        i++;
        j++;
        continue;
      }
      return at ? -1 : 1;
    }
    // `^` sorts after the end but before anything else
    const ac = i < an && a.charCodeAt(i) === 94;
    const bc = j < bn && b.charCodeAt(j) === 94;
    if (ac || bc) {
      if (ac && bc) {
        i++;
        j++;
        continue;
      }
      if (ac) return j === bn ? 1 : -1;
      return i === an ? -1 : 1;
    }
    if (i === an || j === bn) break;
    const digits = isDigitCode(a.charCodeAt(i));
    const inRun = digits ? isDigitCode : isLetterCode;
    let ie = i;
    while (ie < an && inRun(a.charCodeAt(ie))) ie++;
    let je = j;
    while (je < bn && inRun(b.charCodeAt(je))) je++;
    // a numeric segment is newer than an alphabetic one
    if (je === j) return digits ? 1 : -1;
    let d: number;
    if (digits) {
      const x = normDigits(a.slice(i, ie));
      const y = normDigits(b.slice(j, je));
      d = x.length !== y.length ? x.length - y.length : x < y ? -1 : x > y ? 1 : 0;
    } else {
      const x = a.slice(i, ie);
      const y = b.slice(j, je);
      d = x < y ? -1 : x > y ? 1 : 0;
    }
    if (d !== 0) return d < 0 ? -1 : 1;
    i = ie;
    j = je;
  }
  // whichever still has characters left is newer
  const al = an - i;
  const bl = bn - j;
  return al === bl ? 0 : al > bl ? 1 : -1;
}

/** RPM order: epoch, version, release. */
function compareRpm(a: RpmVersion, b: RpmVersion): number {
  return rpmvercmp(a.epoch, b.epoch) || rpmvercmp(a.version, b.version) || rpmvercmp(a.release, b.release);
}

/** RPM version order. Accepts any string. */
export const rpmOrder: VersionOrder<RpmVersion> = {
  parse: parseRpm,
  compare: compareRpm,
  // The epoch and the leading numeric segments of the version; an alphabetic segment, `~`, `^` or the end sorts
  // below any number at its position, so the key stops there with zeros.
  coarse(v) {
    const s = v.version;
    const n = s.length;
    const parts: string[] = [];
    let i = 0;
    while (parts.length < 3) {
      while (i < n && skipped(s.charCodeAt(i))) i++;
      if (i === n || !isDigitCode(s.charCodeAt(i))) break;
      let j = i + 1;
      while (j < n && isDigitCode(s.charCodeAt(j))) j++;
      parts.push(normDigits(s.slice(i, j)));
      i = j;
    }
    return coarseKey(normDigits(v.epoch), parts);
  },
};
