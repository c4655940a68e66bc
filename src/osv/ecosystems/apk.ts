// apk-tools versions (Alpine, Alpaquita, BellSoft Hardened Containers, Chainguard, CleanStart, MinimOS, Wolfi;
// osv-facts.md §6): `number{.number}...{letter}{_suffix{number}}...{~hash}{-r#}` where the suffixes order
// alpha < beta < pre < rc < (none) < cvs < svn < git < hg < p. apk compares up to the first token it cannot read
// and then ranks the leftover ("junk") by where it started; the rules below reproduce apk's observable answers as
// pinned by the alpine fixtures (e.g. `1.2.0A < 1.2.0d`, `1 > 1-ruff`, `0..8 > 0...8`, `1.0 < 1.0bc`).
// The order is not transitive for such junk, which is why apk ecosystems have no coarse key.
import { cmpDigits, cmpStr, isDigitCode, normDigits } from './numbers.ts';
import type { VersionOrder } from './types.ts';

const enum Part {
  Numeric,
  Letter,
  Suffix,
  Hash,
  Build,
}

interface NumberComponent {
  /** The digits as written ('' for an empty component between dots). */
  readonly original: string;
  /** Normalised value, undefined for an empty component. */
  readonly value: string | undefined;
  /** True for an empty component at the very end (`1.`). */
  readonly trailing: boolean;
}

interface LetterComponent {
  readonly letter: string;
  readonly number: string | undefined;
}

interface Suffix {
  readonly weight: number;
  readonly number: string;
}

/** A parsed apk version. */
export interface ApkVersion {
  readonly components: readonly NumberComponent[];
  readonly letters: readonly LetterComponent[];
  readonly suffixes: readonly Suffix[];
  readonly build: string;
  /** Unparsed rest of the string ('' when the whole version was understood). */
  readonly remainder: string;
  /** The last part that parsed before the remainder. */
  readonly last: Part;
}

// Suffix names in the order tried (first match wins, so `pre` before `p`) with their sort weights;
// weight 4 is "no suffix".
const SUFFIXES: readonly (readonly [string, number])[] = [
  ['alpha', 0],
  ['beta', 1],
  ['pre', 2],
  ['rc', 3],
  ['cvs', 5],
  ['svn', 6],
  ['git', 7],
  ['hg', 8],
  ['p', 9],
];
const NO_SUFFIX: Suffix = { weight: 4, number: '0' };

function isLower(c: number): boolean {
  return c >= 97 && c <= 122;
}

function isHex(c: number): boolean {
  return isDigitCode(c) || (c >= 97 && c <= 102);
}

/** Parses an apk version. Every string parses; unreadable text is kept as the remainder. */
function parseApk(version: string): ApkVersion {
  // A leading 0 changes nothing (`.0 == 0.0 == 00.0`) and makes the first component always present.
  const s = '0' + version;
  const n = s.length;
  let i = 0;
  while (i < n && (isDigitCode(s.charCodeAt(i)) || s.charCodeAt(i) === 46)) i++;
  const raw = s.slice(0, i).split('.');
  const components: NumberComponent[] = raw.map((d, k) =>
    d === '' ? { original: '', value: undefined, trailing: k === raw.length - 1 } : { original: d, value: normDigits(d), trailing: false },
  );
  let last = Part.Numeric;

  // letters: ([a-z]\d+)*([a-z]\d*) — chunks of a letter and digits; a chunk without digits ends the run
  const letters: LetterComponent[] = [];
  while (i < n && isLower(s.charCodeAt(i))) {
    let j = i + 1;
    while (j < n && isDigitCode(s.charCodeAt(j))) j++;
    letters.push({ letter: s[i] as string, number: j > i + 1 ? normDigits(s.slice(i + 1, j)) : undefined });
    last = Part.Letter;
    const noDigits = j === i + 1;
    i = j;
    if (noDigits) break;
  }

  // suffixes: every `_name\d*` anywhere in the rest counts, but only leading ones are consumed (as upstream)
  let rest = s.slice(i);
  const suffixes: Suffix[] = [];
  let consumed = 0;
  for (let k = rest.indexOf('_'); k !== -1; k = rest.indexOf('_', k)) {
    let matched = false;
    for (const [name, weight] of SUFFIXES) {
      if (!rest.startsWith(name, k + 1)) continue;
      let e = k + 1 + name.length;
      const ds = e;
      while (e < rest.length && isDigitCode(rest.charCodeAt(e))) e++;
      suffixes.push({ weight, number: normDigits(rest.slice(ds, e)) });
      last = Part.Suffix;
      if (k === consumed) consumed = e;
      k = e;
      matched = true;
      break;
    }
    if (!matched) k++;
  }
  rest = rest.slice(consumed);

  // hash: ~[0-9a-f]+
  if (rest.charCodeAt(0) === 126 && rest.length > 1 && isHex(rest.charCodeAt(1))) {
    let e = 2;
    while (e < rest.length && isHex(rest.charCodeAt(e))) e++;
    rest = rest.slice(e);
    last = Part.Hash;
  }

  // build: -r\d*
  let build = '0';
  if (rest.startsWith('-r')) {
    let e = 2;
    while (e < rest.length && isDigitCode(rest.charCodeAt(e))) e++;
    build = normDigits(rest.slice(2, e));
    rest = rest.slice(e);
    last = Part.Build;
  }
  return { components, letters, suffixes, build, remainder: rest, last };
}

function compareNumber(a: NumberComponent, b: NumberComponent, index: number): number {
  if (index !== 0) {
    // empty components: a trailing one is lowest, an inner one sits between 0 and 1
    if (a.value === undefined) {
      if (b.value === undefined) return a.trailing === b.trailing ? 0 : a.trailing ? -1 : 1;
      if (a.trailing) return -1;
      return b.value === '0' ? 1 : -1;
    }
    if (b.value === undefined) {
      if (b.trailing) return 1;
      return a.value === '0' ? -1 : 1;
    }
    // after the first component a leading zero makes the comparison textual (`1.01 < 1.1`, apk's "fractional" rule)
    if (a.original.charCodeAt(0) === 48 || b.original.charCodeAt(0) === 48) return cmpStr(a.original, b.original);
  }
  return cmpDigits(a.value ?? '0', b.value ?? '0');
}

function compareComponents(a: ApkVersion, b: ApkVersion): number {
  const n = Math.min(a.components.length, b.components.length);
  for (let k = 0; k < n; k++) {
    const d = compareNumber(a.components[k] as NumberComponent, b.components[k] as NumberComponent, k);
    if (d !== 0) return d;
  }
  if (a.components.length === b.components.length) return 0;
  // The longer one wins, unless what it has more is a dangling `.` before letters (`0.r1 < 0r2`, fixture).
  const longer = a.components.length > b.components.length ? a : b;
  const extra = longer.components[n] as NumberComponent;
  const longerWins = !(extra.value === undefined && extra.trailing);
  return (longer === a) === longerWins ? 1 : -1;
}

function compareLetters(a: ApkVersion, b: ApkVersion): number {
  const n = Math.min(a.letters.length, b.letters.length);
  for (let k = 0; k < n; k++) {
    const x = a.letters[k] as LetterComponent;
    const y = b.letters[k] as LetterComponent;
    const d = cmpStr(x.letter, y.letter);
    if (d !== 0) return d;
    if (x.number === undefined) {
      if (y.number !== undefined) return -1;
      continue;
    }
    if (y.number === undefined) return 1;
    const e = cmpDigits(x.number, y.number);
    if (e !== 0) return e;
  }
  return a.letters.length === b.letters.length ? 0 : a.letters.length < b.letters.length ? -1 : 1;
}

function compareSuffixes(a: ApkVersion, b: ApkVersion): number {
  const n = Math.max(a.suffixes.length, b.suffixes.length);
  for (let k = 0; k < n; k++) {
    const x = a.suffixes[k] ?? NO_SUFFIX;
    const y = b.suffixes[k] ?? NO_SUFFIX;
    if (x.weight !== y.weight) return x.weight < y.weight ? -1 : 1;
    const d = cmpDigits(x.number, y.number);
    if (d !== 0) return d;
  }
  return 0;
}

// Junk right after the numbers, against a version that ended cleanly: lower (`1.2.0A < 1.2.0d`,
// `1.2 > 1.2_blah`), except that a lone `_` after the numbers ranks above them.
function numericJunk(v: ApkVersion, w: ApkVersion): number {
  if (v.remainder !== '' && v.last === Part.Numeric && w.remainder === '') {
    if (w.last === Part.Letter) return -1;
    if (w.last === Part.Numeric) return v.remainder === '_' ? 1 : -1;
  }
  return 0;
}

// Junk right after the letters, against a version that ended cleanly after letters.
function letterJunk(v: ApkVersion, w: ApkVersion): number {
  return v.remainder !== '' && v.last === Part.Letter && w.remainder === '' && w.last === Part.Letter ? -1 : 0;
}

// Everything readable is equal: a version with unreadable junk is lower than one without (`1-r-0 < 1-r0`,
// `1 > 1-ruff`), and two versions with junk are equal (`1-ruff2 = 1--ruff1`).
function compareRemainders(v: ApkVersion, w: ApkVersion): number {
  if (v.remainder === '') return w.remainder === '' ? 0 : 1;
  return w.remainder === '' ? -1 : 0;
}

/** apk order (commit hashes are ignored). */
function compareApk(a: ApkVersion, b: ApkVersion): number {
  return (
    compareComponents(a, b) ||
    numericJunk(a, b) ||
    -numericJunk(b, a) ||
    compareLetters(a, b) ||
    letterJunk(a, b) ||
    -letterJunk(b, a) ||
    compareSuffixes(a, b) ||
    cmpDigits(a.build, b.build) ||
    compareRemainders(a, b)
  );
}

/** apk version order; no coarse key (the order is not transitive for malformed versions). */
export const apkOrder: VersionOrder<ApkVersion> = {
  parse: parseApk,
  compare: compareApk,
};
