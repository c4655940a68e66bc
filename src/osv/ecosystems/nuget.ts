// NuGet (osv-facts.md §6): lenient SemVer with four numeric components (`1.0 == 1.0.0.0`), case-insensitive
// prerelease labels, `+build` ignored.
import { coarseOfComponents, compareSemver, parseSemverVersion } from './semver.ts';
import type { SemverVersion } from './semver.ts';
import type { VersionOrder } from './types.ts';

/** NuGet version order. Accepts any string. */
export const nugetOrder: VersionOrder<SemverVersion> = {
  parse: (version) => parseSemverVersion(version, 4, true),
  compare: compareSemver,
  coarse: (v) => coarseOfComponents(v.components),
};
