// Lenient SemVer, as OSV.dev orders npm, crates.io, Go, Hex, Julia, SwiftURL, Bitnami, VSCode, GHC and Bioconductor
// (osv-facts.md §6, the `osv-scalibr/semantic` "semver-like" parser): an optional leading `v`, any number of
// dot-separated numeric components, and everything from the first other character on is "build" text whose
// `-prerelease` part orders per SemVer 2.0.0 §11 and whose `+build` part is ignored (§10). Components beyond the
// third are appended to the build text as `.N`, so `1.2.3.4` is a prerelease of `1.2.3` (fixture-confirmed).
import { coarseKey } from './coarse.ts';
import { cmpDigits, cmpPadded, cmpStr, isDigitCode, normDigits } from './numbers.ts';
import type { VersionOrder } from './types.ts';

/** A version split into numeric components and the text after them. */
export interface SemverLike {
  /** Normalised numeric components (digit strings without leading zeros). */
  readonly components: readonly string[];
  /** The text after the components (`-pre+build`), plus any components beyond the limit as `.N`. */
  readonly build: string;
}

/**
 * Splits a version into numeric components and trailing build text. A leading `v` is dropped; dots between
 * digit runs only separate components; the first other character starts the build text.
 * @param maxComponents components kept as numbers; the rest move to the build text (-1 keeps all).
 */
export function parseSemverLike(version: string, maxComponents: number): SemverLike {
  const n = version.length;
  let i = n > 0 && version.charCodeAt(0) === 118 /* v */ ? 1 : 0;
  const components: string[] = [];
  let build = '';
  while (i < n) {
    const c = version.charCodeAt(i);
    if (isDigitCode(c)) {
      let j = i + 1;
      while (j < n && isDigitCode(version.charCodeAt(j))) j++;
      components.push(normDigits(version.slice(i, j)));
      i = j;
    } else if (c === 46 /* . */) {
      i++;
    } else {
      build = version.slice(i);
      break;
    }
  }
  if (maxComponents >= 0 && components.length > maxComponents) {
    for (let k = maxComponents; k < components.length; k++) build += '.' + (components[k] as string);
    components.length = maxComponents;
  }
  return { components, build };
}

/** One dot-separated prerelease identifier; `num` is set when it is numeric (signed, normalised). */
interface PreIdent {
  readonly text: string;
  readonly num: string | undefined;
}

/**
 * The prerelease identifiers of build text: the part before the first `+`, without one leading `-`, split on dots.
 * Returns undefined when there is no prerelease (which sorts above every prerelease, SemVer §11.3).
 */
function prereleaseOf(build: string): PreIdent[] | undefined {
  const plus = build.indexOf('+');
  let pre = plus === -1 ? build : build.slice(0, plus);
  if (pre.charCodeAt(0) === 45 /* - */) pre = pre.slice(1);
  if (pre === '') return undefined;
  return pre.split('.').map((text) => ({ text, num: signedNumber(text) }));
}

// Go's big.Int parsing (used upstream to classify identifiers) accepts an optional sign; after the `+` cut only
// `-` can occur. Negative values are kept as "-digits".
function signedNumber(s: string): string | undefined {
  let i = 0;
  let neg = false;
  if (s.charCodeAt(0) === 45) {
    neg = true;
    i = 1;
  }
  if (i >= s.length) return undefined;
  for (let k = i; k < s.length; k++) if (!isDigitCode(s.charCodeAt(k))) return undefined;
  const d = normDigits(s.slice(i));
  return neg && d !== '0' ? '-' + d : d;
}

function cmpSigned(a: string, b: string): number {
  const an = a.charCodeAt(0) === 45;
  const bn = b.charCodeAt(0) === 45;
  if (an !== bn) return an ? -1 : 1;
  return an ? -cmpDigits(a.slice(1), b.slice(1)) : cmpDigits(a, b);
}

/** SemVer §11 precedence of two prerelease lists (undefined = release, which is highest). */
function comparePrerelease(a: readonly PreIdent[] | undefined, b: readonly PreIdent[] | undefined): number {
  if (a === undefined) return b === undefined ? 0 : 1;
  if (b === undefined) return -1;
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const x = a[i] as PreIdent;
    const y = b[i] as PreIdent;
    let d: number;
    if (x.num !== undefined && y.num !== undefined) d = cmpSigned(x.num, y.num);
    else if (x.num === undefined && y.num === undefined) d = cmpStr(x.text, y.text);
    else d = x.num !== undefined ? -1 : 1; // numeric identifiers sort below alphanumeric ones (§11.4.3)
    if (d !== 0) return d;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** A parsed lenient-SemVer version. */
export interface SemverVersion {
  readonly components: readonly string[];
  readonly pre: readonly PreIdent[] | undefined;
  /** The full build text (used by wrappers that order on build metadata). */
  readonly build: string;
}

/** Parses with the component limit and optional lower-casing of the build text (NuGet). */
export function parseSemverVersion(version: string, maxComponents: number, lowerBuild: boolean): SemverVersion {
  const { components, build } = parseSemverLike(version, maxComponents);
  const b = lowerBuild ? build.toLowerCase() : build;
  return { components, pre: prereleaseOf(b), build: b };
}

/** Components first, then prerelease; build metadata is ignored. */
export function compareSemver(a: SemverVersion, b: SemverVersion): number {
  return cmpPadded(a.components, b.components) || comparePrerelease(a.pre, b.pre);
}

/** The coarse key of a component-first version: its first three components. */
export function coarseOfComponents(components: readonly string[]): string {
  return coarseKey('0', components.length > 3 ? components.slice(0, 3) : components);
}

/** Lenient SemVer with three numeric components (npm, crates.io, Go, Hex, …). Accepts any string. */
export const semverOrder: VersionOrder<SemverVersion> = {
  parse: (version) => parseSemverVersion(version, 3, false),
  compare: compareSemver,
  coarse: (v) => coarseOfComponents(v.components),
};
