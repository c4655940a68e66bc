// Dart pub (osv-facts.md §6): SemVer with three components, but unlike SemVer a `+build` suffix counts: after the
// prerelease, versions order on the text after the first `+` (`1.0.0 < 1.0.0+build`, `1.2.3+1 < 1.2.3+a`).
import { cmpStr } from './numbers.ts';
import { coarseOfComponents, compareSemver, parseSemverVersion } from './semver.ts';
import type { SemverVersion } from './semver.ts';
import type { VersionOrder } from './types.ts';

/** A pub version: lenient SemVer plus the build text after `+`. */
export interface PubVersion extends SemverVersion {
  readonly buildTag: string;
}

/** Pub version order. Accepts any string. */
export const pubOrder: VersionOrder<PubVersion> = {
  parse(version) {
    const v = parseSemverVersion(version, 3, false);
    const plus = v.build.indexOf('+');
    return { ...v, buildTag: plus === -1 ? '' : v.build.slice(plus + 1) };
  },
  compare: (a, b) => compareSemver(a, b) || cmpStr(a.buildTag, b.buildTag),
  coarse: (v) => coarseOfComponents(v.components),
};
