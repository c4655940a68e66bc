// Test helper (imported by tests only): the version-comparison fixtures in test/fixtures/osv/version-fixtures
// (format and file → ecosystem table in the README there).
import { readFileSync, readdirSync } from 'node:fs';
import { fixturePath } from '../../../test/support/shared.ts';

/** One fixture comparison `<a> <op> <b>`, op as -1, 0 or 1. */
export interface FixtureLine {
  readonly a: string;
  readonly b: string;
  readonly op: -1 | 0 | 1;
  /** 1-based line number in the file. */
  readonly line: number;
}

/** Fixture file → the ecosystems it is checked under (README table, from upstream compare_test.go). */
export const FIXTURE_ECOSYSTEMS: Readonly<Record<string, readonly string[]>> = {
  'semver-versions.txt': ['npm', 'crates.io', 'Go', 'Hex'],
  'rubygems-versions.txt': ['RubyGems'],
  'rubygems-versions-generated.txt': ['RubyGems'],
  'nuget-versions.txt': ['NuGet'],
  'packagist-versions.txt': ['Packagist'],
  'packagist-versions-generated.txt': ['Packagist'],
  'maven-versions.txt': ['Maven'],
  'maven-versions-generated.txt': ['Maven'],
  'pypi-versions.txt': ['PyPI'],
  'pypi-versions-generated.txt': ['PyPI'],
  'debian-versions.txt': ['Debian'],
  'debian-versions-generated.txt': ['Debian'],
  'cran-versions.txt': ['CRAN'],
  'cran-versions-generated.txt': ['CRAN'],
  'alpine-versions.txt': ['Alpine'],
  'alpine-versions-generated.txt': ['Alpine'],
  'redhat-versions.txt': ['Red Hat'],
  'hackage-versions.txt': ['Hackage'],
  'pub-versions.txt': ['Pub'],
};

/** Comparison lines per file, as counted in the README table. */
export const FIXTURE_LINE_COUNTS: Readonly<Record<string, number>> = {
  'semver-versions.txt': 86,
  'rubygems-versions.txt': 25,
  'rubygems-versions-generated.txt': 4098,
  'nuget-versions.txt': 35,
  'packagist-versions.txt': 95,
  'packagist-versions-generated.txt': 10630,
  'maven-versions.txt': 102,
  'maven-versions-generated.txt': 14752,
  'pypi-versions.txt': 37,
  'pypi-versions-generated.txt': 12375,
  'debian-versions.txt': 30,
  'debian-versions-generated.txt': 14442,
  'cran-versions.txt': 21,
  'cran-versions-generated.txt': 57,
  'alpine-versions.txt': 778,
  'alpine-versions-generated.txt': 13979,
  'redhat-versions.txt': 165,
  'hackage-versions.txt': 11,
  'pub-versions.txt': 100,
};

const OPS: Readonly<Record<string, -1 | 0 | 1>> = { '<': -1, '=': 0, '>': 1 };

/** Every `*.txt` directly in the fixture folder (not the `osvdev/` hints). */
export function fixtureFiles(): string[] {
  return readdirSync(fixturePath('osv', 'version-fixtures'), { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.txt'))
    .map((e) => e.name)
    .sort();
}

/**
 * Reads one fixture file in upstream's format: blank lines and lines starting with `# ` or `// ` are skipped; every
 * other line must be exactly `<a> <op> <b>` split on single spaces.
 */
export function readFixture(file: string): FixtureLine[] {
  const text = readFileSync(fixturePath('osv', 'version-fixtures', file), 'utf8');
  const out: FixtureLine[] = [];
  text.split('\n').forEach((raw, index) => {
    if (raw === '' || raw.startsWith('# ') || raw.startsWith('// ')) return;
    const parts = raw.split(' ');
    const op = OPS[parts[1] ?? ''];
    if (parts.length !== 3 || op === undefined) throw new Error(`${file}:${index + 1}: malformed fixture line "${raw}"`);
    out.push({ a: parts[0] as string, b: parts[2] as string, op, line: index + 1 });
  });
  return out;
}

/** One hint comparison from `osvdev/`: op may also be `!=`, `<=` or `>=`. */
export interface HintLine {
  readonly a: string;
  readonly op: string;
  readonly b: string;
}

/** Reads an `osvdev/` hint file (same format, wider set of operators). */
export function readFixtureHints(file: string): HintLine[] {
  const text = readFileSync(fixturePath('osv', 'version-fixtures', 'osvdev', file), 'utf8');
  const out: HintLine[] = [];
  for (const raw of text.split('\n')) {
    if (raw === '' || raw.startsWith('# ') || raw.startsWith('// ')) continue;
    const parts = raw.split(' ');
    if (parts.length !== 3 || !['<', '>', '=', '!=', '<=', '>='].includes(parts[1] as string)) {
      throw new Error(`${file}: malformed hint line "${raw}"`);
    }
    out.push({ a: parts[0] as string, op: parts[1] as string, b: parts[2] as string });
  }
  return out;
}
