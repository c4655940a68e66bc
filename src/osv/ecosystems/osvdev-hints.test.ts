// osv.dev's own Python unit tests (version-fixtures/osvdev/, secondary hints). They mostly agree with the upstream
// fixtures; the disagreements listed here all come from the Python helpers' rule that an unparsable version sorts
// after every valid one, which the Go API (and these comparators) do not follow. The list is pinned exactly, so a
// behaviour change in either direction shows up.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../../../test/support/shared.ts';
import { comparatorFor } from './index.ts';
import { readFixtureHints } from './fixtures.testkit.ts';

const HINT_ECOSYSTEMS: Readonly<Record<string, readonly string[]>> = {
  'alpine_test-comparisons.txt': ['Alpine'],
  'bioconductor_test-comparisons.txt': ['Bioconductor'],
  'cran_test-comparisons.txt': ['CRAN'],
  'debian_test-comparisons.txt': ['Debian'],
  'haskell_test-comparisons.txt': ['Hackage', 'GHC'],
  'maven_test-comparisons.txt': ['Maven'],
  'nuget_test-comparisons.txt': ['NuGet'],
  'packagist_test-comparisons.txt': ['Packagist'],
  'packagist_test_cases.txt': ['Packagist'],
  'pub_test-comparisons.txt': ['Pub'],
  'pypi_test-comparisons.txt': ['PyPI'],
  'redhat_test-comparisons.txt': ['Red Hat'],
  // root_test.py mixes Root's inner ecosystems; a line holds when it holds under one of them
  'root_test-comparisons.txt': ['Root:Alpine', 'Root:Debian', 'Root:PyPI', 'Root:npm', 'Root:Maven'],
  'rubygems_test-comparisons.txt': ['RubyGems'],
  'semver_ecosystem_helper_test-comparisons.txt': ['npm'],
};

/** Hint lines no comparator here satisfies, with the reason. */
const KNOWN_DISAGREEMENTS: readonly string[] = [
  // Python: "1-0-0" is not a valid apk version, so it sorts last; apk ranks the junk after `1` low.
  'alpine_test-comparisons.txt: 1-0-0 > 1.13.2-r0',
  // Python: invalid sorts last; apk reads no number, so `invalid` is low.
  'alpine_test-comparisons.txt: invalid > 1.4.0-r0',
  'alpine_test-comparisons.txt: invalid > 1.4.0-r0',
  // Python: invalid PVP sorts last; here Hackage refuses `1-20-0` and GHC (semver) reads `-20-0` as a prerelease.
  'haskell_test-comparisons.txt: 1-20-0 > 1.20.0',
  'haskell_test-comparisons.txt: 1-20-0 >= 1.20.0',
  'haskell_test-comparisons.txt: 1.20.0 <= 1-20-0',
  // Python's NuGet helper rejects `1.4.0rc3`; upstream lenient parsing reads it as 1.4.0 with a prerelease.
  'nuget_test-comparisons.txt: 1.4.0rc3 > 3.0.0.4001',
  // Python: Gem::Version rejects these and sorts them last; upstream reads leading words as low segments.
  'rubygems_test-comparisons.txt: invalid > 4.0.0.rc1',
  'rubygems_test-comparisons.txt: v3.1.1 > 4.0.0.rc1',
];

const HOLDS: Readonly<Record<string, (c: number) => boolean>> = {
  '<': (c) => c < 0,
  '>': (c) => c > 0,
  '=': (c) => c === 0,
  '!=': (c) => c !== 0,
  '<=': (c) => c <= 0,
  '>=': (c) => c >= 0,
};

describe('osv.dev Python test comparisons (hints)', () => {
  it('covers every hint file', () => {
    const files = readdirSync(fixturePath('osv', 'version-fixtures', 'osvdev')).filter((f) => f.endsWith('.txt'));
    expect(files.sort()).toEqual(Object.keys(HINT_ECOSYSTEMS).sort());
  });

  it('agrees on every line except the pinned disagreements', () => {
    const disagreements: string[] = [];
    let checked = 0;
    for (const [file, ecosystems] of Object.entries(HINT_ECOSYSTEMS)) {
      for (const { a, op, b } of readFixtureHints(file)) {
        checked++;
        const holds = ecosystems.some((eco) => {
          const order = comparatorFor(eco);
          const pa = order?.parse(a);
          const pb = order?.parse(b);
          if (order === undefined || pa === undefined || pb === undefined) return false;
          return (HOLDS[op] as (c: number) => boolean)(order.compare(pa, pb));
        });
        if (!holds) disagreements.push(`${file}: ${a} ${op} ${b}`);
      }
    }
    expect(checked).toBe(255);
    expect(disagreements).toEqual(KNOWN_DISAGREEMENTS);
  });
});
