// `platform osv import` (docs/osv.md): sources (directories, JSON Lines, all.zip archives), invalid records
// reported with id and reason, upserts decided by `modified`, withdrawn records losing their index rows,
// interrupted imports (in-process and a killed process) re-run without duplicates, and replicas picking up an
// import without a restart. Both dialects.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync, crc32 } from 'node:zlib';
import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/core/logger.ts';
import { DEFERRED_INDEXES } from '../../src/osv/osv.batch-writer.ts';
import { importFiles, importRecords } from '../../src/osv/osv.importer.ts';
import { buildIndex, createIndexKeeper, staticIndexSource } from '../../src/osv/osv.loader.ts';
import type { OsvRecord } from '../../src/osv/osv.schema.ts';
import type { OsvTables } from '../../src/osv/osv.table.ts';
import { createOsvService } from '../../src/osv/osv.service.ts';
import { listSourceFiles, readSources } from '../../src/osv/osv.sources.ts';
import { corpusCounts } from '../../src/osv/osv.store.ts';
import { runCli, spawnPlatform, waitForExit } from '../support/cli.ts';
import { dialects, openTestDatabase, type TestDatabase } from '../support/databases.ts';
import { bulkPath, fixturePath, skipWithoutBulk } from '../support/shared.ts';
import { TEST_OSV_CONFIG, cliEnv, cliImport, ids, serviceOver } from './osv-support.ts';
import { narrowTables } from '../../src/core/db/database.ts';

/** A minimal ZIP writer (deflate), enough to build OSV.dev-style all.zip archives in tests. */
function zip(entries: { name: string; data: Buffer }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const compressed = deflateRawSync(e.data);
    const crc = crc32(e.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, compressed);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(compressed.length, 20);
    central.writeUInt32LE(e.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + compressed.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

const readRecord = (file: string): OsvRecord => JSON.parse(readFileSync(fixturePath('osv', 'records', file), 'utf8')) as OsvRecord;
const tmp = () => mkdtempSync(join(tmpdir(), 'osv-import-'));

/** What a corpus holds, independent of how it got there. */
async function snapshot(database: TestDatabase): Promise<{ records: string[]; rows: number; aliases: number }> {
  const records = await database.db.selectFrom('osv_records').select(['id', 'modified_key', 'withdrawn']).orderBy('id').execute();
  const rows = await database.db
    .selectFrom('osv_affected')
    .select(sql<number>`count(*)`.as('n'))
    .executeTakeFirstOrThrow();
  const aliases = await database.db
    .selectFrom('osv_aliases')
    .select(sql<number>`count(*)`.as('n'))
    .executeTakeFirstOrThrow();
  return { records: records.map((r) => `${r.id}|${r.modified_key}|${r.withdrawn}`), rows: Number(rows.n), aliases: Number(aliases.n) };
}

/** Every live record has index rows and every index row belongs to a live record (no half-imported records). */
async function expectConsistent(database: TestDatabase): Promise<void> {
  const orphans = await sql<{
    n: number;
  }>`select count(*) as n from osv_affected a where not exists (select 1 from osv_records r where r.id = a.vuln_id and r.withdrawn = 0)`.execute(
    database.db,
  );
  expect(Number(orphans.rows[0]?.n)).toBe(0);
  const bare = await sql<{
    n: number;
  }>`select count(*) as n from osv_records r where r.withdrawn = 0 and r.record like '%"package"%' and not exists (select 1 from osv_affected a where a.vuln_id = r.id)`.execute(
    database.db,
  );
  expect(Number(bare.rows[0]?.n)).toBe(0);
}

for (const dialect of dialects) {
  describe(`osv import on ${dialect}`, () => {
    const open: TestDatabase[] = [];
    const fresh = async () => {
      const d = await openTestDatabase(dialect);
      open.push(d);
      return d;
    };
    afterEach(async () => {
      for (const d of open.splice(0)) await d.close();
    });

    it('[OSV-IMPORT-VALIDATE] [OSV-IMPORT-UPSERT] [OSV-IMPORT-SOURCES] reports invalid records with id and reason, prints a summary, and changes nothing on a re-run', async () => {
      const database = await fresh();
      const env = cliEnv(database);
      const run = await runCli(['osv', 'import', fixturePath('osv', 'records-test-fixtures')], env);
      expect(run.code, run.stderr).toBe(0);
      // 34 of the 75 fixtures fail the schema (records-test-fixtures/README.md).
      expect(run.stdout).toMatch(/Imported 75 records .* 34 invalid\./u);
      expect(run.stderr).toContain('invalid record CVE-2023-41045 in ');
      expect(run.stderr).toMatch(
        /invalid record CVE-2023-41045 in \S+CVE-2023-41045\.nointroduced\.json: affected\[0\]\.ranges\[0\]\.events: must contain an introduced event/u,
      );
      const before = await snapshot(database);
      const again = await runCli(['osv', 'import', '--json', fixturePath('osv', 'records-test-fixtures')], env);
      expect(JSON.parse(again.stdout)).toMatchObject({ inserted: 0, updated: 0, invalid: 34 });
      expect(await snapshot(database)).toEqual(before);
      await expectConsistent(database);
      expect((await runCli(['osv', 'import', '/nonexistent/osv'], env)).stderr).toBe(
        'error: /nonexistent/osv: no such file or directory\n',
      );
      expect((await runCli(['osv', 'status', '--json'], env)).stdout).toContain(`"records":${before.records.length}`);
    });

    it('[OSV-IMPORT-UPSERT] [OSV-IMPORT-WITHDRAWN] keeps the copy with the newer modified, and drops the index rows of a withdrawn record', async () => {
      const database = await fresh();
      const dir = tmp();
      await cliImport(database, [fixturePath('osv', 'records')]);
      let service = await serviceOver(database);
      // Both HSEC-2023-0006 files carry the same modified; the first by name (GHC) was kept.
      expect(ids(await service.query({ package: { ecosystem: 'Hackage', name: 'x509-validation' }, version: '1.4.5' }))).toEqual([]);
      const hackage = { ...readRecord('HSEC-2023-0006.json'), modified: '2023-08-01T00:00:00Z' };
      writeFileSync(join(dir, 'newer.json'), JSON.stringify(hackage));
      writeFileSync(
        join(dir, 'older.json'),
        JSON.stringify({ ...readRecord('GHSA-qc84-gqf4-9926.json'), modified: '2020-01-01T00:00:00Z', summary: 'older' }),
      );
      expect(await cliImport(database, [dir])).toMatchObject({ updated: 1, older: 1, inserted: 0 });
      service = await serviceOver(database);
      expect(ids(await service.query({ package: { ecosystem: 'Hackage', name: 'x509-validation' }, version: '1.4.5' }))).toEqual([
        'HSEC-2023-0006',
      ]);
      expect(ids(await service.query({ package: { ecosystem: 'GHC', name: 'RTS' }, version: '9.2.2' }))).toEqual([]);
      expect(await service.getVuln({ id: 'GHSA-qc84-gqf4-9926' })).not.toMatchObject({ summary: 'older' });

      const withdrawn = { ...readRecord('GHSA-qc84-gqf4-9926.json'), modified: '2030-01-01T00:00:00Z', withdrawn: '2030-01-01T00:00:00Z' };
      writeFileSync(join(dir, 'newer.json'), JSON.stringify(withdrawn));
      expect(await cliImport(database, [join(dir, 'newer.json')])).toMatchObject({ updated: 1, withdrawn: 1 });
      const rows = await database.db.selectFrom('osv_affected').select('seq').where('vuln_id', '=', 'GHSA-qc84-gqf4-9926').execute();
      expect(rows).toEqual([]);
      service = await serviceOver(database);
      expect(ids(await service.query({ package: { ecosystem: 'crates.io', name: 'crossbeam-utils' }, version: '0.8.6' }))).toEqual([
        'RUSTSEC-2022-0041',
      ]);
      expect(await service.getVuln({ id: 'GHSA-qc84-gqf4-9926' })).toMatchObject({ withdrawn: '2030-01-01T00:00:00Z' });
      await expectConsistent(database);
    });

    it('[OSV-IMPORT-SOURCES] imports OSV.dev all.zip archives of one or many ecosystems', async () => {
      const database = await fresh();
      const dir = tmp();
      const entry = (file: string) => ({
        name: file.replace(/\.json$/u, '').replace(/\.[a-z-]+$/u, '') + '.json',
        data: readFileSync(fixturePath('osv', 'records', file)),
      });
      writeFileSync(
        join(dir, 'all.zip'),
        zip([
          entry('GHSA-qc84-gqf4-9926.json'),
          entry('RUSTSEC-2022-0041.json'),
          entry('ALSA-2023_7109.json'),
          { name: 'broken.json', data: Buffer.from('{"id":') },
        ]),
      );
      writeFileSync(
        join(dir, 'PyPI-all.zip'),
        zip([{ name: 'PYSEC-2022-42969.json', data: readFileSync(fixturePath('osv', 'records', 'PYSEC-2022-42969.json')) }]),
      );
      const report = await cliImport(database, [join(dir, 'all.zip'), join(dir, 'PyPI-all.zip')]);
      expect(report).toMatchObject({ read: 5, inserted: 4, invalid: 1 });
      expect(report.rejected[0]).toMatchObject({ source: `${join(dir, 'all.zip')}!broken.json` });
      expect(report.rejected[0]?.id).toBeUndefined();
      expect(report.rejected[0]?.reason).toMatch(/^invalid JSON/u);
      const service = await serviceOver(database);
      expect(ids(await service.query({ package: { purl: 'pkg:cargo/crossbeam-utils@0.8.6' } }))).toEqual([
        'GHSA-qc84-gqf4-9926',
        'RUSTSEC-2022-0041',
      ]);
      expect(ids(await service.query({ package: { ecosystem: 'PyPI', name: 'py' }, version: '1.0.0' }))).toEqual(['PYSEC-2022-42969']);
    });

    it.skipIf(skipWithoutBulk)(
      '[OSV-IMPORT-RESUME] stops an import between batches and finishes it on a re-run, as a clean import would',
      async () => {
        const clean = await fresh();
        const interrupted = await fresh();
        const files = await listSourceFiles([bulkPath('go-vulndb.jsonl')]);
        const cleanReport = await importRecords(clean.db, readSources(files), { batchSize: 500 });
        expect(cleanReport).toMatchObject({ read: 4291, inserted: 4291, interrupted: false });

        const controller = new AbortController();
        const partial = await importRecords(interrupted.db, readSources(files), {
          batchSize: 500,
          signal: controller.signal,
          onProgress: (p) => {
            if (p.written >= 1000) controller.abort();
          },
        });
        expect(partial.interrupted).toBe(true);
        expect(partial.inserted).toBe(1000);
        expect((await corpusCounts(narrowTables(interrupted.db))).records).toBe(1000);
        await expectConsistent(interrupted);

        const rest = await importRecords(interrupted.db, readSources(files), { batchSize: 500 });
        expect(rest).toMatchObject({ inserted: 3291, unchanged: 1000, interrupted: false });
        expect(await snapshot(interrupted)).toEqual(await snapshot(clean));
      },
    );

    it('[OSV-IMPORT-SOURCES] [OSV-IMPORT-RESUME] prepares records on a thread of their own as in line: same report, same corpus, the same stop and the same errors', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'osv-thread-'));
      writeFileSync(join(dir, 'extra.jsonl'), '{"id":"NO-MODIFIED-1"}\nnot json\n\n{"id":"NO-MODIFIED-2","modified":"yesterday"}\n');
      const files = await listSourceFiles([fixturePath('osv', 'records'), join(dir, 'extra.jsonl')]);
      const inLine = await fresh();
      const onThread = await fresh();
      const a = await importRecords(inLine, readSources(files), { batchSize: 40 });
      const b = await importFiles(onThread, files, { batchSize: 40, onThread: true });
      expect(b.invalid).toBe(3);
      expect(b.inserted).toBeGreaterThan(300);
      expect({ ...b, ms: 0 }).toEqual({ ...a, ms: 0 });
      expect(await snapshot(onThread)).toEqual(await snapshot(inLine));
      const rows = (d: TestDatabase) => d.db.selectFrom('osv_affected').selectAll().orderBy('vuln_id').orderBy('seq').execute();
      expect(await rows(onThread)).toEqual(await rows(inLine));

      // Stopped after the first batch: only that batch is stored, and the thread ends with the import.
      const stopped = await fresh();
      const controller = new AbortController();
      const partial = await importFiles(stopped, files, {
        batchSize: 40,
        onThread: true,
        signal: controller.signal,
        onProgress: (p) => {
          if (p.written >= 40) controller.abort();
        },
      });
      expect(partial).toMatchObject({ interrupted: true, inserted: 40 });
      expect((await corpusCounts(narrowTables(stopped.db))).records).toBe(40);

      // A source that cannot be read fails the import with the reader's own error.
      writeFileSync(join(dir, 'broken.zip'), 'PK this is not an archive');
      const broken = await listSourceFiles([join(dir, 'broken.zip')]);
      const inLineError = await importRecords(await fresh(), readSources(broken)).then(
        () => undefined,
        (error: Error) => error,
      );
      expect(inLineError?.message).toBeTruthy();
      await expect(importFiles(await fresh(), broken, { onThread: true })).rejects.toThrow(inLineError?.message);
    });

    it.skipIf(skipWithoutBulk)('stores the same corpus through the SQLite writer and the portable one', async () => {
      const viaHandle = await fresh();
      const viaKysely = await fresh();
      const paths = [fixturePath('osv', 'records'), bulkPath('pypa-pysec.jsonl')];
      const a = await importRecords(viaHandle, readSources(await listSourceFiles(paths)), { batchSize: 700 });
      const b = await importRecords(viaKysely.db, readSources(await listSourceFiles(paths)), { batchSize: 700 });
      expect({ ...a, ms: 0 }).toEqual({ ...b, ms: 0 });
      expect(await snapshot(viaHandle)).toEqual(await snapshot(viaKysely));
      const rows = (d: TestDatabase) => d.db.selectFrom('osv_affected').selectAll().orderBy('vuln_id').orderBy('seq').execute();
      expect(await rows(viaHandle)).toEqual(await rows(viaKysely));
    });

    it.skipIf(skipWithoutBulk)(
      '[OSV-IMPORT-RESUME] leaves only whole batches when the import process is killed, and a re-run completes it',
      async () => {
        const database = await fresh();
        const env = cliEnv(database);
        const child = spawnPlatform(['osv', 'import', '--batch-size', '50', '--quiet', bulkPath('go-vulndb.jsonl')], env);
        const exited = waitForExit(child, 60_000);
        // Kill it as soon as some batches are stored.
        for (let i = 0; i < 600; i++) {
          const n = await database.db
            .selectFrom('osv_records')
            .select(sql<number>`count(*)`.as('n'))
            .executeTakeFirst()
            .catch(() => undefined);
          if (Number(n?.n ?? 0) > 0) break;
          await new Promise((r) => setTimeout(r, 25));
        }
        child.kill('SIGKILL');
        await exited;
        // A COMMIT sent just before the kill may still land (PostgreSQL finishes it for the dead client): wait until
        // the count stops moving.
        let stored = (await corpusCounts(narrowTables(database.db))).records;
        for (let settled = 0; settled < 3;) {
          await new Promise((r) => setTimeout(r, 200));
          const now = (await corpusCounts(narrowTables(database.db))).records;
          settled = now === stored ? settled + 1 : 0;
          stored = now;
        }
        expect(stored).toBeGreaterThan(0);
        expect(stored % 50 === 0 || stored === 4291).toBe(true);
        await expectConsistent(database);
        const report = await cliImport(database, [bulkPath('go-vulndb.jsonl')]);
        expect(report.inserted + report.unchanged).toBe(4291);
        expect(report.unchanged).toBe(stored);
        expect((await corpusCounts(narrowTables(database.db))).records).toBe(4291);
        await expectConsistent(database);
      },
      120_000,
    );

    it('[OSV-IMPORT-BULK] builds the deferred indexes of a bulk load at its end, as the migrations define them, and restores them after a killed one', async () => {
      const database = await fresh();
      const indexes = async () =>
        dialect === 'sqlite'
          ? (
              await sql<{
                name: string;
                sql: string;
              }>`select name, sql from sqlite_master where type = 'index' and tbl_name like 'osv_%' and sql is not null order by name`.execute(
                database.db,
              )
            ).rows
          : (
              await sql<{
                name: string;
                sql: string;
              }>`select indexname as name, indexdef as sql from pg_indexes where schemaname = current_schema() and tablename like 'osv_%' order by indexname`.execute(
                database.db,
              )
            ).rows;
      const migrated = await indexes();
      // The writer's copies of the definitions are the migrations' own (PostgreSQL writes them back in its own words).
      if (dialect === 'sqlite') expect(migrated).toEqual([...DEFERRED_INDEXES].sort((a, b) => (a.name < b.name ? -1 : 1)));
      else expect(migrated.map((i) => i.name)).toEqual(expect.arrayContaining(DEFERRED_INDEXES.map((i) => i.name)));
      // A bulk load (empty corpus) and an import into a filled one both leave them as they were.
      await importRecords(database, readSources(await listSourceFiles([fixturePath('osv', 'records')])), { batchSize: 3 });
      expect(await indexes()).toEqual(migrated);
      const bump = { ...readRecord('RUSTSEC-2022-0041.json'), modified: '2031-01-01T00:00:00Z' };
      const dir = tmp();
      writeFileSync(join(dir, 'bump.json'), JSON.stringify(bump));
      expect(await importRecords(database, readSources(await listSourceFiles([dir])))).toMatchObject({ updated: 1 });
      expect(await indexes()).toEqual(migrated);
      // A bulk load killed before its end leaves them dropped; the next import builds them before writing.
      for (const index of DEFERRED_INDEXES) await sql.raw(`drop index "${index.name}"`).execute(database.db);
      writeFileSync(join(dir, 'bump.json'), JSON.stringify({ ...bump, modified: '2032-01-01T00:00:00Z' }));
      expect(await importRecords(database, readSources(await listSourceFiles([dir])))).toMatchObject({ updated: 1 });
      expect(await indexes()).toEqual(migrated);
      await expectConsistent(database);
    });

    it('[OSV-INDEX-STRINGS] [OSV-REFRESH] builds the index again once refreshes have interned enough, which frees the strings of replaced records', async () => {
      const database = await fresh();
      await importRecords(database, readSources(await listSourceFiles([fixturePath('osv', 'records')])));
      const db: Kysely<OsvTables> = narrowTables(database.db);
      const keeper = createIndexKeeper({ db, log: createLogger({ level: 'silent' }), intervalMs: 0, rebuildMinBytes: 1, rebuildShare: 0 });
      keeper.start();
      try {
        const first = await keeper.whenReady(Date.now() + 20_000);
        if (first === undefined) throw new Error('no index');
        const built = first.internedBytes();
        const dir = tmp();
        writeFileSync(join(dir, 'r.json'), JSON.stringify({ ...readRecord('RUSTSEC-2022-0041.json'), modified: '2031-02-03T04:05:06Z' }));
        expect(await importRecords(database, readSources(await listSourceFiles([dir])))).toMatchObject({ updated: 1 });
        expect(await keeper.refresh()).toBe(1);
        // The refreshed index kept the replaced copy's strings beside the new ones…
        expect(first.internedBytes()).toBeGreaterThan(built);
        const deadline = Date.now() + 20_000;
        while (keeper.current() === first && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        // …and the rebuilt one holds what a fresh build holds, and answers the same.
        const current = keeper.current();
        expect(current).not.toBe(first);
        const fresh = await buildIndex(db);
        expect(current?.internedBytes()).toBeLessThan(first.internedBytes());
        expect(current?.stats()).toEqual(fresh.stats());
        const service = (index: typeof fresh) =>
          createOsvService({
            db,
            index: staticIndexSource(index),
            config: TEST_OSV_CONFIG,
            clock: { now: () => Date.now() },
            log: createLogger({ level: 'silent' }),
          });
        const query = { package: { ecosystem: 'crates.io', name: 'crossbeam-utils' } };
        expect(await service(current as typeof fresh).queryBatch({ queries: [query] })).toEqual(
          await service(fresh).queryBatch({ queries: [query] }),
        );
      } finally {
        await keeper.close();
      }
    });

    it('[OSV-REFRESH] brings a running replica up to date after an import, without a restart', async () => {
      const database = await fresh();
      const keeper = createIndexKeeper({ db: narrowTables(database.db), log: createLogger({ level: 'silent' }), intervalMs: 50 });
      keeper.start();
      try {
        const service = createOsvService({
          db: narrowTables(database.db),
          index: keeper,
          config: TEST_OSV_CONFIG,
          clock: { now: () => Date.now() },
          log: createLogger({ level: 'silent' }),
        });
        const query = { package: { ecosystem: 'crates.io', name: 'crossbeam-utils' }, version: '0.8.6' };
        expect(await service.query(query)).toEqual({});
        await cliImport(database, [fixturePath('osv', 'records')]);
        const deadline = Date.now() + 20_000;
        while (ids(await service.query(query)).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        expect(ids(await service.query(query))).toEqual(['GHSA-qc84-gqf4-9926', 'RUSTSEC-2022-0041']);
        // A withdrawal reaches it too. (Query already hides it as soon as it is stored, because full records are
        // read from the database; QueryBatch answers from the index alone, so it shows when the refresh landed.)
        const dir = tmp();
        writeFileSync(
          join(dir, 'w.json'),
          JSON.stringify({ ...readRecord('RUSTSEC-2022-0041.json'), modified: '2030-01-01T00:00:00Z', withdrawn: '2030-01-01T00:00:00Z' }),
        );
        await cliImport(database, [dir]);
        const batchIds = async () => ((await service.queryBatch({ queries: [query] })).results?.[0]?.vulns ?? []).map((v) => v.id);
        while ((await batchIds()).length === 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        expect(await batchIds()).toEqual(['GHSA-qc84-gqf4-9926']);
        expect(ids(await service.query(query))).toEqual(['GHSA-qc84-gqf4-9926']);
        // The refreshed index equals one built from scratch.
        const rebuilt = createOsvService({
          db: narrowTables(database.db),
          index: staticIndexSource(await buildIndex(narrowTables(database.db))),
          config: TEST_OSV_CONFIG,
          clock: { now: () => Date.now() },
          log: createLogger({ level: 'silent' }),
        });
        expect(keeper.current()?.stats()).toEqual((await buildIndex(narrowTables(database.db))).stats());
        expect(await rebuilt.query({ package: { ecosystem: 'npm', name: 'lodash' } })).toEqual(
          await service.query({ package: { ecosystem: 'npm', name: 'lodash' } }),
        );
      } finally {
        await keeper.close();
      }
    }, 60_000);
  });
}

describe('the import thread', () => {
  it('[OSV-IMPORT-SOURCES] starts from any working directory (it finds tsx from its own module, as a CLI run elsewhere needs)', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'osv-cwd-'));
    const script = `
      const { listSourceFiles } = await import(${JSON.stringify(new URL('../../src/osv/osv.sources.ts', import.meta.url).href)});
      const { preparedOnThread } = await import(${JSON.stringify(new URL('../../src/osv/osv.import-thread.ts', import.meta.url).href)});
      let n = 0;
      for await (const chunk of preparedOnThread(await listSourceFiles([${JSON.stringify(fixturePath('osv', 'records'))}]))) n += chunk.length;
      console.log(n);`;
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx/esm'), '--input-type=module', '-e', script], {
      cwd: elsewhere,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(Number(out.trim())).toBe((await listSourceFiles([fixturePath('osv', 'records')])).length);
  }, 60_000);
});
