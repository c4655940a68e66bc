// Root (osv-facts.md §6): Root.io republishes patched packages as `Root:<inner>` (Alpine, Debian, Ubuntu, PyPI, npm,
// Maven). A version is the inner ecosystem's version plus Root's patch number, written `+root.io.N`, `.root.io.N`
// or, Alpine style, `-rN`; versions order by the inner comparator and then by the patch number.
// As upstream, `+root.io.N`/`.root.io.N` are removed before the inner parse while `-rN` stays part of it.
import { apkOrder } from './apk.ts';
import { dpkgOrder } from './dpkg.ts';
import { mavenOrder } from './maven.ts';
import { cmpDigits, normDigits } from './numbers.ts';
import { pep440Order } from './pep440.ts';
import { semverOrder } from './semver.ts';
import type { VersionOrder } from './types.ts';

/** A parsed Root version. */
export interface RootVersion {
  readonly inner: unknown;
  /** Root's patch number, normalised digits ('0' when absent). */
  readonly patch: string;
}

const PLUS_ROOT = /^(.+?)\+root\.io\.(\d+)$/;
const DOT_ROOT = /^(.+?)\.root\.io\.(\d+)$/;
const ALPINE_REVISION = /^(.+?)-r(\d+)$/;
// Upstream reads the patch with strconv.Atoi; a value that overflows it makes the version invalid.
const INT64_MAX = '9223372036854775807';

/** The inner comparator for the part of a Root ecosystem string after `Root:` (unknown inner: lenient SemVer). */
function innerFor(suffix: string): { order: VersionOrder<unknown>; dpkg: boolean } {
  const colon = suffix.indexOf(':');
  const name = (colon === -1 ? suffix : suffix.slice(0, colon)).toLowerCase();
  switch (name) {
    case 'alpine':
      return { order: apkOrder, dpkg: false };
    case 'debian':
    case 'ubuntu':
      return { order: dpkgOrder, dpkg: true };
    case 'pypi':
    case 'python':
      return { order: pep440Order, dpkg: false };
    case 'maven':
      return { order: mavenOrder, dpkg: false };
    default:
      return { order: semverOrder, dpkg: false };
  }
}

/** Builds the Root order for `Root:<suffix>`. */
export function rootOrderFor(suffix: string): VersionOrder<RootVersion> {
  const { order, dpkg } = innerFor(suffix);
  const innerCoarse = order.coarse?.bind(order);
  const result: VersionOrder<RootVersion> = {
    parse(version) {
      let upstream = version;
      let patch = '0';
      const plus = PLUS_ROOT.exec(version);
      if (plus !== null) {
        upstream = plus[1] as string;
        patch = plus[2] as string;
      }
      const dot = DOT_ROOT.exec(version);
      if (dot !== null) {
        upstream = dot[1] as string;
        patch = dot[2] as string;
      }
      const rev = ALPINE_REVISION.exec(upstream);
      if (rev !== null) patch = rev[2] as string;
      patch = normDigits(patch);
      if (cmpDigits(patch, INT64_MAX) > 0) return undefined;
      if (dpkg && upstream === '') return undefined;
      const inner = order.parse(upstream);
      return inner === undefined ? undefined : { inner, patch };
    },
    compare: (a, b) => order.compare(a.inner, b.inner) || cmpDigits(a.patch, b.patch),
  };
  // The inner order decides first, so the inner coarse key stays monotonic (none for apk).
  if (innerCoarse !== undefined) result.coarse = (v) => innerCoarse(v.inner);
  return result;
}
