// Ecosystem names (osv-facts.md §6; the OSV schema's `$defs.ecosystemName.enum`, see osv-data/ecosystems.txt).

/** The 48 ecosystem base names of the OSV schema. */
export const KNOWN_ECOSYSTEMS: readonly string[] = Object.freeze([
  'AlmaLinux',
  'Alpaquita',
  'Alpine',
  'Android',
  'Azure Linux',
  'BellSoft Hardened Containers',
  'Bioconductor',
  'Bitnami',
  'Chainguard',
  'CleanStart',
  'ConanCenter',
  'CRAN',
  'crates.io',
  'Debian',
  'Docker Hardened Images',
  'Echo',
  'FreeBSD',
  'GHC',
  'GitHub Actions',
  'Go',
  'Hackage',
  'Hex',
  'Julia',
  'Kubernetes',
  'Linux',
  'Mageia',
  'Maven',
  'MinimOS',
  'npm',
  'NuGet',
  'opam',
  'openEuler',
  'openSUSE',
  'OSS-Fuzz',
  'Packagist',
  'Photon OS',
  'Pub',
  'PyPI',
  'Red Hat',
  'Rocky Linux',
  'Root',
  'RubyGems',
  'SUSE',
  'SwiftURL',
  'TuxCare',
  'Ubuntu',
  'VSCode',
  'Wolfi',
]);

const KNOWN = new Set(KNOWN_ECOSYSTEMS);

/** The text before the first `:` (`Debian:11` → `Debian`); the whole string when there is none. */
export function ecosystemBase(ecosystem: string): string {
  const colon = ecosystem.indexOf(':');
  return colon === -1 ? ecosystem : ecosystem.slice(0, colon);
}

/** The text after the first `:` ('' when there is none). */
export function ecosystemSuffix(ecosystem: string): string {
  const colon = ecosystem.indexOf(':');
  return colon === -1 ? '' : ecosystem.slice(colon + 1);
}

/**
 * True when the base is one of {@link KNOWN_ECOSYSTEMS} (case-sensitive, any suffix accepted, as the API validates
 * queries, osv-facts.md §2) or the ecosystem is exactly `GIT`.
 */
export function isKnownEcosystem(ecosystem: string): boolean {
  return ecosystem === 'GIT' || KNOWN.has(ecosystemBase(ecosystem));
}

const PEP503_SEPARATORS = /[-_.]+/g;

/**
 * Package-name normalisation used for matching (osv-facts.md §4.1): PEP 503 (`[-_.]+` → `-`, lower-case) for PyPI
 * and `Echo:PyPI` (suffix compared case-insensitively); every other ecosystem's names are exact.
 */
export function normalizePackageName(ecosystem: string, name: string): string {
  const base = ecosystemBase(ecosystem);
  const pypi = base === 'PyPI' || (base === 'Echo' && ecosystemBase(ecosystemSuffix(ecosystem)).toLowerCase() === 'pypi');
  return pypi ? name.replace(PEP503_SEPARATORS, '-').toLowerCase() : name;
}
