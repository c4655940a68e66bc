// Matching semantics (osv-facts.md §4) against the upstream tables in test/fixtures/osv/matching-cases: osv.dev's
// MatchPackages cases (index rows, pagination, commits, tag normalisation) and osv-scalibr's IsAffected groups.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../../test/support/shared.ts';
import { CorpusIndex } from './osv.index.ts';
import { canonicalizeVersion, normalizeTag, stripRepoPrefix } from './osv.matcher.ts';
import { indexOfRecords, limits, query } from './osv.matching.testkit.ts';
import { matchCommit } from './osv.paging.ts';
import { computeIndexRows } from './osv.rows.ts';
import type { OsvAffected, OsvEvent, OsvRecord } from './osv.schema.ts';

interface Entity {
  vuln_id: string;
  ecosystem: string;
  name: string;
  versions?: string[];
  events?: OsvEvent[];
}

interface MatchCases {
  index_entities: Entity[];
  cases: { name: string; ecosystem: string; name_query: string; version: string; want_ids: string[] }[];
  pagination_cases: {
    name: string;
    entities?: Entity[];
    query: { ecosystem?: string; name?: string; version?: string; commit?: string };
    page_size?: number;
    pages?: string[][];
    commit_index?: { vuln_id: string; commits: string[]; vuln: 'active' | 'withdrawn' | 'missing' }[];
    ids?: string[];
    want_ids?: string[];
  }[];
  normalize_tag_cases: { tag: string; want: string }[];
  strip_repo_prefix_cases: { versions: string[]; repo: string; want: string[] }[];
}

interface ScalibrCases {
  groups: {
    name: string;
    query_ecosystem: string;
    query_name: string;
    affected: OsvAffected[];
    affected_versions: string[];
    unaffected_versions: string[];
    empty_version_is_affected: boolean | null;
  }[];
  other_cases: {
    name: string;
    affected: OsvAffected;
    query: { ecosystem?: string; name?: string; version: string; purl_type?: string };
    want: boolean;
  }[];
}

const read = <T>(file: string): T => JSON.parse(readFileSync(fixturePath('osv', 'matching-cases', file), 'utf8')) as T;
const matchCases = read<MatchCases>('osvdev-matchpackages-cases.json');
const scalibr = read<ScalibrCases>('scalibr-isaffected-cases.json');

/** Index rows as the entities describe them: one record per vuln id, one affected entry per entity. */
function indexOf(entities: readonly Entity[]): CorpusIndex {
  const byId = new Map<string, OsvAffected[]>();
  for (const e of entities) {
    const affected: OsvAffected = { package: { ecosystem: e.ecosystem, name: e.name } };
    if (e.events) affected.ranges = [{ type: 'ECOSYSTEM', events: e.events }];
    if (e.versions) affected.versions = e.versions;
    byId.set(e.vuln_id, [...(byId.get(e.vuln_id) ?? []), affected]);
  }
  return indexOfRecords([...byId].map(([id, affected]) => ({ id, modified: '2024-01-01T00:00:00Z', affected })));
}

describe('[OSV-MATCH-EVENTS] [OSV-MATCH-STRING] [OSV-MATCH-BARE-DISTRO] [OSV-MATCH-NOECOSYSTEM] [OSV-DEDUP] osv.dev MatchPackages cases', () => {
  const index = indexOf(matchCases.index_entities);
  for (const c of matchCases.cases) {
    it(c.name, () => {
      expect(query(index, c.ecosystem, c.name_query, c.version).ids).toEqual(c.want_ids);
    });
  }

  it('[OSV-PAGES] [OSV-DEDUP] pages through results with the cursor, each id once (pagination cases)', () => {
    for (const p of matchCases.pagination_cases.filter((x) => x.entities && x.pages)) {
      const idx = indexOf(p.entities ?? []);
      const got: string[][] = [];
      let after: string | undefined;
      for (let i = 0; i < (p.pages ?? []).length; i++) {
        const page = query(idx, p.query.ecosystem ?? '', p.query.name ?? '', p.query.version ?? '', p.page_size, after);
        got.push(page.ids);
        // A page says where the next one starts; after the last full page the client's last id does the same.
        after = page.cursor ?? page.ids[page.ids.length - 1] ?? after;
      }
      expect(got, p.name).toEqual(p.pages);
    }
  });

  it('[OSV-MATCH-COMMIT] [OSV-MATCH-WITHDRAWN] matches commits of live records only (withdrawn and missing ones are left out)', () => {
    const c = matchCases.pagination_cases.find((x) => x.commit_index);
    const idx = new CorpusIndex();
    for (const entry of c?.commit_index ?? []) {
      if (entry.vuln === 'active')
        idx.applyVuln(
          entry.vuln_id,
          '2024-01-01T00:00:00Z',
          entry.commits.map((name, seq) => ({ seq, kind: 'C', ecosystem: 'GIT', name, coarseMin: null, coarseMax: null })),
        );
      if (entry.vuln === 'withdrawn') idx.applyVuln(entry.vuln_id, '2024-01-01T00:00:00Z', null);
    }
    expect(matchCommit(idx, c?.query.commit ?? '', limits()).vulns.map((v) => v.id)).toEqual(c?.want_ids);
  });

  it('pages commit matches', () => {
    const c = matchCases.pagination_cases.find((x) => x.query.commit && x.pages);
    const idx = new CorpusIndex();
    for (const id of c?.ids ?? [])
      idx.applyVuln(id, '2024-01-01T00:00:00Z', [
        { seq: 0, kind: 'C', ecosystem: 'GIT', name: c?.query.commit ?? '', coarseMin: null, coarseMax: null },
      ]);
    const pages: string[][] = [];
    let after: string | undefined;
    for (let i = 0; i < (c?.pages ?? []).length; i++) {
      const page = matchCommit(idx, c?.query.commit ?? '', limits(c?.page_size, after));
      pages.push(page.vulns.map((v) => v.id));
      after = page.cursor ?? pages[pages.length - 1]?.[pages[pages.length - 1]!.length - 1] ?? after;
    }
    expect(pages).toEqual(c?.pages);
  });

  it('[OSV-MATCH-STRING] normalises tags like osv.dev', () => {
    for (const c of matchCases.normalize_tag_cases) expect(normalizeTag(c.tag), c.tag).toBe(c.want);
  });

  it('[OSV-MATCH-STRING] strips repository prefixes from tags like osv.dev', () => {
    for (const c of matchCases.strip_repo_prefix_cases) expect(stripRepoPrefix(c.versions, c.repo), c.repo).toEqual(c.want);
  });
});

describe('[OSV-MATCH-EVENTS] [OSV-MATCH-VERSIONS-FIRST] [OSV-MATCH-NOVERSION] osv-scalibr IsAffected groups', () => {
  for (const g of scalibr.groups) {
    it(g.name, () => {
      const index = indexOfRecords([{ id: 'OSV-1', modified: '2024-01-01T00:00:00Z', affected: g.affected }]);
      const hit = (version: string) => query(index, g.query_ecosystem, g.query_name, version).ids.length > 0;
      for (const v of g.affected_versions) expect(hit(v), `${v} affected`).toBe(true);
      for (const v of g.unaffected_versions) expect(hit(v), `${v} not affected`).toBe(false);
      // The API's version-less query returns every record listing the package (the scanner's "empty version").
      if (g.empty_version_is_affected === true) expect(hit('')).toBe(true);
    });
  }

  for (const c of scalibr.other_cases.filter((x) => x.query.purl_type === undefined && !(x.query.name ?? '').includes('('))) {
    it(c.name, () => {
      const index = indexOfRecords([{ id: 'OSV-1', modified: '2024-01-01T00:00:00Z', affected: [c.affected] }]);
      const pkg = c.affected.package!;
      expect(query(index, c.query.ecosystem ?? pkg.ecosystem, c.query.name ?? pkg.name, c.query.version).ids.length > 0).toBe(c.want);
    });
  }
});

describe('matching details', () => {
  it('[OSV-MATCH-STRING] compares canonical forms in string mode', () => {
    expect(canonicalizeVersion('V1_0-RC.1')).toBe('v1.0.rc.1');
    const index = indexOfRecords([
      {
        id: 'OSV-1',
        modified: '2024-01-01T00:00:00Z',
        affected: [{ package: { ecosystem: 'OSS-Fuzz', name: 'proj' }, versions: ['release-1_2_3', 'v2.0'] }],
      },
    ]);
    expect(query(index, 'OSS-Fuzz', 'proj', 'release-1_2_3').ids).toEqual(['OSV-1']);
    expect(query(index, 'OSS-Fuzz', 'proj', '1.2.3').ids).toEqual(['OSV-1']);
    expect(query(index, 'OSS-Fuzz', 'proj', 'V2_0').ids).toEqual(['OSV-1']);
    expect(query(index, 'OSS-Fuzz', 'proj', '2.1').ids).toEqual([]);
  });

  it('[OSV-MATCH-VERSIONS-FIRST] [OSV-MATCH-PEP503] uses equality of the comparator for listed versions (PyPI 3.1 == 3.1.0, NuGet 4 parts)', () => {
    const index = indexOfRecords([
      {
        id: 'PYSEC-1',
        modified: '2024-01-01T00:00:00Z',
        affected: [{ package: { ecosystem: 'PyPI', name: 'Crypto_Graphy' }, versions: ['3.0', '3.1', '3.3'] }],
      },
      {
        id: 'GHSA-1',
        modified: '2024-01-01T00:00:00Z',
        affected: [{ package: { ecosystem: 'NuGet', name: 'SkiaSharp' }, versions: ['2.80.3'] }],
      },
    ]);
    expect(query(index, 'PyPI', 'crypto-graphy', '3.1.0').ids).toEqual(['PYSEC-1']);
    expect(query(index, 'PyPI', 'crypto.graphy', '3.2').ids).toEqual([]);
    expect(query(index, 'NuGet', 'SkiaSharp', '2.80.3.0').ids).toEqual(['GHSA-1']);
    expect(query(index, 'NuGet', 'skiasharp', '2.80.3').ids).toEqual([]);
  });

  it('[OSV-MATCH-EVENTS] [OSV-MATCH-ROWS] treats limit like fixed and keeps ranges of one record apart', () => {
    const index = indexOfRecords([
      {
        id: 'OSV-1',
        modified: '2024-01-01T00:00:00Z',
        affected: [
          {
            package: { ecosystem: 'npm', name: 'p' },
            ranges: [
              { type: 'SEMVER', events: [{ introduced: '1.0.0' }, { limit: '1.5.0' }] },
              { type: 'SEMVER', events: [{ introduced: '2.0.0' }, { fixed: '2.1.0' }] },
            ],
          },
        ],
      },
    ]);
    const hit = (v: string) => query(index, 'npm', 'p', v).ids;
    expect(hit('1.4.9')).toEqual(['OSV-1']);
    expect(hit('1.5.0')).toEqual([]);
    expect(hit('1.9.0')).toEqual([]);
    expect(hit('2.0.5')).toEqual(['OSV-1']);
    expect(hit('2.1.0')).toEqual([]);
  });

  it('[OSV-MATCH-KEYS] [OSV-MATCH-BARE-DISTRO] files Ubuntu rows under the release without :Pro/:LTS and under the base', () => {
    const index = indexOfRecords([
      {
        id: 'UBUNTU-CVE-1',
        modified: '2024-01-01T00:00:00Z',
        affected: [
          {
            package: { ecosystem: 'Ubuntu:Pro:18.04:LTS', name: 'openssl' },
            ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '1.1.1-1ubuntu2.1~18.04.23' }] }],
            versions: ['1.1.1-1ubuntu2.1~18.04.20'],
          },
        ],
      },
    ]);
    expect(query(index, 'Ubuntu:18.04', 'openssl', '1.1.1-1ubuntu2.1~18.04.21').ids).toEqual(['UBUNTU-CVE-1']);
    expect(query(index, 'Ubuntu:Pro:18.04:LTS', 'openssl', '1.1.1-1ubuntu2.1~18.04.21').ids).toEqual(['UBUNTU-CVE-1']);
    // A bare Ubuntu query matches enumerated versions only (§4.2 step 6).
    expect(query(index, 'Ubuntu', 'openssl', '1.1.1-1ubuntu2.1~18.04.21').ids).toEqual([]);
    expect(query(index, 'Ubuntu', 'openssl', '1.1.1-1ubuntu2.1~18.04.20').ids).toEqual(['UBUNTU-CVE-1']);
    expect(query(index, 'Ubuntu:22.04', 'openssl', '1.1.1-1ubuntu2.1~18.04.21').ids).toEqual([]);
  });

  it('[OSV-REFRESH] applies refreshes in place: replaced and withdrawn records leave no rows behind', () => {
    const rec = (id: string, fixed: string): OsvRecord => ({
      id,
      modified: '2024-01-01T00:00:00Z',
      affected: [{ package: { ecosystem: 'npm', name: 'p' }, ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }, { fixed }] }] }],
    });
    const index = indexOfRecords([rec('GHSA-a', '2.0.0'), rec('GHSA-c', '2.0.0')]);
    index.applyVuln('GHSA-b', '2024-01-02T00:00:00Z', computeIndexRows(rec('GHSA-b', '3.0.0')));
    expect(query(index, 'npm', 'p', '1.0.0').ids).toEqual(['GHSA-a', 'GHSA-b', 'GHSA-c']);
    index.applyVuln('GHSA-a', '2024-01-02T00:00:00Z', computeIndexRows(rec('GHSA-a', '0.5.0')));
    index.applyVuln('GHSA-c', '2024-01-02T00:00:00Z', null);
    expect(query(index, 'npm', 'p', '1.0.0').ids).toEqual(['GHSA-b']);
    expect(index.stats()).toMatchObject({ vulns: 2, rows: 2 });
    index.applyVuln('GHSA-b', '2024-01-02T00:00:00Z', null);
    index.applyVuln('GHSA-a', '2024-01-02T00:00:00Z', null);
    expect(index.stats()).toEqual({ vulns: 0, rows: 0, packages: 0, commits: 0 });
  });
});
