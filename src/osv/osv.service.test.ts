// Query/QueryBatch/GetVuln semantics (osv-facts.md §3): pagination with small pages, deadlines and the size limit
// returning partial pages, and the batch rules, over a small corpus (request validation: osv.query.test.ts).
import { fromJson, toBinary, toJsonString, type JsonValue } from '@bufbuild/protobuf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, openTestDatabase, type TestDatabase } from '../../test/support/databases.ts';
import { TEST_OSV_CONFIG, ids } from '../../test/osv/osv-support.ts';
import type { Clock } from '../core/clock.ts';
import { createLogger } from '../core/logger.ts';
import type { OsvConfig } from './osv.config.ts';
import { importRecords } from './osv.importer.ts';
import { buildIndex, staticIndexSource, type IndexSource } from './osv.loader.ts';
import type { OsvRecord } from './osv.schema.ts';
import { narrowTables } from '../core/db/database.ts';
import { FIRST_PAGE_TOKEN } from './osv.query.ts';
import { createOsvService, type OsvService, type VulnerabilityListJson } from './osv.service.ts';
import { JSON_WRITE, VulnerabilityListSchema } from '../grpc/index.ts';

function record(id: string, name: string, events: { introduced?: string; fixed?: string }[], extra: Partial<OsvRecord> = {}): OsvRecord {
  return {
    id,
    modified: '2024-01-01T00:00:00Z',
    affected: [{ package: { ecosystem: 'npm', name }, ranges: [{ type: 'SEMVER', events }] }],
    ...extra,
  };
}

/** A stepping clock: every reading is `step` ms after the previous one. */
function steppingClock(step: number): Clock {
  let t = 1_000_000;
  return { now: () => (t += step) };
}

for (const dialect of dialects) {
  describe(`service over a small corpus on ${dialect}`, () => {
    let database: TestDatabase;
    const service = async (config: Partial<OsvConfig> = {}, clock?: Clock, source?: IndexSource): Promise<OsvService> =>
      createOsvService({
        db: narrowTables(database.db),
        index: source ?? staticIndexSource(await buildIndex(narrowTables(database.db))),
        config: { ...TEST_OSV_CONFIG, ...config },
        clock: clock ?? { now: () => Date.now() },
        log: createLogger({ level: 'silent' }),
      });

    beforeAll(async () => {
      database = await openTestDatabase(dialect);
      const records: OsvRecord[] = [];
      // Five records for `paged`, one of them with two matching ranges (returned once, also across pages).
      for (const id of ['GHSA-a', 'GHSA-b', 'GHSA-c', 'GHSA-d', 'GHSA-e']) records.push(record(id, 'paged', [{ introduced: '0' }]));
      records[1] = {
        ...records[1]!,
        affected: [
          ...(records[1]!.affected ?? []),
          { package: { ecosystem: 'npm', name: 'paged' }, ranges: [{ type: 'SEMVER', events: [{ introduced: '1.0.0' }] }] },
        ],
      };
      // 600 records for `big`, to run into deadlines.
      for (let i = 0; i < 600; i++)
        records.push(record(`GHSA-big-${String(i).padStart(3, '0')}`, 'big', [{ introduced: '0' }], { details: 'x'.repeat(500) }));
      records.push(record('GHSA-gone', 'paged', [{ introduced: '0' }], { withdrawn: '2024-02-01T00:00:00Z' }));
      const report = await importRecords(
        database.db,
        records.map((value, i) => ({ source: `r${i}`, value })),
      );
      expect(report).toMatchObject({ inserted: 606, invalid: 0, withdrawn: 1 });
    });

    afterAll(async () => {
      await database?.close();
    });

    it('[OSV-PAGES] [OSV-DEDUP] [OSV-ORDER] pages a Query with a small page size, each id once, in id order', async () => {
      const s = await service({ OSV_QUERY_PAGE_SIZE: 2 });
      const pages: string[][] = [];
      let token: string | undefined;
      do {
        const page: VulnerabilityListJson = await s.query({
          package: { ecosystem: 'npm', name: 'paged' },
          version: '2.0.0',
          ...(token ? { page_token: token } : {}),
        });
        pages.push(ids(page));
        token = page.next_page_token;
      } while (token !== undefined && pages.length < 10);
      expect(pages).toEqual([['GHSA-a', 'GHSA-b'], ['GHSA-c', 'GHSA-d'], ['GHSA-e']]);
    });

    it('[OSV-PAGES] keeps tokens valid across a restart and a rebuilt index', async () => {
      const first = await (await service({ OSV_QUERY_PAGE_SIZE: 2 })).query({ package: { ecosystem: 'npm', name: 'paged' } });
      expect(first.next_page_token).toBeDefined();
      const restarted = await service({ OSV_QUERY_PAGE_SIZE: 2 });
      expect(ids(await restarted.query({ package: { ecosystem: 'npm', name: 'paged' }, page_token: first.next_page_token! }))).toEqual([
        'GHSA-c',
        'GHSA-d',
      ]);
    });

    it('[OSV-PAGES] [OSV-API-SHAPES] [OSV-API-EMPTY] pages each batch item on its own and leaves exhausted items without a token', async () => {
      const s = await service({ OSV_BATCH_PAGE_SIZE: 2 });
      const q = { package: { ecosystem: 'npm', name: 'paged' } };
      const first = await s.queryBatch({
        queries: [q, { package: { ecosystem: 'npm', name: 'nothing' }, version: '1' }, { package: { purl: 'pkg:unknown/x@1' } }],
      });
      expect(first.results).toEqual([
        {
          vulns: [
            { id: 'GHSA-a', modified: '2024-01-01T00:00:00Z' },
            { id: 'GHSA-b', modified: '2024-01-01T00:00:00Z' },
          ],
          next_page_token: expect.any(String) as string,
        },
        {},
        {},
      ]);
      const second = await s.queryBatch({ queries: [{ ...q, page_token: first.results![0]!.next_page_token! }] });
      expect(second.results?.[0]?.vulns?.map((v) => v.id)).toEqual(['GHSA-c', 'GHSA-d']);
      expect(await s.queryBatch({ queries: [] })).toEqual({});
    });

    it('[OSV-API-SHAPES] hands each batch result to the transports written in their form, as the generated codec writes it', async () => {
      const s = await service({ OSV_BATCH_PAGE_SIZE: 2 });
      const request = {
        queries: [
          { package: { ecosystem: 'npm', name: 'paged' } },
          { package: { ecosystem: 'npm', name: 'nothing' }, version: '1' },
          { package: { ecosystem: 'npm', name: 'big' } },
        ],
      };
      const json = await s.queryBatch(request);
      const results = json.results ?? [];
      expect(results.map((r) => r.vulns?.length ?? 0)).toEqual([2, 0, 2]);
      const text = (await s.queryBatchEncoded(request, 'json')).results ?? [];
      const wire = (await s.queryBatchEncoded(request, 'wire')).results ?? [];
      results.forEach((result, i) => {
        const message = fromJson(VulnerabilityListSchema, result as unknown as JsonValue);
        expect(text[i]?.json?.toString()).toBe(toJsonString(VulnerabilityListSchema, message, JSON_WRITE));
        expect(Buffer.from(wire[i]?.wire ?? []).equals(toBinary(VulnerabilityListSchema, message))).toBe(true);
      });
      expect(text).toHaveLength(3);
      expect(wire).toHaveLength(3);
      expect(await s.queryBatchEncoded({ queries: [] }, 'wire')).toEqual({});
    });

    it('[OSV-BATCH-BOUND] caps the results of one batch answer; later items resume from their tokens', async () => {
      const s = await service({ OSV_BATCH_PAGE_SIZE: 1000, OSV_BATCH_MAX_RESULTS: 3 });
      const q = { package: { ecosystem: 'npm', name: 'paged' } };
      const first = await s.queryBatch({ queries: [q, q] });
      expect(first.results?.[0]?.vulns?.map((v) => v.id)).toEqual(['GHSA-a', 'GHSA-b', 'GHSA-c']);
      expect(first.results?.[1]).toEqual({ next_page_token: FIRST_PAGE_TOKEN });
      const next = await s.queryBatch({
        queries: [
          { ...q, page_token: first.results![0]!.next_page_token! },
          { ...q, page_token: first.results![1]!.next_page_token! },
        ],
      });
      expect(next.results?.[0]?.vulns?.map((v) => v.id)).toEqual(['GHSA-d', 'GHSA-e']);
      expect(next.results?.[0]?.next_page_token).toBeUndefined();
      expect(next.results?.[1]?.vulns?.map((v) => v.id)).toEqual(['GHSA-a']);
    });

    it('[OSV-DEADLINE] returns a partial page with a token when the deadline passes, and the rest on the next pages', async () => {
      // Every clock reading moves 30 s: the 20 s budget has passed at the first deadline check (every 256 rows).
      const s = await service({}, steppingClock(30_000));
      const seen: string[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const page = await s.query({
          package: { ecosystem: 'npm', name: 'big' },
          version: '1.0.0',
          ...(token ? { page_token: token } : {}),
        });
        seen.push(...ids(page));
        token = page.next_page_token;
        pages++;
      } while (token !== undefined && pages < 50);
      expect(pages).toBeGreaterThan(1);
      expect(seen).toHaveLength(600);
      expect(new Set(seen).size).toBe(600);
    });

    it('[OSV-DEADLINE] [OSV-TOKENS-INVALID] gives batch items that could not start before the deadline the start-over token', async () => {
      const s = await service({ OSV_BATCH_TIMEOUT_MS: 0 }, steppingClock(1));
      const result = await s.queryBatch({
        queries: [{ package: { ecosystem: 'npm', name: 'paged' } }, { package: { purl: 'pkg:yeet/x' } }],
      });
      expect(result.results).toEqual([{ next_page_token: FIRST_PAGE_TOKEN }, {}]);
      // The start-over token is accepted and means "from the beginning".
      const again = await (await service()).query({ package: { ecosystem: 'npm', name: 'paged' }, page_token: FIRST_PAGE_TOKEN });
      expect(ids(again)).toHaveLength(5);
    });

    it('[OSV-SIZE-LIMIT] cuts a Query page at the response size soft limit', async () => {
      const s = await service({ OSV_RESPONSE_SOFT_LIMIT_BYTES: 2048 });
      const first = await s.query({ package: { ecosystem: 'npm', name: 'big' } });
      expect(ids(first).length).toBeGreaterThan(0);
      expect(ids(first).length).toBeLessThan(10);
      const second = await s.query({ package: { ecosystem: 'npm', name: 'big' }, page_token: first.next_page_token! });
      expect(ids(second)[0]! > ids(first)[ids(first).length - 1]!).toBe(true);
    });

    it('[OSV-MATCH-WITHDRAWN] [OSV-GETVULN-WITHDRAWN] never matches withdrawn records but returns them by id', async () => {
      const s = await service();
      expect(ids(await s.query({ package: { ecosystem: 'npm', name: 'paged' } }))).not.toContain('GHSA-gone');
      expect(await s.getVuln({ id: 'GHSA-gone' })).toMatchObject({ id: 'GHSA-gone', withdrawn: '2024-02-01T00:00:00Z' });
    });

    it('[OSV-GETVULN-ERRORS] validates GetVuln ids', async () => {
      const s = await service();
      await expect(s.getVuln({})).rejects.toMatchObject({ code: 'parameter_invalid', message: 'ID is required' });
      await expect(s.getVuln({ id: 'x'.repeat(101) })).rejects.toMatchObject({ code: 'parameter_invalid', message: 'ID is too long' });
      await expect(s.getVuln({ id: 'é'.repeat(51) })).rejects.toMatchObject({ message: 'ID is too long' });
      await expect(s.getVuln({ id: 'x'.repeat(100) })).rejects.toMatchObject({ code: 'not_found', message: 'Vulnerability not found' });
    });

    it('waits for the first index build within the deadline, then answers unavailable', async () => {
      const loading: IndexSource = { current: () => undefined, whenReady: async () => undefined };
      const s = await service({}, undefined, loading);
      await expect(s.query({ package: { ecosystem: 'npm', name: 'paged' } }, { deadline: Date.now() + 50 })).rejects.toMatchObject({
        code: 'unavailable',
      });
      // Validation still comes first.
      await expect(s.query({ package: { ecosystem: 'Bogus', name: 'x' }, version: '1' })).rejects.toMatchObject({
        message: 'invalid ecosystem',
      });
    });
  });
}
