// `npx tsx bench/osv-answers.bench.ts [--rounds N]`: the background pass that stores each OSV record's answers
// (src/osv/osv.answer.ts, run by every replica after a start or an import), over the real bulk files and test
// fixtures in a temporary SQLite database, in this process: the whole pass per record (reading rows, encoding,
// storing) in wall and CPU time, and the encoding alone, each with the generated codec's own text encoding and with
// Node's (src/grpc/text-encoding.ts, what the platform uses), in turns. Prints figures only; not part of `npm test`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configureTextEncoding } from '@bufbuild/protobuf/wire';
import { sql } from 'kysely';
import type { PlatformDatabase } from '../src/app/database.ts';
import { PLATFORM_MIGRATIONS } from '../src/app/migrations.ts';
import { narrowTables, openDatabase } from '../src/core/db/database.ts';
import { migrate } from '../src/core/db/migrator.ts';
import { runtimeTextEncoding, useNodeTextEncoding } from '../src/grpc/text-encoding.ts';
import { encodeAnswer, encodePendingAnswers } from '../src/osv/osv.answer.ts';
import { importRecords } from '../src/osv/osv.importer.ts';
import type { OsvRecord } from '../src/osv/osv.schema.ts';
import type { OsvTables } from '../src/osv/osv.table.ts';
import { listSourceFiles, readSources } from '../src/osv/osv.sources.ts';
import { percentile } from './stats.ts';

const SOURCES = ['test/fixtures/osv/records', '../shared/osv-data/bulk/go-vulndb.jsonl', '../shared/osv-data/bulk/pypa-pysec.jsonl'];
const roundsAt = process.argv.indexOf('--rounds');
const ROUNDS = roundsAt === -1 ? 3 : Number(process.argv[roundsAt + 1]);

type Variant = 'runtime' | 'node';
const useVariant = (variant: Variant) => (variant === 'node' ? useNodeTextEncoding() : configureTextEncoding(runtimeTextEncoding));

const dir = mkdtempSync(join(tmpdir(), 'osv-answers-bench-'));
const handle = await openDatabase<PlatformDatabase>(`sqlite:${join(dir, 'platform.db')}`);
try {
  await migrate(handle, PLATFORM_MIGRATIONS);
  await importRecords(handle.db, readSources(await listSourceFiles(SOURCES)));
  const db = narrowTables<PlatformDatabase, OsvTables>(handle.db);
  const rows = await handle.db.selectFrom('osv_records').select('record').where('withdrawn', '=', 0).execute();
  const records = rows.map((r) => JSON.parse(r.record ?? '{}') as OsvRecord);
  console.log(`OSV answers pass: ${records.length} live records (test fixtures + bulk files), SQLite, node ${process.version}`);

  const pass: Record<Variant, { wall: number[]; cpu: number[] }> = { runtime: { wall: [], cpu: [] }, node: { wall: [], cpu: [] } };
  const encode: Record<Variant, number[]> = { runtime: [], node: [] };
  for (let round = 0; round <= ROUNDS; round++) {
    for (const variant of ['runtime', 'node'] as const) {
      useVariant(variant);
      await sql`update osv_records set answer_json = null, answer_wire = null, answer_size = null`.execute(handle.db);
      const cpu = process.cpuUsage();
      const result = await encodePendingAnswers(db);
      const used = process.cpuUsage(cpu);
      if (result.failed > 0 || result.encoded !== records.length)
        throw new Error(`pass encoded ${result.encoded}, failed ${result.failed}`);
      const started = process.cpuUsage();
      for (const record of records) encodeAnswer(record);
      const encodeUsed = process.cpuUsage(started);
      // Round 0 warms both up.
      if (round === 0) continue;
      pass[variant].wall.push((result.ms * 1000) / records.length);
      pass[variant].cpu.push((used.user + used.system) / records.length);
      encode[variant].push((encodeUsed.user + encodeUsed.system) / records.length);
    }
  }
  useNodeTextEncoding();
  const median = (xs: number[]) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    ).toFixed(1);
  for (const variant of ['runtime', 'node'] as const) {
    console.log(
      `${variant === 'node' ? "Node's Buffer encoder   " : "runtime's TextEncoder   "}: pass ${median(pass[variant].wall)} µs per record wall, ${median(pass[variant].cpu)} µs CPU; ` +
        `encoding alone (encodeAnswer) ${median(encode[variant])} µs CPU (median of ${ROUNDS} rounds, in turns)`,
    );
  }
} finally {
  await handle.close();
  rmSync(dir, { recursive: true, force: true });
}
