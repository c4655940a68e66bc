// The flat index (src/osv/osv.index.ts) against the plain matcher: the synthetic benchmark corpus (bench/osv-corpus.ts)
// is indexed, and sampled queries over every ecosystem it holds (listed versions, event values and their neighbours,
// versions that do not parse, no version, base and Ubuntu-variant keys, no ecosystem, GIT tags, commits, purls) must
// find exactly the ids a straightforward reference finds: every stored row of the package judged by
// RowMatcher.matches on plain row objects, records in id order, each once. Pages of 7 must add up to the same
// answer, and so must the answers after refreshes that replace and withdraw records (including one large enough to
// compact the row storage).
//
// Size: 20,000 records and 4,000 queries in the suite (a few seconds). The size runs with
// `OSV_DIFF_RECORDS=500000 OSV_DIFF_QUERIES=20000 npx vitest run test/osv/osv.flat-index.test.ts` (a few minutes and
// ~3 GiB; docs/osv.md "Operating" gives the last result).
import { describe, expect, it } from 'vitest';
import { rng, SyntheticCorpus } from '../../bench/osv-corpus.ts';
import { ecosystemBase } from '../../src/osv/ecosystems/index.ts';
import { compareIds, CorpusIndex } from '../../src/osv/osv.index.ts';
import { plainRow, RowMatcher, type PlainRow } from '../../src/osv/osv.matcher.ts';
import { warmLookups } from '../../src/osv/osv.paging.ts';
import { matchQuery, parseQuery, type ParsedQuery } from '../../src/osv/osv.query.ts';
import { computeIndexRows, type IndexRowData } from '../../src/osv/osv.rows.ts';
import { ByteArena, encodeBatchItem, encodeBatchResult } from '../../src/osv/osv.batch-answer.ts';
import type { EncodedMessage } from '../../src/grpc/index.ts';

const RECORDS = Number(process.env.OSV_DIFF_RECORDS ?? 20_000);
const QUERIES = Number(process.env.OSV_DIFF_QUERIES ?? 4_000);

/** Keys a row is filed under, written from osv-facts.md §4.1 (independently of osv.index.ts). */
function filingKeys(ecosystem: string): Set<string> {
  const keys = new Set([ecosystem, ecosystemBase(ecosystem)]);
  if (ecosystemBase(ecosystem) === 'Ubuntu') keys.add(ecosystem.replace(/:Pro(?=:|$)/gu, '').replace(/:LTS(?=:|$)/gu, ''));
  return keys;
}

interface RefRow {
  id: string;
  ecosystem: string;
  row: PlainRow;
}

/** The reference: every record's rows as plain objects, looked up by key and name or by name alone. */
class Reference {
  private readonly records = new Map<string, IndexRowData[]>();
  private byKey = new Map<string, RefRow[]>();
  private byName = new Map<string, RefRow[]>();
  private byCommit = new Map<string, string[]>();
  private stale = true;

  apply(id: string, rows: IndexRowData[] | null): void {
    if (rows === null) this.records.delete(id);
    else this.records.set(id, rows);
    this.stale = true;
  }

  private build(): void {
    this.byKey = new Map();
    this.byName = new Map();
    this.byCommit = new Map();
    const push = <T>(map: Map<string, T[]>, key: string, value: T) => {
      const list = map.get(key);
      if (list === undefined) map.set(key, [value]);
      else list.push(value);
    };
    for (const [id, rows] of this.records) {
      for (const data of rows) {
        if (data.kind === 'C') {
          push(this.byCommit, data.name, id);
          continue;
        }
        const ref = { id, ecosystem: data.ecosystem, row: plainRow(data) };
        for (const key of filingKeys(data.ecosystem)) push(this.byKey, `${key}\u0000${data.name}`, ref);
        push(this.byName, data.name, ref);
      }
    }
    this.stale = false;
  }

  query(q: ParsedQuery): string[] {
    if (this.stale) this.build();
    if (q.kind === 'nothing') return [];
    if (q.kind === 'commit') return [...new Set(this.byCommit.get(q.commit) ?? [])].sort(compareIds);
    const rows = (q.ecosystem === '' ? this.byName.get(q.name) : this.byKey.get(`${q.ecosystem}\u0000${q.name}`)) ?? [];
    const matcher = new RowMatcher({ ecosystem: q.ecosystem, version: q.version });
    const ids = new Set<string>();
    for (const ref of rows) if (!ids.has(ref.id) && matcher.matches(ref.row)) ids.add(ref.id);
    return [...ids].sort(compareIds);
  }
}

const UNLIMITED = { pageSize: Number.MAX_SAFE_INTEGER, deadline: Number.MAX_SAFE_INTEGER, now: () => 0 };

function flatIds(index: CorpusIndex, q: ParsedQuery): string[] {
  return matchQuery(index, q, UNLIMITED).vulns.map((v) => v.id);
}

function pagedIds(index: CorpusIndex, q: ParsedQuery, pageSize: number): string[] {
  const out: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = matchQuery(index, q.kind === 'nothing' ? q : { ...q, after }, { ...UNLIMITED, pageSize });
    out.push(...page.vulns.map((v) => v.id));
    if (page.cursor === undefined) return out;
    after = page.cursor;
  }
}

/** Versions to ask about for one row: what it lists and its events, their neighbours, and some that never match. */
function versionsFor(row: IndexRowData, random: () => number): string[] {
  const out = ['', 'not a version!', '1.0.0', '0', '999.0.0'];
  const items = [...(row.values ?? []), ...(row.versions ?? [])];
  for (let i = 0; i < 3 && items.length > 0; i++) {
    const v = items[Math.floor(random() * items.length)]!;
    out.push(
      v,
      `${v}.1`,
      `v${v}`,
      v.replace(/\d+$/u, (d) => String(Number(d) + 1)),
      v.replace(/\d+/u, (d) => String(Math.max(0, Number(d) - 1))),
    );
  }
  return out;
}

/** Query JSON for a row: under its full ecosystem, its base, the Ubuntu variant, and no ecosystem. */
function queriesFor(row: IndexRowData, random: () => number): unknown[] {
  const versions = versionsFor(row, random);
  const version = () => versions[Math.floor(random() * versions.length)]!;
  if (row.kind === 'C') return [{ commit: row.name }, { commit: row.name.toUpperCase() }];
  const ecosystems = [...filingKeys(row.ecosystem)];
  const out: unknown[] = ecosystems.map((ecosystem) => ({ package: { ecosystem, name: row.name }, version: version() }));
  out.push({ package: { ecosystem: row.ecosystem, name: row.name }, version: version() });
  if (random() < 0.2) out.push({ package: { name: row.name }, version: version() || '1.0.0' });
  return out;
}

describe('[OSV-MATCH-EVENTS] [OSV-MATCH-STRING] [OSV-DEDUP] [OSV-PAGES] [OSV-REFRESH] the flat index agrees with the plain matcher', () => {
  it(
    `on ${RECORDS} synthetic records and ${QUERIES} sampled queries over every ecosystem, before and after refreshes`,
    () => {
      const corpus = new SyntheticCorpus({ records: RECORDS, samples: 500 });
      const random = rng(7);
      const index = new CorpusIndex();
      const reference = new Reference();
      const rowsById = new Map<string, IndexRowData[]>();
      const modifiedById = new Map<string, string>();
      for (const record of corpus.records()) {
        const rows = computeIndexRows(record);
        rowsById.set(record.id, rows);
        modifiedById.set(record.id, record.modified);
        index.applyVuln(record.id, record.modified, rows);
        reference.apply(record.id, rows);
      }
      index.seal();
      expect(index.stats().vulns).toBe(rowsById.size);

      // Queries: per ecosystem an equal share of rows, then the corpus' own samples (hits, misses, purls, popular).
      const byEcosystem = new Map<string, IndexRowData[]>();
      for (const rows of rowsById.values())
        for (const row of rows) {
          const key = row.kind === 'C' ? 'commit' : row.ecosystem;
          const list = byEcosystem.get(key) ?? [];
          if (list.length < 5000) list.push(row);
          byEcosystem.set(key, list);
        }
      const requests: unknown[] = [];
      const perEcosystem = Math.ceil((QUERIES * 0.8) / byEcosystem.size);
      for (const rows of byEcosystem.values()) {
        const before = requests.length;
        while (requests.length - before < perEcosystem) requests.push(...queriesFor(rows[Math.floor(random() * rows.length)]!, random));
      }
      for (const pool of corpus.pools.values())
        requests.push(...pool.slice(0, Math.ceil((QUERIES * 0.2) / corpus.pools.size)).map((s) => s.query));
      requests.push({ package: { ecosystem: 'npm', name: 'no-such-package' }, version: '1.0.0' }, { commit: 'ab'.repeat(20) });

      const parsed: ParsedQuery[] = [];
      for (const request of requests) {
        try {
          parsed.push(parseQuery(request));
        } catch {
          // Invalid requests (an unparseable purl) have no answer to compare.
        }
      }
      const queried = new Set(parsed.flatMap((q) => (q.kind === 'package' ? [ecosystemBase(q.ecosystem)] : [q.kind])));
      for (const ecosystem of byEcosystem.keys())
        expect(queried, ecosystem).toContain(ecosystem === 'commit' ? 'commit' : ecosystemBase(ecosystem));

      const compare = (label: string, queries: readonly ParsedQuery[]) => {
        let hits = 0;
        for (const [i, q] of queries.entries()) {
          const want = reference.query(q);
          expect(flatIds(index, q), `${label} ${JSON.stringify(q)}`).toEqual(want);
          if (i % 10 === 0) expect(pagedIds(index, q, 7), `${label} paged ${JSON.stringify(q)}`).toEqual(want);
          if (want.length > 0) hits++;
        }
        // The sample has to exercise matching, not only misses.
        expect(hits, label).toBeGreaterThan(queries.length / 10);
      };
      compare('built', parsed);

      // Refresh: records replaced by other records' rows, withdrawn, and brought back.
      const ids = [...rowsById.keys()];
      const refresh = (share: number) => {
        for (const id of ids) {
          const r = random();
          if (r < share / 2) {
            index.applyVuln(id, modifiedById.get(id)!, null);
            reference.apply(id, null);
          } else if (r < share) {
            const other = rowsById.get(ids[Math.floor(random() * ids.length)]!)!;
            index.applyVuln(id, '2030-01-01T00:00:00Z', other);
            reference.apply(id, other);
          }
        }
        index.seal();
      };
      refresh(0.02);
      compare('after a small refresh', parsed.slice(0, Math.max(500, parsed.length / 4)));
      // Large enough that the rows of replaced records are compacted away.
      refresh(0.6);
      compare('after a large refresh', parsed.slice(0, Math.max(500, parsed.length / 4)));
      for (const id of ids.slice(0, 50)) {
        const entry = index.vuln(id);
        if (entry !== undefined) expect(entry.id).toBe(id);
      }
    },
    RECORDS > 100_000 ? 3_600_000 : 600_000,
  );
});

describe('[OSV-API-SHAPES] QueryBatch items written from the index', () => {
  it('are the bytes of the general writer on both transports, for plain and unusual ids, timestamps and tokens', () => {
    const index = new CorpusIndex();
    const modified = [
      '2024-01-01T00:00:00Z',
      '2024-02-29T23:59:59.123Z',
      '2021-05-06T07:08:09.123456Z',
      '2021-05-06T07:08:09.123456789Z',
      '1970-01-01T00:00:00Z',
      '0001-01-01T00:00:00Z',
      '2024-01-01T00:00:00.000Z',
      '2024-01-01T01:00:00+01:00',
    ];
    const ids = [
      'A-1',
      'A-2',
      'A-3',
      'A-4',
      'GHSA-aaaa-bbbb-cccc',
      'PYSEC-2021-1',
      'Ünïcode-1',
      'quote"and\\slash',
      'tab\tid',
      'x'.repeat(100),
    ];
    const rows = (id: string): IndexRowData[] => [
      { seq: 0, kind: 'E', ecosystem: 'npm', name: id.startsWith('A-') ? 'plain' : `p-${id.length % 2}`, coarseMin: null, coarseMax: null },
    ];
    ids.forEach((id, i) => index.applyVuln(id, modified[i % modified.length]!, rows(id)));
    const bytes = (m: EncodedMessage) => Buffer.from(m.json ?? m.wire ?? new Uint8Array());
    // Items written into one arena (as a QueryBatch answer's are) are checked once all are written: a small chunk
    // size makes items start new chunks, and an item written over another would show here.
    const arena = new ByteArena(64);
    const inArena: { item: EncodedMessage; general: EncodedMessage; label: string }[] = [];
    for (const name of ['plain', 'p-0', 'p-1']) {
      const page = matchQuery(index, { kind: 'package', ecosystem: 'npm', name, version: '', after: undefined }, UNLIMITED);
      for (const form of ['json', 'wire'] as const)
        for (const token of [undefined, 'UDpHSFNB', 'weird"token']) {
          for (let n = 0; n <= page.records.length; n++) {
            const records = page.records.slice(0, n);
            const general = encodeBatchResult(
              { ...(n > 0 ? { vulns: records.map((rec) => index.entry(rec)) } : {}), ...(token ? { next_page_token: token } : {}) },
              form,
            );
            expect(bytes(encodeBatchItem(index, records, token, form)).equals(bytes(general)), `${form} ${name} ${n} ${token}`).toBe(true);
            inArena.push({ item: encodeBatchItem(index, records, token, form, arena), general, label: `${form} ${name} ${n} ${token}` });
          }
        }
    }
    expect(inArena.length).toBeGreaterThan(10);
    for (const { item, general, label } of inArena) expect(bytes(item).equals(bytes(general)), `arena ${label}`).toBe(true);
    // Each id with each timestamp, one at a time (a record's modified changes on refresh).
    for (const time of modified)
      for (const id of ids) {
        index.applyVuln(id, time, rows(id));
        const rec = index.ids.find(id);
        for (const form of ['json', 'wire'] as const)
          expect(
            bytes(encodeBatchItem(index, [rec], undefined, form)).equals(
              bytes(encodeBatchResult({ vulns: [{ id, modified: time }] }, form)),
            ),
            `${form} ${id} ${time}`,
          ).toBe(true);
      }
  });
});

describe('[OSV-MATCH-STRING] [OSV-REFRESH] row compaction', () => {
  it('renumbers rows without making warmed string-mode lookups stale, and they answer as before', async () => {
    const index = new CorpusIndex();
    const npm = (i: number): IndexRowData[] => [
      { seq: 0, kind: 'V', ecosystem: 'npm', name: `pkg-${i % 50}`, coarseMin: null, coarseMax: null, versions: ['1.0.0'] },
    ];
    // Records applied first get the low row numbers, so withdrawing them moves every later row when rows are compacted.
    for (let i = 0; i < 10_000; i++) index.applyVuln(`NPM-${String(i).padStart(5, '0')}`, '2024-01-01T00:00:00Z', npm(i));
    const repo = 'github.com/acme/tool';
    for (let i = 0; i < 200; i++)
      index.applyVuln(`GIT-${String(i).padStart(4, '0')}`, '2024-01-01T00:00:00Z', [
        { seq: 0, kind: 'V', ecosystem: 'GIT', name: repo, coarseMin: null, coarseMax: null, versions: [`v1.${i % 20}.0`] },
      ]);
    index.seal();
    expect((await warmLookups(index)).lookups).toBeGreaterThanOrEqual(1);
    const git = index.packageRows('GIT', repo)!;
    const stamp = index.listStamp[git.list];
    const rowsBefore = Array.from(git.rows);
    const query = parseQuery({ package: { ecosystem: 'GIT', name: `https://${repo}` }, version: 'v1.7.0' });
    const before = matchQuery(index, query, UNLIMITED).vulns.map((v) => v.id);
    expect(before).toHaveLength(10);

    // 8,000 of 10,200 rows withdrawn: more than 4,096 and a quarter of all rows, so seal() compacts them away.
    for (let i = 0; i < 8_000; i++) index.applyVuln(`NPM-${String(i).padStart(5, '0')}`, '2025-01-01T00:00:00Z', null);
    index.seal();
    const after = index.packageRows('GIT', repo)!;
    expect(Array.from(after.rows)).not.toEqual(rowsBefore);
    expect(index.listStamp[git.list]).toBe(stamp);
    expect((await warmLookups(index)).lookups).toBe(0);
    expect(matchQuery(index, query, UNLIMITED).vulns.map((v) => v.id)).toEqual(before);
  });
});
