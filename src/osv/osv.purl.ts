// Package URLs in queries (osv-facts.md §4.4; the purl spec). The type (and namespace, for OS distributions)
// selects the OSV ecosystem; qualifiers are ignored except Debian's `distro`; the version fills `version`.

/** A purl that names a package in a known ecosystem. */
export interface PurlPackage {
  ecosystem: string;
  name: string;
  /** '' when the purl has no `@version`. */
  version: string;
}

/** The purl parsed but its type is not one OSV knows: the query answers an empty result, not an error. */
export const UNKNOWN_PURL_TYPE: unique symbol = Symbol('unknown purl type');

export class PurlError extends Error {
  override name = 'PurlError';
}

interface ParsedPurl {
  type: string;
  namespace: string[];
  name: string;
  version: string;
  qualifiers: Map<string, string>;
  subpath: string;
}

function decode(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new PurlError(`invalid purl: cannot percent-decode the ${what}`);
  }
}

/** Splits a purl into its components (`pkg:type/namespace/name@version?qualifiers#subpath`). */
function parsePurl(purl: string): ParsedPurl {
  const text = purl.trim();
  const colon = text.indexOf(':');
  if (colon === -1 || text.slice(0, colon).toLowerCase() !== 'pkg') throw new PurlError('invalid purl: the scheme must be "pkg:"');
  let rest = text.slice(colon + 1).replace(/^\/+/u, '');
  let subpath = '';
  const hash = rest.indexOf('#');
  if (hash !== -1) {
    subpath = rest
      .slice(hash + 1)
      .split('/')
      .filter((s) => s !== '' && s !== '.' && s !== '..')
      .map((s) => decode(s, 'subpath'))
      .join('/');
    rest = rest.slice(0, hash);
  }
  const qualifiers = new Map<string, string>();
  const question = rest.indexOf('?');
  if (question !== -1) {
    for (const pair of rest.slice(question + 1).split('&')) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new PurlError(`invalid purl: qualifier ${JSON.stringify(pair)} is not key=value`);
      const value = decode(pair.slice(eq + 1), 'qualifiers');
      if (value !== '') qualifiers.set(pair.slice(0, eq).toLowerCase(), value);
    }
    rest = rest.slice(0, question);
  }
  const slash = rest.indexOf('/');
  if (slash <= 0) throw new PurlError('invalid purl: a type and a name are required');
  const type = rest.slice(0, slash).toLowerCase();
  if (!/^[a-z.+-][a-z0-9.+-]*$/u.test(type)) throw new PurlError(`invalid purl: invalid type ${JSON.stringify(type)}`);
  let path = rest.slice(slash + 1).replace(/\/+$/u, '');
  let version = '';
  const lastSlash = path.lastIndexOf('/');
  const at = path.indexOf('@', lastSlash + 1);
  if (at !== -1) {
    version = decode(path.slice(at + 1), 'version');
    path = path.slice(0, at);
  }
  const segments = path.split('/').filter((s) => s !== '');
  const rawName = segments.pop();
  if (rawName === undefined || rawName === '') throw new PurlError('invalid purl: a name is required');
  return { type, namespace: segments.map((s) => decode(s, 'namespace')), name: decode(rawName, 'name'), version, qualifiers, subpath };
}

/** Debian release numbers by codename (for the `distro` qualifier). */
const DEBIAN_RELEASES: Record<string, string> = {
  buzz: '1.1',
  rex: '1.2',
  bo: '1.3',
  hamm: '2.0',
  slink: '2.1',
  potato: '2.2',
  woody: '3.0',
  sarge: '3.1',
  etch: '4.0',
  lenny: '5.0',
  squeeze: '6.0',
  wheezy: '7',
  jessie: '8',
  stretch: '9',
  buster: '10',
  bullseye: '11',
  bookworm: '12',
  trixie: '13',
  forky: '14',
  duke: '15',
};

function debianEcosystem(qualifiers: Map<string, string>): string {
  const distro = qualifiers.get('distro')?.toLowerCase();
  if (distro === undefined) return 'Debian';
  const named = DEBIAN_RELEASES[distro.replace(/^debian[-:]?/u, '')];
  if (named !== undefined) return `Debian:${named}`;
  const numbered = /^(?:debian[-:]?)?(\d+(?:\.\d+)?)$/u.exec(distro);
  return numbered ? `Debian:${numbered[1] as string}` : 'Debian';
}

type NameStyle = 'name' | 'slash' | 'colon' | 'go';

/** `type/namespace` entries are tried first, then `type` (§4.4). */
const ECOSYSTEMS: Record<string, { ecosystem: string; style: NameStyle }> = {
  pypi: { ecosystem: 'PyPI', style: 'name' },
  npm: { ecosystem: 'npm', style: 'slash' },
  cargo: { ecosystem: 'crates.io', style: 'name' },
  golang: { ecosystem: 'Go', style: 'go' },
  maven: { ecosystem: 'Maven', style: 'colon' },
  gradle: { ecosystem: 'Maven', style: 'colon' },
  composer: { ecosystem: 'Packagist', style: 'slash' },
  gem: { ecosystem: 'RubyGems', style: 'name' },
  nuget: { ecosystem: 'NuGet', style: 'name' },
  hex: { ecosystem: 'Hex', style: 'slash' },
  pub: { ecosystem: 'Pub', style: 'name' },
  swift: { ecosystem: 'SwiftURL', style: 'slash' },
  cran: { ecosystem: 'CRAN', style: 'name' },
  hackage: { ecosystem: 'Hackage', style: 'name' },
  conan: { ecosystem: 'ConanCenter', style: 'name' },
  julia: { ecosystem: 'Julia', style: 'name' },
  opam: { ecosystem: 'opam', style: 'name' },
  bitnami: { ecosystem: 'Bitnami', style: 'name' },
  generic: { ecosystem: 'OSS-Fuzz', style: 'name' },
  dhi: { ecosystem: 'Docker Hardened Images', style: 'name' },
  'deb/debian': { ecosystem: 'Debian', style: 'name' },
  'deb/ubuntu': { ecosystem: 'Ubuntu', style: 'name' },
  'deb/echo': { ecosystem: 'Echo', style: 'name' },
  'deb/dhi': { ecosystem: 'Docker Hardened Images', style: 'name' },
  'apk/alpine': { ecosystem: 'Alpine', style: 'name' },
  'apk/alpaquita': { ecosystem: 'Alpaquita', style: 'name' },
  'apk/bellsoft-hardened-containers': { ecosystem: 'BellSoft Hardened Containers', style: 'name' },
  'apk/chainguard': { ecosystem: 'Chainguard', style: 'name' },
  'apk/wolfi': { ecosystem: 'Wolfi', style: 'name' },
  'apk/minimos': { ecosystem: 'MinimOS', style: 'name' },
  'apk/dhi': { ecosystem: 'Docker Hardened Images', style: 'name' },
  'rpm/redhat': { ecosystem: 'Red Hat', style: 'name' },
  'rpm/almalinux': { ecosystem: 'AlmaLinux', style: 'name' },
  'rpm/rocky-linux': { ecosystem: 'Rocky Linux', style: 'name' },
  'rpm/suse': { ecosystem: 'SUSE', style: 'name' },
  'rpm/opensuse': { ecosystem: 'openSUSE', style: 'name' },
  'rpm/openeuler': { ecosystem: 'openEuler', style: 'name' },
  'rpm/mageia': { ecosystem: 'Mageia', style: 'name' },
  'rpm/azure-linux': { ecosystem: 'Azure Linux', style: 'name' },
};

/**
 * Maps a purl to an OSV package. Throws PurlError when the purl does not parse; returns UNKNOWN_PURL_TYPE when
 * it parses but its type is not one OSV maps (the API then answers an empty result, §2).
 */
export function purlToPackage(purl: string): PurlPackage | typeof UNKNOWN_PURL_TYPE {
  const p = parsePurl(purl);
  const namespace = p.namespace.join('/');
  const entry = (namespace !== '' ? ECOSYSTEMS[`${p.type}/${namespace.toLowerCase()}`] : undefined) ?? ECOSYSTEMS[p.type];
  if (entry === undefined) return UNKNOWN_PURL_TYPE;
  let name: string;
  switch (entry.style) {
    case 'slash':
      name = namespace === '' ? p.name : `${namespace}/${p.name}`;
      break;
    case 'colon':
      name = namespace === '' ? p.name : `${namespace}:${p.name}`;
      break;
    case 'go':
      name = [namespace, p.name, p.subpath].filter((s) => s !== '').join('/');
      break;
    default:
      name = p.name;
  }
  const ecosystem = entry.ecosystem === 'Debian' ? debianEcosystem(p.qualifiers) : entry.ecosystem;
  return { ecosystem, name, version: p.version };
}
