// Coarse keys (osv-facts.md §6) must be monotonic non-decreasing in each ecosystem's order. Checked over every
// version of the upstream fixtures, sorted, and over every fixture comparison directly.
import { describe, expect, it } from 'vitest';
import { COARSE_MAX, COARSE_ZERO, coarseKey } from './coarse.ts';
import { FIXTURE_ECOSYSTEMS, fixtureFiles, readFixture } from './fixtures.testkit.ts';
import { comparatorFor } from './index.ts';
import type { VersionOrder } from './index.ts';

const KEY_SHAPE = /^\d{2}:\d{8}\.\d{8}\.\d{8}$/;

function hasCoarse(ecosystem: string): boolean {
  const order = comparatorFor(ecosystem);
  return order !== undefined && 'coarse' in order;
}

function withCoarse(ecosystem: string): Required<VersionOrder> {
  const order = comparatorFor(ecosystem);
  if (order === undefined || !('coarse' in order)) throw new Error(`${ecosystem} has no coarse key`);
  return order as Required<VersionOrder>;
}

describe('coarseKey', () => {
  it('pads the epoch and three parts', () => {
    expect(coarseKey('1', ['2', '30', '400'])).toBe('01:00000002.00000030.00000400');
    expect(coarseKey('0', [])).toBe(COARSE_ZERO);
    expect(coarseKey('0', ['7'], 'max')).toBe('00:00000007.99999999.99999999');
  });

  it('saturates a part that does not fit, and every part after it', () => {
    expect(coarseKey('0', ['1', '123456789', '5'])).toBe('00:00000001.99999999.99999999');
    expect(coarseKey('100', ['1'])).toBe(COARSE_MAX);
  });
});

describe('coarse keys over the fixtures', () => {
  // ecosystem → every fixture file it is checked against
  const files = new Map<string, string[]>();
  for (const file of fixtureFiles()) {
    for (const eco of FIXTURE_ECOSYSTEMS[file] ?? []) files.set(eco, [...(files.get(eco) ?? []), file]);
  }

  it('apk ecosystems have no coarse key (their order is not transitive)', () => {
    for (const eco of [
      'Alpine',
      'Alpaquita',
      'BellSoft Hardened Containers',
      'Chainguard',
      'CleanStart',
      'MinimOS',
      'Wolfi',
      'Root:Alpine',
    ]) {
      expect(hasCoarse(eco), eco).toBe(false);
    }
  });

  for (const [ecosystem, ecoFiles] of files) {
    if (!hasCoarse(ecosystem)) continue;
    const lines = ecoFiles.flatMap((f) => readFixture(f).map((l) => ({ ...l, file: f })));

    it(`${ecosystem}: key is non-decreasing over the ${lines.length} sorted fixture comparisons' versions`, () => {
      const order = withCoarse(ecosystem);
      const versions = [...new Set(lines.flatMap((l) => [l.a, l.b]))].map((s) => {
        const v = order.parse(s);
        if (v === undefined) throw new Error(`unparsable ${s}`);
        return { s, v, key: order.coarse(v) };
      });
      versions.sort((x, y) => order.compare(x.v, y.v));
      const bad: string[] = [];
      for (let i = 1; i < versions.length; i++) {
        const prev = versions[i - 1]!;
        const cur = versions[i]!;
        expect(cur.key).toMatch(KEY_SHAPE);
        if (prev.key > cur.key) bad.push(`${prev.s} (${prev.key}) sorts before ${cur.s} (${cur.key})`);
      }
      expect(bad.slice(0, 20), `${bad.length} inversions over ${versions.length} versions`).toEqual([]);
    });

    it(`${ecosystem}: every fixture comparison keeps its keys in order (equal versions, equal keys)`, () => {
      const order = withCoarse(ecosystem);
      const key = (s: string): string => order.coarse(order.parse(s));
      const bad: string[] = [];
      for (const { a, b, op, file, line } of lines) {
        const ka = key(a);
        const kb = key(b);
        const ok = op === 0 ? ka === kb : op < 0 ? ka <= kb : ka >= kb;
        if (!ok) bad.push(`${file}:${line}: ${a} (${ka}) vs ${b} (${kb})`);
      }
      expect(bad.slice(0, 20), `${bad.length} lines`).toEqual([]);
    });
  }

  it('maps the 0 sentinel to the lowest key in every ecosystem that has keys', () => {
    for (const eco of [
      'npm',
      'PyPI',
      'Maven',
      'NuGet',
      'RubyGems',
      'Packagist',
      'Pub',
      'CRAN',
      'Hackage',
      'Debian',
      'Red Hat',
      'Echo:npm',
      'Root:Debian',
      'TuxCare:PyPI',
    ]) {
      const order = withCoarse(eco);
      expect(order.coarse(order.parse('0')), eco).toBe(COARSE_ZERO);
    }
  });
});
