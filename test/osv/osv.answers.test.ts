// Stored answers (src/osv/osv.answer.ts): a Query answer spliced from the stored JSON text and protobuf bytes must
// be exactly the answer converted per call from the record as imported, on both transports and both dialects; an
// import that replaces a record clears its answers, and the next pass computes them from the new copy.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformOSVClient } from '../../src/grpc/generated/platform/v1/PlatformOSV.ts';
import { encodePendingAnswers } from '../../src/osv/osv.answer.ts';
import { importRecords } from '../../src/osv/osv.importer.ts';
import { listSourceFiles, readSources } from '../../src/osv/osv.sources.ts';
import { findLiveAnswers } from '../../src/osv/osv.store.ts';
import { bearer, grpcCall, startGrpcTestPlatform, tokenWith, type GrpcTestPlatform } from '../grpc/grpc-support.ts';
import { dialects } from '../support/databases.ts';
import { bulkPath, fixturePath, skipWithoutBulk } from '../support/shared.ts';
import { narrowTables } from '../../src/core/db/database.ts';

type Json = Record<string, unknown>;

for (const dialect of dialects) {
  describe.skipIf(skipWithoutBulk)(`PlatformOSV stored answers on ${dialect}`, () => {
    let p: GrpcTestPlatform;
    let token: string;
    let client: PlatformOSVClient;
    /** Version-less package queries that together return every live record with a package. */
    let queries: Json[] = [];

    const pendingCount = async () =>
      Number(
        (
          await sql<{ n: number }>`select count(*) as n from osv_records where withdrawn = 0 and answer_wire is null`.execute(
            p.platform.ctx.database.db,
          )
        ).rows[0]?.n,
      );
    const clearAnswers = () =>
      sql`update osv_records set answer_json = null, answer_wire = null, answer_size = null`.execute(p.platform.ctx.database.db);

    /** The HTTP answer as sent (text) and the gRPC answer as decoded, for every query. */
    async function answers(): Promise<{ http: string[]; grpc: unknown[] }> {
      const http: string[] = [];
      const grpcAnswers: unknown[] = [];
      for (const q of queries) {
        const r = await fetch(`${p.restUrl}/platform/v1/osv/query`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(q),
        });
        expect(r.status).toBe(200);
        http.push(await r.text());
        grpcAnswers.push(await grpcCall((cb) => client.Query(q, bearer(token), cb as never)));
      }
      return { http, grpc: grpcAnswers };
    }

    beforeAll(async () => {
      p = await startGrpcTestPlatform(dialect, { env: { OSV_REFRESH_INTERVAL_MS: '0' } });
      token = await tokenWith(p.platform, ['CAP_PLATFORM_OSV_READ']);
      client = p.osvClient();
      await importRecords(
        p.platform.ctx.database.db,
        readSources(await listSourceFiles([fixturePath('osv', 'records'), bulkPath('go-vulndb.jsonl')])),
      );
      const runtime = p.services.osv;
      await runtime.keeper.whenReady(Date.now() + 60_000);
      await runtime.keeper.refresh();
      await runtime.answers.whenIdle();
      const rows = await p.platform.ctx.database.db
        .selectFrom('osv_affected')
        .select(['ecosystem', 'name'])
        .where('kind', '!=', 'C')
        .where('ecosystem', '!=', 'GIT')
        .distinct()
        .execute();
      // Every package of the real records, plus enough Go modules to make answers of many records.
      queries = rows.slice(0, 400).map((r) => ({ package: { ecosystem: r.ecosystem, name: r.name } }));
    }, 240_000);

    afterAll(async () => {
      await p?.close();
    });

    it('[OSV-ANSWERS] encodes every live record after import, and the spliced answers equal the per-call conversion on both transports', async () => {
      expect(queries.length).toBeGreaterThan(100);
      expect(await pendingCount()).toBe(0);
      const stored = await answers();
      expect(stored.http.filter((t) => t.includes('"vulns"')).length).toBeGreaterThan(100);

      await clearAnswers();
      expect(await pendingCount()).toBeGreaterThan(1000);
      const converted = await answers();
      const differing = stored.http.findIndex((t, i) => t !== converted.http[i]);
      if (differing !== -1) {
        const a = stored.http[differing] ?? '';
        const b = converted.http[differing] ?? '';
        let at = 0;
        while (at < a.length && a[at] === b[at]) at++;
        expect.fail(
          `answer ${differing} differs at ${at}: stored …${a.slice(Math.max(0, at - 80), at + 80)}… converted …${b.slice(Math.max(0, at - 80), at + 80)}…`,
        );
      }
      expect(stored.grpc).toEqual(converted.grpc);

      const pass = await encodePendingAnswers(narrowTables(p.platform.ctx.database.db), { slice: 97 });
      expect(pass.failed).toBe(0);
      expect(pass.encoded).toBeGreaterThan(1000);
      expect(await pendingCount()).toBe(0);
      expect(await answers()).toEqual(stored);
      // 2,400 calls over both transports: more than the default limit on a loaded two-core machine.
    }, 180_000);

    it('[OSV-ANSWERS] finds the answers of any number of ids, leaving out withdrawn and unknown ones, pending ones as records', async () => {
      const db = p.platform.ctx.database.db;
      // Independent of the test before: answers it cleared and did not get to encode again are encoded here.
      await encodePendingAnswers(narrowTables(db), { slice: 97 });
      const all = await db
        .selectFrom('osv_records')
        .select(['id', 'withdrawn', 'record', 'answer_json', 'answer_size'])
        .orderBy('id')
        .execute();
      const withdrawn = all.filter((r) => r.withdrawn === 1).map((r) => r.id);
      expect(withdrawn.length).toBeGreaterThan(0);
      const live = new Map(all.filter((r) => r.withdrawn === 0).map((r) => [r.id, r]));
      const liveIds = [...live.keys()];
      // Sizes around each padded statement size, and more than one chunk of 500.
      for (const count of [0, 1, 2, 4, 5, 17, 64, 65, 130, 257, 499, 500, 501, 1203]) {
        const ids = [...liveIds.slice(0, count), ...withdrawn.slice(0, 2), 'NOT-A-RECORD-1'];
        for (const form of ['json', 'wire'] as const) {
          const found = await findLiveAnswers(narrowTables(db), ids, form);
          expect([...found.keys()].sort()).toEqual(liveIds.slice(0, count).sort());
          for (const [id, answer] of found) {
            const row = live.get(id)!;
            expect(answer.pending).toBe(false);
            expect(answer.size).toBe(row.answer_size);
            if (form === 'json') expect(Buffer.from(answer.json ?? '').toString()).toBe(row.answer_json);
            else expect(answer.wire?.length).toBeGreaterThan(0);
          }
        }
      }
      // A record without answers yet comes as its imported text, to be converted per call.
      const [first] = liveIds;
      await sql`update osv_records set answer_json = null, answer_wire = null, answer_size = null where id = ${first}`.execute(db);
      const pending = (await findLiveAnswers(narrowTables(db), [first!], 'wire')).get(first!);
      expect(pending).toEqual({ pending: true, json: live.get(first!)!.record, size: Buffer.byteLength(live.get(first!)!.record) });
      await encodePendingAnswers(narrowTables(db));
      expect(await pendingCount()).toBe(0);
    });

    it('[OSV-ANSWERS] an import that replaces a record clears its answers; the next pass encodes the new copy', async () => {
      const db = p.platform.ctx.database.db;
      const row = await db
        .selectFrom('osv_records')
        .select(['id', 'record'])
        .where('withdrawn', '=', 0)
        .where('record', 'like', '%"affected"%')
        .orderBy('id')
        .executeTakeFirstOrThrow();
      const record = JSON.parse(row.record) as Json & { affected: { package: { ecosystem: string; name: string } }[] };
      const changed = { ...record, modified: '2099-01-01T00:00:00Z', summary: 'replaced copy' };
      await importRecords(db, [{ source: 'test', value: changed }]);
      const after = await db
        .selectFrom('osv_records')
        .select(['answer_json', 'answer_wire'])
        .where('id', '=', row.id)
        .executeTakeFirstOrThrow();
      expect(after).toEqual({ answer_json: null, answer_wire: null });

      const pkg = record.affected[0]!.package;
      const find = async () => {
        const r = await fetch(`${p.restUrl}/platform/v1/osv/query`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ package: pkg }),
        });
        return ((await r.json()) as { vulns?: Json[] }).vulns?.find((v) => v.id === row.id);
      };
      const runtime = p.services.osv;
      await runtime.keeper.refresh();
      await runtime.answers.whenIdle();
      expect(await pendingCount()).toBe(0);
      expect(await find()).toMatchObject({ summary: 'replaced copy', modified: '2099-01-01T00:00:00Z' });
      const encoded = await db.selectFrom('osv_records').select('answer_json').where('id', '=', row.id).executeTakeFirstOrThrow();
      expect(JSON.parse(encoded.answer_json ?? 'null')).toMatchObject({ id: row.id, summary: 'replaced copy' });
    });
  });
}
