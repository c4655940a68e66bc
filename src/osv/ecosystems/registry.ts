// Ecosystem string → comparator (osv-facts.md §6 table). Resolution looks only at the base and, for the wrapper
// ecosystems, at the inner name, and returns shared instances, so nothing grows with the number of distinct
// ecosystem strings seen in queries.
import { apkOrder } from './apk.ts';
import { COARSE_ZERO } from './coarse.ts';
import { cranOrder } from './cran.ts';
import { dpkgOrder } from './dpkg.ts';
import { echoNpmOrder } from './echo.ts';
import { ecosystemBase, ecosystemSuffix } from './ecosystems.ts';
import { hackageOrder } from './hackage.ts';
import { isMavenZero, mavenOrder } from './maven.ts';
import { nugetOrder } from './nuget.ts';
import { packagistOrder } from './packagist.ts';
import { pep440Order } from './pep440.ts';
import { pubOrder } from './pub.ts';
import { rootOrderFor } from './root.ts';
import { rpmOrder } from './rpm.ts';
import { rubyGemsOrder } from './rubygems.ts';
import { semverOrder } from './semver.ts';
import type { VersionOrder } from './types.ts';

/** The parsed form of the `0` sentinel. */
const ZERO: unique symbol = Symbol('osv-version-zero');
type Zero = typeof ZERO;

/**
 * Adds OSV's `0` sentinel (osv-facts.md §4.2: `introduced: "0"` is the lowest version): the string `0` parses to a
 * value below every other version, whatever the ecosystem's own parser says about it. `isZero` widens the sentinel
 * to versions the inner order treats as equal to `0` (Maven, whose fixtures require `0 = 0.0 = 0-final-ga`).
 */
function withZero<V>(inner: VersionOrder<V>, isZero?: (v: V) => boolean): VersionOrder<V | Zero> {
  const order: VersionOrder<V | Zero> = {
    parse(version) {
      if (version === '0') return ZERO;
      const v = inner.parse(version);
      if (v === undefined) return undefined;
      return isZero !== undefined && isZero(v) ? ZERO : v;
    },
    compare(a, b) {
      if (a === ZERO) return b === ZERO ? 0 : -1;
      if (b === ZERO) return 1;
      return inner.compare(a, b);
    },
  };
  const coarse = inner.coarse?.bind(inner);
  if (coarse !== undefined) order.coarse = (v) => (v === ZERO ? COARSE_ZERO : coarse(v));
  return order;
}

const SEMVER = withZero(semverOrder);
const PYPI = withZero(pep440Order);
const MAVEN = withZero(mavenOrder, isMavenZero);
const NUGET = withZero(nugetOrder);
const RUBYGEMS = withZero(rubyGemsOrder);
const PACKAGIST = withZero(packagistOrder);
const PUB = withZero(pubOrder);
const CRAN = withZero(cranOrder);
const HACKAGE = withZero(hackageOrder);
const DPKG = withZero(dpkgOrder);
const APK = withZero(apkOrder);
const RPM = withZero(rpmOrder);
const ECHO_NPM = withZero(echoNpmOrder);

const BY_BASE: ReadonlyMap<string, VersionOrder> = new Map<string, VersionOrder>([
  ...['npm', 'crates.io', 'Go', 'Julia', 'SwiftURL', 'Bitnami', 'Hex', 'VSCode', 'GHC', 'Bioconductor'].map((e) => [e, SEMVER] as const),
  ['PyPI', PYPI],
  ['Maven', MAVEN],
  ['NuGet', NUGET],
  ['RubyGems', RUBYGEMS],
  ['Packagist', PACKAGIST],
  ['Pub', PUB],
  ['CRAN', CRAN],
  ['Hackage', HACKAGE],
  ...['Debian', 'Ubuntu', 'opam'].map((e) => [e, DPKG] as const),
  ...['Alpine', 'Alpaquita', 'BellSoft Hardened Containers', 'Chainguard', 'CleanStart', 'MinimOS', 'Wolfi'].map((e) => [e, APK] as const),
  ...['Red Hat', 'AlmaLinux', 'Rocky Linux', 'SUSE', 'openSUSE', 'openEuler', 'Mageia', 'Azure Linux'].map((e) => [e, RPM] as const),
]);

const ROOT_KINDS = ['alpine', 'debian', 'ubuntu', 'pypi', 'python', 'npm', 'maven'];
const ROOT = new Map<string, VersionOrder>(ROOT_KINDS.map((k) => [k, withZero(rootOrderFor(k))]));
const ROOT_OTHER = withZero(rootOrderFor(''));

function echoFor(suffix: string): VersionOrder {
  switch (ecosystemBase(suffix).toLowerCase()) {
    case 'pypi':
      return PYPI;
    case 'maven':
      return MAVEN;
    case 'npm':
      return ECHO_NPM;
    default:
      return DPKG; // bare Echo and any other suffix: Echo's Debian-derived OS packages
  }
}

/**
 * The comparator for an ecosystem string as it appears in OSV records or queries (e.g. "Debian:11",
 * "Ubuntu:Pro:22.04:LTS", "Echo:PyPI", "Root:Alpine:3.18", "TuxCare:npm", "Docker Hardened Images:Debian");
 * undefined when the ecosystem has no comparator (OSS-Fuzz, Linux, Android, GitHub Actions, Kubernetes, ConanCenter,
 * FreeBSD, Photon OS, GIT, bare Docker Hardened Images, unknown). Every comparator parses `0` as the lowest version.
 * Wrappers: `Echo:<inner>`, `Root:<inner>`, `TuxCare:<inner>` (undefined when the inner has none) and
 * `Docker Hardened Images:<lineage>` (lenient SemVer when the lineage has none).
 */
export function comparatorFor(ecosystem: string): VersionOrder | undefined {
  const base = ecosystemBase(ecosystem);
  const direct = BY_BASE.get(base);
  if (direct !== undefined) return direct;
  const suffix = ecosystemSuffix(ecosystem);
  switch (base) {
    case 'Echo':
      return echoFor(suffix);
    case 'Root':
      return ROOT.get(ecosystemBase(suffix).toLowerCase()) ?? ROOT_OTHER;
    case 'TuxCare': {
      // TuxCare:<inner> delegates; bare or nested TuxCare is malformed
      if (suffix === '' || ecosystemBase(suffix) === 'TuxCare') return undefined;
      return comparatorFor(suffix);
    }
    case 'Docker Hardened Images': {
      // DHI:<lineage>[:release] delegates to the lineage (e.g. Alpine:3.23, Debian:trixie); a lineage without a
      // comparator of its own falls back to lenient SemVer, DHI's order in osv-scalibr. Bare DHI has none.
      if (suffix === '' || ecosystemBase(suffix) === 'Docker Hardened Images') return undefined;
      return comparatorFor(suffix) ?? SEMVER;
    }
    default:
      return undefined;
  }
}

/**
 * Compares two version strings of one ecosystem (negative, zero or positive). Throws an Error naming the ecosystem
 * when it has no comparator or when either version does not parse.
 */
export function compareVersions(ecosystem: string, a: string, b: string): number {
  const order = comparatorFor(ecosystem);
  if (order === undefined) throw new Error(`no version comparator for ecosystem "${ecosystem}"`);
  const pa = order.parse(a);
  if (pa === undefined) throw new Error(`invalid ${ecosystem} version "${a}"`);
  const pb = order.parse(b);
  if (pb === undefined) throw new Error(`invalid ${ecosystem} version "${b}"`);
  return order.compare(pa, pb);
}
