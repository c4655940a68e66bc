// Paged matching over the index (osv-facts.md §4.2, §3): string-mode lookups of large packages with pages,
// deadlines and refreshes, the warm-up of lookups and parse caches, and cursors after a deadline.
import { describe, expect, it, vi } from 'vitest';
import { comparatorFor } from './ecosystems/index.ts';
import { RowMatcher } from './osv.matcher.ts';
import { indexOfRecords, limits, query } from './osv.matching.testkit.ts';
import { matchRows, warmLookups } from './osv.paging.ts';
import { computeIndexRows } from './osv.rows.ts';
import type { OsvRecord } from './osv.schema.ts';

describe('paged matching', () => {
  it('[OSV-MATCH-STRING] [OSV-PAGES] looks large packages up by version in string mode, with pages, deadlines and refreshes', () => {
    const rec = (i: number, versions: string[]): OsvRecord => ({
      id: `OSV-2020-${String(i).padStart(4, '0')}`,
      modified: '2024-01-01T00:00:00Z',
      affected: [{ package: { ecosystem: 'OSS-Fuzz', name: 'big' }, versions }],
    });
    const records = Array.from({ length: 300 }, (_, i) => rec(i, i % 3 === 0 ? ['release-1.2.3', `r${i}`] : [`r${i}`]));
    const index = indexOfRecords(records);
    const want = records.filter((_, i) => i % 3 === 0).map((r) => r.id);
    expect(query(index, 'OSS-Fuzz', 'big', 'release-1.2.3').ids).toEqual(want);
    // Fuzzy: the same tag in other spellings.
    expect(query(index, 'OSS-Fuzz', 'big', '1.2.3').ids).toEqual(want);
    expect(query(index, 'OSS-Fuzz', 'big', 'RELEASE_1_2_3').ids).toEqual(want);
    // Pages of 7 give the same ids.
    const paged: string[] = [];
    let after: string | undefined;
    for (let n = 0; n < 50; n++) {
      const page = query(index, 'OSS-Fuzz', 'big', '1.2.3', 7, after);
      paged.push(...page.ids);
      if (page.cursor === undefined) break;
      after = page.cursor;
    }
    expect(paged).toEqual(want);
    // A refresh changes the list; the lookup follows.
    index.applyVuln('OSV-2020-0001', '2024-02-01T00:00:00Z', computeIndexRows(rec(1, ['release-1.2.3'])));
    index.applyVuln('OSV-2020-0000', '2024-02-01T00:00:00Z', null);
    expect(query(index, 'OSS-Fuzz', 'big', 'release-1.2.3').ids).toEqual(['OSV-2020-0001', ...want.slice(1)]);
    // A deadline stops the lookup too, with a cursor from which the rest follows.
    let calls = 0;
    const rows = index.packageRows('OSS-Fuzz', 'big');
    const matcher = new RowMatcher({ ecosystem: 'OSS-Fuzz', version: 'r5' });
    expect(matchRows(rows, matcher, limits()).vulns.map((v) => v.id)).toEqual(['OSV-2020-0005']);
    const everything = Array.from({ length: 600 }, (_, i) => rec(i, ['v1']));
    const all = indexOfRecords(everything);
    const first = matchRows(all.packageRows('OSS-Fuzz', 'big'), new RowMatcher({ ecosystem: 'OSS-Fuzz', version: 'v1' }), {
      pageSize: 3000,
      after: undefined,
      deadline: 10,
      now: () => (calls++ < 1 ? 0 : 100),
    });
    expect(first.timedOut).toBe(true);
    expect(first.cursor).toBe(first.vulns[first.vulns.length - 1]?.id);
    const rest = matchRows(
      all.packageRows('OSS-Fuzz', 'big'),
      new RowMatcher({ ecosystem: 'OSS-Fuzz', version: 'v1' }),
      limits(3000, first.cursor),
    );
    expect(first.vulns.length + rest.vulns.length).toBe(600);
  });

  it('[OSV-MATCH-STRING] builds the lookups of large string-mode packages ahead of queries, with the same answers', async () => {
    const rec = (i: number, ecosystem: string, name: string, versions: string[]): OsvRecord => ({
      id: `OSV-2021-${String(i).padStart(4, '0')}`,
      modified: '2024-01-01T00:00:00Z',
      affected: [{ package: { ecosystem, name }, versions }],
    });
    const big = Array.from({ length: 100 }, (_, i) => rec(i, 'OSS-Fuzz', 'big', i % 4 === 0 ? ['release-2.0.0'] : [`r${i}`]));
    // Small: never worth a lookup.
    const small = Array.from({ length: 10 }, (_, i) => rec(200 + i, 'OSS-Fuzz', 'small', ['release-2.0.0']));
    const cold = indexOfRecords([...big, ...small]);
    const warm = indexOfRecords([...big, ...small]);
    expect(await warmLookups(warm)).toEqual({ lookups: 1, parsedLists: 0 });
    expect(await warmLookups(warm)).toEqual({ lookups: 0, parsedLists: 0 });
    for (const version of ['release-2.0.0', '2.0.0', 'r5', 'nope']) {
      expect(query(warm, 'OSS-Fuzz', 'big', version).ids, version).toEqual(query(cold, 'OSS-Fuzz', 'big', version).ids);
    }
    expect(query(warm, 'OSS-Fuzz', 'big', '2.0.0').ids).toHaveLength(25);
    // A change to the list drops its lookup; the next warm-up builds it again.
    warm.applyVuln('OSV-2021-0001', '2024-02-01T00:00:00Z', computeIndexRows(rec(1, 'OSS-Fuzz', 'big', ['release-2.0.0'])));
    expect(await warmLookups(warm)).toEqual({ lookups: 1, parsedLists: 0 });
    expect(query(warm, 'OSS-Fuzz', 'big', '2.0.0').ids).toHaveLength(26);
    const stopped = new AbortController();
    stopped.abort();
    expect(await warmLookups(indexOfRecords(big), stopped.signal)).toEqual({ lookups: 0, parsedLists: 0 });
  });

  it('[OSV-MATCH-EVENTS] parses the versions of large packages with a comparator ahead of queries, with the same answers', async () => {
    // Version strings no other test uses: the parse cache is shared by every index of the process.
    const rec = (i: number): OsvRecord => ({
      id: `OSV-2022-${String(i).padStart(4, '0')}`,
      modified: '2024-01-01T00:00:00Z',
      affected: [
        {
          package: { ecosystem: 'npm', name: 'warm-pad' },
          versions: [`77.${i}.0`],
          ranges: [{ type: 'SEMVER', events: [{ introduced: `77.${i}.1` }, { fixed: `77.${i}.9` }] }],
        },
      ],
    });
    const records = Array.from({ length: 100 }, (_, i) => rec(i));
    const small = indexOfRecords(records.slice(0, 10));
    expect(await warmLookups(small)).toEqual({ lookups: 0, parsedLists: 0 });
    const warm = indexOfRecords(records);
    expect(await warmLookups(warm)).toEqual({ lookups: 0, parsedLists: 1 });
    const order = comparatorFor('npm')!;
    const parse = vi.spyOn(order, 'parse');
    try {
      // Every listed and event version is parsed already: a query parses nothing of the rows.
      expect(query(warm, 'npm', 'warm-pad', '77.5.0').ids).toEqual(['OSV-2022-0005']);
      expect(query(warm, 'npm', 'warm-pad', '77.42.3').ids).toEqual(['OSV-2022-0042']);
      expect(parse.mock.calls.map((c) => c[0])).toEqual(['77.42.3']);
      expect(query(warm, 'npm', 'warm-pad', '77.42.9').ids).toEqual([]);
    } finally {
      parse.mockRestore();
    }
  });

  it('[OSV-DEADLINE] stops at the deadline with a cursor after the last record judged', () => {
    const records: OsvRecord[] = [];
    for (let i = 0; i < 1000; i++)
      records.push({
        id: `OSV-${String(i).padStart(4, '0')}`,
        modified: '2024-01-01T00:00:00Z',
        affected: [{ package: { ecosystem: 'npm', name: 'p' }, ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }] }] }],
      });
    const index = indexOfRecords(records);
    let calls = 0;
    const page = matchRows(index.packageRows('npm', 'p'), new RowMatcher({ ecosystem: 'npm', version: '1.0.0' }), {
      pageSize: 3000,
      after: undefined,
      deadline: 10,
      now: () => (calls++ < 1 ? 0 : 100),
    });
    expect(page.timedOut).toBe(true);
    expect(page.vulns.length).toBeGreaterThan(0);
    expect(page.cursor).toBe(page.vulns[page.vulns.length - 1]?.id);
    const rest = matchRows(
      index.packageRows('npm', 'p'),
      new RowMatcher({ ecosystem: 'npm', version: '1.0.0' }),
      limits(3000, page.cursor),
    );
    expect(page.vulns.length + rest.vulns.length).toBe(1000);
  });
});
