// Maven (osv-facts.md §6), following the POM reference "Version Order Specification" as OSV's comparator does:
// the version is split into tokens at `.`, `-` and digit/letter transitions (a transition acts as `-`), each token
// remembering its separator; trailing "null" tokens (0, "", final, ga, release) are trimmed, also before every `-`;
// then tokens compare pairwise, the shorter list padded with nulls. So `1 == 1.0 == 1.ga`, `1-SNAPSHOT < 1`,
// `1.0-alpha-1 < 1.0`, and `.qualifier < -qualifier < -number < .number` when separators differ.
import { COARSE_ZERO, coarseKey } from './coarse.ts';
import { cmpDigits, cmpStr, isDigitCode, normDigits } from './numbers.ts';
import type { VersionOrder } from './types.ts';

type Prefix = '' | '.' | '-';

/** One token of a Maven version. */
interface MavenToken {
  readonly prefix: Prefix;
  readonly value: string;
  /** True when value is all digits. */
  readonly num: boolean;
  /** True for padding tokens, which never beat a qualifier just for being numeric. */
  readonly isNull: boolean;
}

/** A parsed Maven version: its normalised tokens (at least one). */
export interface MavenVersion {
  readonly tokens: readonly MavenToken[];
}

const KEYWORDS = ['alpha', 'beta', 'milestone', 'rc', 'snapshot', '', 'sp'];

function token(prefix: Prefix, value: string): MavenToken {
  return { prefix, value, num: value.length > 0 && isDigitCode(value.charCodeAt(0)), isNull: false };
}

// `raw` is already lower-case (qualifiers are case-insensitive).
function normalizePiece(raw: string, followed: boolean): string {
  let v = raw;
  if (v === '') return '0';
  if (v === 'cr') return 'rc';
  if (v === 'ga' || v === 'final' || v === 'release') return '';
  // a, b and m abbreviate alpha, beta and milestone only when a number follows directly
  if (followed) {
    if (v === 'a') return 'alpha';
    if (v === 'b') return 'beta';
    if (v === 'm') return 'milestone';
  }
  if (isDigitCode(v.charCodeAt(0))) v = normDigits(v);
  return v;
}

function isNullValue(v: string): boolean {
  return v === '0' || v === '' || v === 'final' || v === 'ga';
}

/** Tokenises and normalises a Maven version. Accepts any string. */
function parseMaven(input: string): MavenVersion {
  const version = input.toLowerCase();
  const tokens: MavenToken[] = [];
  let prefix: Prefix = '';
  let start = 0;
  const n = version.length;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? version.charCodeAt(i) : -1;
    if (c !== 46 && c !== 45 && c !== -1) continue;
    // raw token [start, i), split at digit/non-digit transitions; later pieces count as `-`-separated
    let pieceStart = start;
    let piecePrefix = prefix;
    for (let j = start + 1; j <= i; j++) {
      const boundary = j === i || isDigitCode(version.charCodeAt(j)) !== isDigitCode(version.charCodeAt(j - 1));
      if (!boundary) continue;
      tokens.push(token(piecePrefix, normalizePiece(version.slice(pieceStart, j), j !== i)));
      piecePrefix = '-';
      pieceStart = j;
    }
    if (start === i) tokens.push(token(piecePrefix, '0')); // an empty raw token reads as 0
    prefix = c === 46 ? '.' : '-';
    start = i + 1;
  }
  // Trim trailing nulls, and again before each `-` going backwards.
  let i = tokens.length - 1;
  while (i > 0) {
    if (isNullValue((tokens[i] as MavenToken).value)) {
      tokens.splice(i, 1);
      i--;
      continue;
    }
    while (i >= 0 && (tokens[i] as MavenToken).prefix !== '-') i--;
    i--;
  }
  return { tokens };
}

// The padding token for the other side's token: 0 after `.` (or "" when the other is `sp`, the only qualifier
// above the empty one), "" after `-`.
function nullFor(other: MavenToken): MavenToken {
  if (other.prefix === '-') return { prefix: '-', value: '', num: false, isNull: true };
  const value = other.value === 'sp' ? '' : '0';
  return { prefix: '.', value, num: value === '0', isNull: true };
}

function keywordIndex(v: string): number {
  const k = KEYWORDS.indexOf(v);
  return k === -1 ? KEYWORDS.length : k;
}

// `.qualifier` < `-qualifier` < `-number` < `.number`
function separatorOrder(t: MavenToken): number {
  if (t.num) return t.prefix === '-' ? 2 : 3;
  return t.prefix === '-' ? 1 : 0;
}

function tokenLess(v: MavenToken, w: MavenToken): boolean {
  if (v.prefix !== w.prefix) return separatorOrder(v) < separatorOrder(w);
  if (v.num && w.num) return cmpDigits(v.value, w.value) < 0;
  // numbers sort after qualifiers, unless the number is padding
  if (v.num && !v.isNull) return false;
  if (w.num && !w.isNull) return true;
  const l = keywordIndex(v.value);
  const r = keywordIndex(w.value);
  if (l === KEYWORDS.length && r === KEYWORDS.length) return cmpStr(v.value, w.value) < 0;
  return l < r;
}

/** Maven order. */
function compareMaven(a: MavenVersion, b: MavenVersion): number {
  const at = a.tokens;
  const bt = b.tokens;
  const n = at.length > bt.length ? at.length : bt.length;
  for (let i = 0; i < n; i++) {
    const ai = at[i];
    const bi = bt[i];
    const left = ai ?? nullFor(bi as MavenToken);
    const right = bi ?? nullFor(ai as MavenToken);
    if (left.prefix === right.prefix && left.value === right.value) continue;
    return tokenLess(left, right) ? -1 : 1;
  }
  // Equal after padding. Trimming removes trailing nulls, so lists of different length do not get here in
  // practice; upstream answers "greater" for them, and so do we.
  return at.length === bt.length ? 0 : 1;
}

/** True for versions that equal `0` (`0`, `0.0`, `0-final-ga`, the empty string). */
export function isMavenZero(v: MavenVersion): boolean {
  return v.tokens.length === 1 && (v.tokens[0] as MavenToken).value === '0';
}

/** Maven version order. Accepts any string. */
export const mavenOrder: VersionOrder<MavenVersion> = {
  parse: parseMaven,
  compare: compareMaven,
  // Leading `.`-separated numbers only: any qualifier or `-` token at a position sorts below a `.number` there.
  coarse(v) {
    const parts: string[] = [];
    for (let i = 0; i < v.tokens.length && parts.length < 3; i++) {
      const t = v.tokens[i] as MavenToken;
      if (!t.num || (i > 0 && t.prefix !== '.')) break;
      parts.push(t.value);
    }
    return parts.length === 0 ? COARSE_ZERO : coarseKey('0', parts);
  },
};
