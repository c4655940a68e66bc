// The shared real records and the bulk files, imported through `platform osv import`, answer queries whose
// expected ids were worked out by reading the records (their affected entries, ranges and versions), not by
// running this implementation. Each case says why. Both database dialects.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.ts';
import type { OsvService } from '../../src/osv/osv.service.ts';
import { corpusCounts } from '../../src/osv/osv.store.ts';
import { dialects, openTestDatabase, type TestDatabase } from '../support/databases.ts';
import { fixturePath, skipWithoutBulk } from '../support/shared.ts';
import { CASES, pkg } from './osv-cases.ts';
import { cliImport, ids, serviceOver, sharedCorpusPaths } from './osv-support.ts';
import { narrowTables } from '../../src/core/db/database.ts';

for (const dialect of dialects) {
  describe.skipIf(skipWithoutBulk)(
    `[OSV-DIALECTS] [OSV-MATCH-ROWS] [OSV-MATCH-KEYS] [OSV-MATCH-PEP503] [OSV-MATCH-COMMIT] [OSV-MATCH-WITHDRAWN] OSV corpus on ${dialect}`,
    () => {
      let database: TestDatabase;
      let service: OsvService;

      beforeAll(async () => {
        database = await openTestDatabase(dialect);
        const report = await cliImport(database, sharedCorpusPaths());
        // 357 + 4291 + 2661 records read; 7 PyPA records fail the schema (bulk/README.md).
        expect(report).toMatchObject({ read: 7309, invalid: 7, interrupted: false });
        expect(report.rejected.map((r) => r.id).sort()).toEqual([
          'PYSEC-2017-27',
          'PYSEC-2019-155',
          'PYSEC-2021-371',
          'PYSEC-2021-424',
          'PYSEC-2021-425',
          'PYSEC-2021-436',
          'PYSEC-2023-80',
        ]);
        expect(report.inserted + report.unchanged + report.older + report.updated).toBe(7302);
        service = await serviceOver(database);
      }, 240_000);

      afterAll(async () => {
        await database?.close();
      });

      it('stores every distinct valid id once', async () => {
        const counts = await corpusCounts(narrowTables(database.db));
        const distinct = new Set<string>();
        const files = sharedCorpusPaths();
        for (const f of (await import('node:fs')).readdirSync(files[0] as string).filter((x) => x.endsWith('.json'))) {
          distinct.add((JSON.parse(readFileSync(`${files[0] as string}/${f}`, 'utf8')) as { id: string }).id);
        }
        for (const bulk of files.slice(1)) {
          for (const line of readFileSync(bulk, 'utf8').split('\n')) if (line.trim()) distinct.add((JSON.parse(line) as { id: string }).id);
        }
        expect(counts.records).toBe(distinct.size - 7);
      });

      for (const c of CASES) {
        it(`${JSON.stringify(c.query)} → ${c.want.length} (${c.why})`, async () => {
          const single = await service.query(c.query);
          expect(ids(single)).toEqual(c.want);
          if (c.want.length === 0) expect(single).toEqual({});
          // Full records on Query; `{id, modified}` on QueryBatch, same ids.
          for (const v of single.vulns ?? []) expect(Object.keys(v)).toEqual(expect.arrayContaining(['id', 'modified']));
          const batch = await service.queryBatch({ queries: [c.query] });
          const item = batch.results?.[0] ?? {};
          expect((item.vulns ?? []).map((v) => v.id)).toEqual(c.want);
          for (const v of item.vulns ?? []) expect(Object.keys(v).sort()).toEqual(['id', 'modified']);
        });
      }

      it('[OSV-ORDER] [OSV-API-SHAPES] answers a batch in input order, each item on its own', async () => {
        const batch = await service.queryBatch({ queries: CASES.map((c) => c.query) });
        expect(batch.results?.map((r) => (r.vulns ?? []).map((v) => v.id))).toEqual(CASES.map((c) => c.want));
      });

      it('[OSV-GETVULN-WITHDRAWN] [OSV-API-SHAPES] returns withdrawn records by id, and full records as stored', async () => {
        const withdrawn = await service.getVuln({ id: 'GHSA-35c4-f3rq-f9g3' });
        expect(withdrawn).toMatchObject({ id: 'GHSA-35c4-f3rq-f9g3', withdrawn: '2018-10-11T17:29:49Z' });
        const stored = JSON.parse(readFileSync(fixturePath('osv', 'records', 'GHSA-qc84-gqf4-9926.json'), 'utf8')) as unknown;
        expect(await service.getVuln({ id: 'GHSA-qc84-gqf4-9926' })).toEqual(stored);
        const single = await service.query(pkg('crates.io', 'crossbeam-utils', '0.8.6'));
        expect(single.vulns?.[0]).toEqual(stored);
      });

      it('[OSV-GETVULN-ALIASES] names the alias group of an unknown id', async () => {
        const error = await service.getVuln({ id: 'CVE-2022-23639' }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(AppError);
        expect(error).toMatchObject({
          code: 'not_found',
          message: 'Vulnerability not found, but the following aliases were: GHSA-qc84-gqf4-9926 RUSTSEC-2022-0041',
        });
        await expect(service.getVuln({ id: 'GHSA-nope-nope-nope' })).rejects.toMatchObject({
          code: 'not_found',
          message: 'Vulnerability not found',
        });
        // Ids are case-sensitive.
        await expect(service.getVuln({ id: 'ghsa-qc84-gqf4-9926' })).rejects.toMatchObject({ code: 'not_found' });
      });

      it('[OSV-MATCH-NOVERSION] [OSV-ORDER] lists every record of a GIT repository without a version', async () => {
        const all = await service.query(pkg('GIT', 'https://github.com/curl/curl'));
        // 96 records name github.com/curl/curl in their first GIT range (read from the records).
        expect(ids(all)).toHaveLength(96);
        expect([...ids(all)].sort()).toEqual(ids(all));
      });
    },
  );
}
