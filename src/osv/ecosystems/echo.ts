// Echo:npm (osv-facts.md §6): lenient SemVer whose `+echo.N` build number breaks ties, since SemVer itself ignores
// build metadata. The other Echo variants reuse existing orders (see registry.ts).
import { cmpDigits, normDigits } from './numbers.ts';
import { coarseOfComponents, compareSemver, parseSemverVersion } from './semver.ts';
import type { SemverVersion } from './semver.ts';
import type { VersionOrder } from './types.ts';

/** An Echo npm version: lenient SemVer plus the `+echo.N` number (0 when absent). */
export interface EchoNpmVersion extends SemverVersion {
  readonly echoBuild: string;
}

const ECHO_BUILD = /\+echo\.(\d+)/;
// Upstream reads N with strconv.Atoi and treats an overflow as "no build number".
const INT64_MAX = '9223372036854775807';

function echoBuildOf(version: string): string {
  const m = ECHO_BUILD.exec(version);
  if (m === null) return '0';
  const d = normDigits(m[1] as string);
  return cmpDigits(d, INT64_MAX) > 0 ? '0' : d;
}

/** `Echo:npm` order. Accepts any string. */
export const echoNpmOrder: VersionOrder<EchoNpmVersion> = {
  parse(version) {
    const v = parseSemverVersion(version, 3, false);
    return { ...v, echoBuild: echoBuildOf(version) };
  },
  compare: (a, b) => compareSemver(a, b) || cmpDigits(a.echoBuild, b.echoBuild),
  coarse: (v) => coarseOfComponents(v.components),
};
