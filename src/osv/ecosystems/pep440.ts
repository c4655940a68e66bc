// PyPI versions (PEP 440, osv-facts.md §6). Strings that are not PEP 440 are parsed the way pre-PEP 440 setuptools
// ("legacy") versions were, and every legacy version sorts below every PEP 440 version: the fixtures
// (pypi-versions.txt, "legacy versions") require `0.9-ivysaur < 1.0` and `2.0.1rc2-git < 0.8`.
import { COARSE_ZERO, coarseKey } from './coarse.ts';
import { cmpDigits, cmpPadded, cmpStr, isDigitCode, normDigits } from './numbers.ts';
import type { VersionOrder } from './types.ts';

/** A parsed PyPI version. */
export interface Pep440Version {
  /** Set for legacy (non-PEP 440) versions: the normalised parts joined, compared as a string. */
  readonly legacy: string | undefined;
  readonly epoch: string;
  readonly release: readonly string[];
  /** `a`, `b` or `rc` and its number. */
  readonly preLabel: string | undefined;
  readonly preNumber: string;
  readonly post: string | undefined;
  readonly dev: string | undefined;
  /** Local version label segments, lower-case. */
  readonly local: readonly string[];
}

// PEP 440 Appendix B, lower-case input; whitespace is RE2's \s. Compiled once.
const PEP440 =
  /^[ \t\n\f\r]*v?(?:(?:([0-9]+)!)?([0-9]+(?:\.[0-9]+)*)([-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?([0-9]+)?)?((?:-([0-9]+))|(?:[-_.]?(post|rev|r)[-_.]?([0-9]+)?))?([-_.]?(dev)[-_.]?([0-9]+)?)?)(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?[ \t\n\f\r]*$/;
const LEGACY_PART = /\d+|[a-z]+|\.|-/g;

function normalizePre(label: string): string {
  switch (label) {
    case 'alpha':
      return 'a';
    case 'beta':
      return 'b';
    case 'c':
    case 'pre':
    case 'preview':
      return 'rc';
    default:
      return label;
  }
}

// setuptools' legacy scheme: numbers zero-padded to 8 for string comparison, words prefixed with `*`,
// pre-release words mapped below `*final`, trailing zeros and `*final-` markers dropped before a word.
function legacyKey(lower: string): string {
  const parts: string[] = [];
  const matches: string[] = lower.match(LEGACY_PART) ?? [];
  matches.push('final');
  for (const raw of matches) {
    if (raw === '.') continue;
    let part: string;
    if (isDigitCode(raw.charCodeAt(0))) {
      part = raw.length >= 8 ? raw : '00000000'.slice(raw.length) + raw;
    } else {
      const word = raw === 'pre' || raw === 'preview' || raw === 'rc' ? 'c' : raw === '-' ? 'final-' : raw === 'dev' ? '@' : raw;
      part = '*' + word;
    }
    if (part.charCodeAt(0) === 42 /* * */) {
      if (part < '*final') while (parts.length > 0 && parts[parts.length - 1] === '*final-') parts.pop();
      while (parts.length > 0 && parts[parts.length - 1] === '00000000') parts.pop();
    }
    parts.push(part);
  }
  return parts.join('');
}

/** Parses a PyPI version. Every string parses (non-PEP 440 strings as legacy versions), as upstream. */
function parsePep440(version: string): Pep440Version {
  const lower = version.toLowerCase();
  const m = PEP440.exec(lower);
  if (m === null) {
    return {
      legacy: legacyKey(lower),
      epoch: '0',
      release: [],
      preLabel: undefined,
      preNumber: '0',
      post: undefined,
      dev: undefined,
      local: [],
    };
  }
  const release = (m[2] as string).split('.').map(normDigits);
  const preLabel = m[4] === undefined ? undefined : normalizePre(m[4]);
  const postDigits = m[7] ?? m[9];
  const post = m[7] !== undefined || m[8] !== undefined ? normDigits(postDigits ?? '') : undefined;
  const dev = m[11] !== undefined ? normDigits(m[12] ?? '') : undefined;
  const local = m[13] === undefined ? [] : m[13].split(/[-_.]/);
  return {
    legacy: undefined,
    epoch: m[1] === undefined ? '0' : normDigits(m[1]),
    release,
    preLabel,
    preNumber: normDigits(m[5] ?? ''),
    post,
    dev,
    local,
  };
}

// A dev release without pre or post (`1.0.dev0`) sorts before every pre-release of its release.
function devOnly(v: Pep440Version): boolean {
  return v.preLabel === undefined && v.post === undefined && v.dev !== undefined;
}

function comparePre(a: Pep440Version, b: Pep440Version): number {
  const ad = devOnly(a);
  const bd = devOnly(b);
  if (ad || bd) return ad === bd ? 0 : ad ? -1 : 1;
  if (a.preLabel === undefined) return b.preLabel === undefined ? 0 : 1;
  if (b.preLabel === undefined) return -1;
  // a < b < rc by first letter
  const d = a.preLabel.charCodeAt(0) - b.preLabel.charCodeAt(0);
  if (d !== 0) return d < 0 ? -1 : 1;
  return cmpDigits(a.preNumber, b.preNumber);
}

function compareOptional(a: string | undefined, b: string | undefined, missingIsHigh: boolean): number {
  if (a === undefined) return b === undefined ? 0 : missingIsHigh ? 1 : -1;
  if (b === undefined) return missingIsHigh ? -1 : 1;
  return cmpDigits(a, b);
}

// PEP 440 local labels: numeric segments compare numerically and above alphanumeric ones; more segments win.
function compareLocal(a: readonly string[], b: readonly string[]): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const x = a[i] as string;
    const y = b[i] as string;
    const xn = isNumeric(x);
    const yn = isNumeric(y);
    const d = xn && yn ? cmpDigits(normDigits(x), normDigits(y)) : xn ? 1 : yn ? -1 : cmpStr(x, y);
    if (d !== 0) return d;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

function isNumeric(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!isDigitCode(s.charCodeAt(i))) return false;
  return s.length > 0;
}

/** PEP 440 order (legacy versions first). */
function comparePep440(a: Pep440Version, b: Pep440Version): number {
  if (a.legacy !== undefined || b.legacy !== undefined) {
    if (a.legacy === undefined) return 1;
    if (b.legacy === undefined) return -1;
    return cmpStr(a.legacy, b.legacy);
  }
  return (
    cmpDigits(a.epoch, b.epoch) ||
    cmpPadded(a.release, b.release) ||
    comparePre(a, b) ||
    compareOptional(a.post, b.post, false) ||
    compareOptional(a.dev, b.dev, true) ||
    compareLocal(a.local, b.local)
  );
}

/** PyPI version order. */
export const pep440Order: VersionOrder<Pep440Version> = {
  parse: parsePep440,
  compare: comparePep440,
  // Epoch-aware; legacy versions sort below everything, so they take the lowest key.
  coarse: (v) => (v.legacy !== undefined ? COARSE_ZERO : coarseKey(v.epoch, v.release.length > 3 ? v.release.slice(0, 3) : v.release)),
};
