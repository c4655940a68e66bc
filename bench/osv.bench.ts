// `npm run bench:osv [-- --records N] [-- --pg postgres://…]`: PlatformOSV at scale, in one run.
//  1. a synthetic corpus (default 500,000 records, bench/osv-corpus.ts) plus the real bulk files, imported into
//     SQLite and, when a PostgreSQL URL is given (--pg, OSV_BENCH_DATABASE_URL or TEST_DATABASE_URL), PostgreSQL;
//  2. the in-memory index in this process: build time and memory, matching and the service without a transport;
//  3. the baseline: a naive linear scan over the same records, in this process;
//  4. Query and QueryBatch(1000) latency over gRPC and over HTTP against `platform serve` in a process of its own
//     (as `npm start` runs it), once it has settled (lookups of large packages warmed, answers stored), measured by a
//     client in a worker thread of this process;
//     then eight bursts of gRPC calls 1.5 s apart (the replica's collections inside and between them), and the floor:
//     the same client against servers answering fixed bytes (bench/osv-floor.ts), idle and busy;
//  5. the codec figures (`--only codec` runs just these, in a minute): a record's stored answers written by the
//     generated codec (@bufbuild/protobuf) with the runtime's text encoding and with Node's; a Query answer's cost per
//     record converted by the generated codec and spliced from stored forms (src/grpc/spliced-answers.ts); a
//     QueryBatch(1000) answer written by the generated codec and by its fast path (src/osv/osv.batch-answer.ts).
// Targets (issue 20), each on an idle machine and while a second process keeps one core busy (a CPU loop, `node -e
// 'for(;;);'`, started by this benchmark; "busy" below): Query p99 < 5 ms over HTTP and gRPC; popular packages p99
// < 20 ms; QueryBatch(1000) p50 < 30 ms; the replica's longest GC pause during the latency runs < 10 ms (perf_hooks
// 'gc' entries, observed inside `platform serve` through a `--import` preload, counted from the client's first request
// to its last; those before or after, while the client starts, are printed apart); import ≥ 10,000 records/s into SQLite
// while busy; replica RSS < 600 MiB at 500,000 records and < 2 GiB at 2,000,000 (`--records 2000000`). Every figure
// line carries the load average. `--skip-scan` leaves out the naive scan, `--skip-serve` the served latency runs.
// Not part of `npm test`. Prints the figures only.
import { spawn } from 'node:child_process';
import { appendFileSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';
import { startFloorServers } from './osv-floor.ts';
import pg from 'pg';
import { loadPlatformConfig } from '../src/app/config.ts';
import { narrowTables, openDatabase } from '../src/core/db/database.ts';
import { migrate } from '../src/core/db/migrator.ts';
import type { PlatformDatabase } from '../src/app/database.ts';
import { PLATFORM_MIGRATIONS } from '../src/app/migrations.ts';
import { createLogger } from '../src/core/logger.ts';
import { create, fromBinary, fromJson, toBinary, toJsonString, type JsonValue } from '@bufbuild/protobuf';
import { TimestampSchema } from '@bufbuild/protobuf/wkt';
import { configureTextEncoding } from '@bufbuild/protobuf/wire';
import { JSON_WRITE, messageToJson } from '../src/grpc/codec.ts';
import { BatchVulnerabilityListSchema, VulnerabilityListSchema, VulnerabilitySchema } from '../src/grpc/generated/es/platform/v1/osv_pb.ts';
import { PLATFORM_PROTO_FILES, PROTO_ROOT } from '../src/grpc/proto-files.ts';
import { EncodedMessage } from '../src/grpc/rpc.ts';
import { prepareElement, sharedElementsOf, splicedBytes, splicedJson } from '../src/grpc/spliced-answers.ts';
import { runtimeTextEncoding, useNodeTextEncoding } from '../src/grpc/text-encoding.ts';
import { encodeAnswer } from '../src/osv/osv.answer.ts';
import { encodeBatchResult, type BatchResultJson } from '../src/osv/osv.batch-answer.ts';
import { validateOsvRecord } from '../src/osv/osv.schema.ts';
import { comparatorFor, normalizePackageName, type VersionOrder } from '../src/osv/ecosystems/index.ts';
import { importFiles } from '../src/osv/osv.importer.ts';
import { compareIds, CorpusIndex } from '../src/osv/osv.index.ts';
import { buildIndex, staticIndexSource } from '../src/osv/osv.loader.ts';
import { plainRow, type PlainRow } from '../src/osv/osv.matcher.ts';
import { computeIndexRows, normalizeRepo } from '../src/osv/osv.rows.ts';
import type { OsvAffected, OsvRecord } from '../src/osv/osv.schema.ts';
import { matchQuery, parseQuery } from '../src/osv/osv.query.ts';
import { createOsvService } from '../src/osv/osv.service.ts';
import { listSourceFiles, readSources } from '../src/osv/osv.sources.ts';
import { SyntheticCorpus, type SampleQuery } from './osv-corpus.ts';
import { percentile } from './stats.ts';

const MiB = 1024 * 1024;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
}

const RECORDS = Number(arg('records') ?? 500_000);
const PG_URL = arg('pg') ?? process.env.OSV_BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
const SINGLE_QUERIES = Number(arg('queries') ?? 2000);
const BATCHES = Number(arg('batches') ?? 20);
const SCAN_QUERIES = Number(arg('scan-queries') ?? 20);
/**
 * `--keep DIR`: the run's directory is DIR and stays; a later run with the same DIR and --records skips generating and
 * importing (and its replica finds the answers stored), so the serving figures can be repeated in minutes.
 */
const KEEP = arg('keep');
const BULK = ['../shared/osv-data/bulk/go-vulndb.jsonl', '../shared/osv-data/bulk/pypa-pysec.jsonl'];

const gc = (globalThis as { gc?: () => void }).gc;
function settle(): void {
  for (let i = 0; i < 3; i++) gc?.();
}

function stats(ms: number[]): { p50: number; p99: number; mean: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean: ms.reduce((s, x) => s + x, 0) / ms.length };
}

const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const lines: string[] = [];
function report(line: string): void {
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  lines.push(line);
  console.log(`${line} [load ${load}]`);
}

/**
 * The "busy" condition: a second process that keeps one core busy with a CPU loop, for as long as `work` runs. (A
 * second import would also do, but its load comes and goes with its batches; the loop is steady.)
 */
const BUSY_LOOP = ['-e', 'for (;;);'];
const BUSY = `busy: \`node ${BUSY_LOOP.join(' ')}\` started by the benchmark keeps one core busy`;
async function whileBusy<T>(work: () => Promise<T>): Promise<T> {
  const loop = spawn(process.execPath, BUSY_LOOP, { stdio: 'ignore' });
  try {
    return await work();
  } finally {
    const exited = once(loop, 'exit');
    loop.kill('SIGKILL');
    await exited;
  }
}

type Condition = 'idle' | 'busy';
const CONDITIONS: readonly Condition[] = ['idle', 'busy'];

/** Runs `work` in a condition. */
function inCondition<T>(condition: Condition, work: () => Promise<T>): Promise<T> {
  return condition === 'busy' ? whileBusy(work) : work();
}

/**
 * One full collection (`gc()`): the shortest wall time of five (on the shared machine the longer ones are time the
 * process waited for a core), the CPU time of all its threads for that one, and the heap left after it.
 */
function fullCollection(): { ms: number; cpuMs: number; heapMiB: number } {
  settle();
  let best = Infinity;
  let cpuMs = NaN;
  for (let i = 0; i < 5; i++) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    gc?.();
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    if (ms < best) {
      best = ms;
      cpuMs = (used.user + used.system) / 1000;
    }
  }
  return { ms: gc ? best : NaN, cpuMs, heapMiB: process.memoryUsage().heapUsed / MiB };
}

async function writeCorpus(dir: string): Promise<{ path: string; samples: SampleQuery[]; heavy: SampleQuery[]; ms: number }> {
  const path = join(dir, 'synthetic.jsonl');
  const corpus = new SyntheticCorpus({ records: RECORDS });
  const started = performance.now();
  if (KEEP !== undefined && existsSync(join(dir, 'imported'))) {
    // A kept directory of an earlier run: the same generator yields the same records and samples; nothing is written.
    for (const _record of corpus.records());
    return { path, samples: corpus.mix(5000), heavy: corpus.pools.get('popular') ?? [], ms: performance.now() - started };
  }
  const out = createWriteStream(path);
  let buffer = '';
  for (const record of corpus.records()) {
    buffer += JSON.stringify(record) + '\n';
    if (buffer.length > 4 * MiB) {
      if (!out.write(buffer)) await once(out, 'drain');
      buffer = '';
    }
  }
  out.end(buffer);
  await once(out, 'finish');
  return { path, samples: corpus.mix(5000), heavy: corpus.pools.get('popular') ?? [], ms: performance.now() - started };
}

async function importInto(url: string, paths: string[], label: string, schema?: string): Promise<void> {
  const handle = await openDatabase<PlatformDatabase>(url, schema ? { schema } : {});
  try {
    await migrate(handle, PLATFORM_MIGRATIONS);
    for (const path of paths) {
      const files = await listSourceFiles([path]);
      const started = performance.now();
      const cpu = process.cpuUsage();
      const r = await importFiles(handle, files, { batchSize: 2000 });
      const ms = performance.now() - started;
      const used = process.cpuUsage(cpu);
      const cpuSeconds = (used.user + used.system) / 1e6;
      report(
        `import ${label} ${path.endsWith('synthetic.jsonl') ? 'synthetic' : path.split('/').pop()}: ${r.read} records in ${fmt(ms / 1000, 1)} s = ` +
          `${Math.round((r.read * 1000) / ms)} records/s wall, ${Math.round(r.read / cpuSeconds)} records per CPU-second of this process (${r.invalid} invalid)`,
      );
    }
  } finally {
    await handle.close();
  }
}

/** The request objects of the sampled queries, in a fixed mixed order. */
function queryMix(samples: SampleQuery[]): Record<string, unknown>[] {
  return samples.map((s) => s.query as Record<string, unknown>);
}

/**
 * The latency client, run in a worker thread (plain JS: it needs only node:http, grpc-js and proto-loader) so
 * that receiving answers does not share the server's event loop: a real client is another program. One request
 * at a time: single queries (warm-up first), popular packages only, then batches of 1000. Latency runs to the
 * last byte of the answer on both transports, without decoding it (over HTTP the JSON is not parsed, over gRPC
 * the message bytes are not decoded): decoding is the client's own work and its cost depends on the client's
 * language (a JS protobuf decode of a 270-record answer takes longer than the server's whole answer).
 */
const LATENCY_CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const { transport, target, token, queries, heavy, singles, batches, modules, serverPid, bursts } = workerData;
const now = () => Number(process.hrtime.bigint()) / 1e6;
// The server's CPU time (user + system, ms) from /proc: per request it does not depend on how busy the machine is.
const serverCpu = () => {
  const fields = require('node:fs').readFileSync('/proc/' + serverPid + '/stat', 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
};
let query, batch;
if (transport === 'http') {
  const http = require('node:http');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const post = (path, body) => new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(body));
    const req = http.request(target + path, { method: 'POST', agent, headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json', 'content-length': payload.length } }, (res) => {
      let bytes = 0;
      res.on('data', (c) => (bytes += c.length));
      res.on('end', () => (res.statusCode === 200 ? resolve(bytes) : reject(new Error(path + ': HTTP ' + res.statusCode))));
    });
    req.on('error', reject);
    req.end(payload);
  });
  query = (q) => post('/platform/v1/osv/query', q);
  batch = (qs) => post('/platform/v1/osv/querybatch', { queries: qs });
} else {
  const grpc = require(modules.grpc);
  const loader = require(modules.protoLoader);
  const definition = loader.loadSync(modules.protoFiles, { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true, includeDirs: [modules.protoRoot] });
  const service = definition['platform.v1.PlatformOSV'];
  // A 1 MiB HTTP/2 receive window, as grpc-java's default and what grpc-go's BDP estimation (osv-scanner) grows
  // to: with Node's 64 KiB default a 300 kB answer waits for several WINDOW_UPDATE round trips.
  const client = new grpc.Client(target, grpc.credentials.createInsecure(), { 'grpc-node.flow_control_window': 1024 * 1024, 'grpc.enable_channelz': 0 });
  const metadata = new grpc.Metadata();
  metadata.set('authorization', 'Bearer ' + token);
  // Requests are encoded as grpc-js clients do; answers are kept as the bytes received (see above).
  const call = (method, request) => new Promise((resolve, reject) =>
    client.makeUnaryRequest(service[method].path, service[method].requestSerialize, (bytes) => bytes, request, metadata, (e, v) => (e ? reject(e) : resolve(v.length))));
  query = (q) => call('Query', q);
  batch = (qs) => call('QueryBatch', { queries: qs });
}
async function timed(list, fn) {
  const out = [];
  for (const item of list) {
    const started = now();
    await fn(item);
    out.push(now() - started);
  }
  return out;
}
// Wall-clock milliseconds (the replica's GC log uses the same clock), so its collections can be placed against
// the span in which requests were in flight.
const wall = () => performance.timeOrigin + performance.now();
async function inBursts({ count, queriesEach, gapMs }) {
  for (const q of queries.slice(0, 50)) await query(q);
  const out = [];
  for (let b = 0; b < count; b++) {
    await new Promise((resolve) => setTimeout(resolve, gapMs));
    const from = wall();
    const offset = (b * 1000) % Math.max(1, queries.length - 1000);
    await batch(queries.slice(offset, offset + 1000));
    const single = await timed(Array.from({ length: queriesEach }, (_, i) => queries[(offset + i) % queries.length]), query);
    out.push({ from, to: wall(), single });
  }
  return out;
}
(async () => {
  if (bursts) return parentPort.postMessage({ bursts: await inBursts(bursts) });
  const from = wall();
  for (const q of queries.slice(0, 200)) await query(q);
  const cpu0 = serverCpu();
  const single = await timed(Array.from({ length: singles }, (_, i) => queries[i % queries.length]), query);
  const cpu1 = serverCpu();
  const popular = await timed(heavy.slice(0, 100), query);
  const cpu2 = serverCpu();
  const sets = Array.from({ length: batches + 2 }, (_, i) => {
    const offset = (i * 1000) % Math.max(1, queries.length - 1000);
    return queries.length >= 1000 ? queries.slice(offset, offset + 1000) : Array.from({ length: 1000 }, (_, k) => queries[k % queries.length]);
  });
  const cpu3 = serverCpu();
  const batchTimes = (await timed(sets, batch)).slice(2);
  const cpu4 = serverCpu();
  const window = { from, to: wall() };
  parentPort.postMessage({ single, popular, batch: batchTimes, window, cpu: { single: cpu1 - cpu0, popular: cpu2 - cpu1, batch: cpu4 - cpu3 } });
})().catch((error) => parentPort.postMessage({ error: String(error && error.stack || error) }));
`;

/** What a latency client measured: per-call times (ms), its requests' window, and the server's CPU per phase. */
interface LatencyResult {
  single: number[];
  popular: number[];
  batch: number[];
  window: RequestWindow;
  cpu: { single: number; popular: number; batch: number };
}

/** Where a latency client sends its requests: the server's address for the transport, its token and its pid. */
interface LatencyTarget {
  transport: 'http' | 'grpc';
  target: string;
  token: string;
  serverPid: number;
}

/** Runs LATENCY_CLIENT in a worker thread against `to` with `data` (queries, the plan); resolves with its answer. */
async function runLatencyClient<T>(label: string, to: LatencyTarget, data: Record<string, unknown>): Promise<T> {
  const require = createRequire(import.meta.url);
  const modules = {
    grpc: require.resolve('@grpc/grpc-js'),
    protoLoader: require.resolve('@grpc/proto-loader'),
    protoFiles: [...PLATFORM_PROTO_FILES],
    protoRoot: PROTO_ROOT,
  };
  const worker = new Worker(LATENCY_CLIENT, { eval: true, workerData: { ...to, ...data, modules } });
  const result = await new Promise<T & { error?: string }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
  if (result.error !== undefined) throw new Error(`${label} client: ${result.error}`);
  return result;
}

async function latency(
  label: string,
  transport: 'http' | 'grpc',
  platform: PlatformProcess,
  queries: Record<string, unknown>[],
  heavy: Record<string, unknown>[],
): Promise<void> {
  const target = transport === 'http' ? platform.http : platform.grpc;
  if (process.env.OSV_BENCH_REPLICA_LOG) appendFileSync(process.env.OSV_BENCH_REPLICA_LOG, `=== bench: ${label} latency runs start\n`);
  const gcFrom = platform.gcMark();
  const result = await runLatencyClient<LatencyResult>(
    label,
    { transport, target, token: platform.token, serverPid: platform.pid },
    { queries, heavy, singles: SINGLE_QUERIES, batches: BATCHES },
  );
  const pauses = platform.gcSince(gcFrom, [result.window]);
  const apart = pauses.outside;
  report(
    `replica GC during the ${label} runs: longest pause ${fmt(pauses.longest)} ms (${pauses.longestKind}), ${pauses.major} full collections ` +
      `(longest ${fmt(pauses.longestMajor)} ms), ${pauses.minor.length} scavenges (p50 ${fmt(pauses.minor.p50)} ms, longest ` +
      `${fmt(pauses.minor.longest)} ms), ${pauses.count} collections in all, ${fmt(pauses.total, 0)} ms together; before the first ` +
      `request or after the last: ${apart.count} collections (${apart.major} full, longest ${fmt(apart.longest)} ms)`,
  );
  const s = stats(result.single);
  report(`Query over ${label}: p50 ${fmt(s.p50)} ms, p99 ${fmt(s.p99)} ms, mean ${fmt(s.mean)} ms (${SINGLE_QUERIES} mixed queries)`);
  const perCall = (ms: number, calls: number) => fmt(ms / calls, 3);
  report(
    `server CPU per call over ${label} (/proc, all threads): Query ${perCall(result.cpu.single, result.single.length)} ms, ` +
      `popular ${perCall(result.cpu.popular, result.popular.length)} ms, QueryBatch(1000) ${perCall(result.cpu.batch, BATCHES + 2)} ms`,
  );
  const h = stats(result.popular);
  report(
    `Query over ${label}, popular packages only (hundreds of full records per answer): p50 ${fmt(h.p50)} ms, p99 ${fmt(h.p99)} ms (${result.popular.length} queries)`,
  );
  const b = stats(result.batch);
  report(`QueryBatch(1000) over ${label}: p50 ${fmt(b.p50)} ms, p99 ${fmt(b.p99)} ms (${BATCHES} batches)`);
}

/**
 * Bursts with idle time between them, over gRPC: one QueryBatch(1000) and `queriesEach` Query each, `gapMs` apart,
 * as scans of a client come. Prints the replica's collections inside the bursts and between them (where it
 * collects once idle, src/osv/osv.idle-collection.ts) and the Query latency inside the bursts.
 */
async function inBursts(platform: PlatformProcess, queries: Record<string, unknown>[]): Promise<void> {
  const plan = { count: 8, queriesEach: 500, gapMs: 1_500 };
  if (process.env.OSV_BENCH_REPLICA_LOG) appendFileSync(process.env.OSV_BENCH_REPLICA_LOG, `=== bench: bursts start\n`);
  const gcFrom = platform.gcMark();
  const result = await runLatencyClient<{ bursts: (RequestWindow & { single: number[] })[] }>(
    'bursts',
    { transport: 'grpc', target: platform.grpc, token: platform.token, serverPid: platform.pid },
    { queries, heavy: [], bursts: plan },
  );
  const pauses = platform.gcSince(gcFrom, result.bursts);
  const s = stats(result.bursts.flatMap((burst) => burst.single));
  report(
    `bursts over gRPC, idle (${plan.count} of one QueryBatch(1000) and ${plan.queriesEach} Query, ${fmt(plan.gapMs / 1000, 1)} s apart): inside them ` +
      `${pauses.major} full collections, longest pause ${fmt(pauses.longest)} ms (${pauses.longestKind}), Query p99 ${fmt(s.p99)} ms; between them ` +
      `${pauses.outside.major} full collections (longest pause ${fmt(pauses.outside.longest)} ms)`,
  );
}

/**
 * The floor (bench/osv-floor.ts): the same client and series against servers that answer fixed bytes, idle and busy.
 * Prints `Query` p50 / p99 and the server's CPU per call beside the replica's.
 */
async function floorLatency(queries: Record<string, unknown>[], heavy: Record<string, unknown>[]): Promise<void> {
  const floor = await startFloorServers();
  try {
    for (const condition of CONDITIONS) {
      await inCondition(condition, async () => {
        for (const transport of ['http', 'grpc'] as const) {
          const label = `${transport === 'http' ? 'HTTP' : 'gRPC'}, ${condition}`;
          const result = await runLatencyClient<LatencyResult>(
            `floor ${label}`,
            { transport, target: transport === 'http' ? floor.http : floor.grpc, token: 'none', serverPid: floor.pid },
            { queries, heavy, singles: SINGLE_QUERIES, batches: BATCHES },
          );
          const s = stats(result.single);
          report(
            `floor over ${label} (a bare ${transport === 'http' ? 'node:http' : 'grpc-js'} server answering fixed bytes): Query p50 ${fmt(s.p50)} ms, ` +
              `p99 ${fmt(s.p99)} ms; server CPU per Query ${fmt(result.cpu.single / result.single.length, 3)} ms`,
          );
        }
      });
    }
  } finally {
    await floor.stop();
  }
}

interface PlatformProcess {
  pid: number;
  http: string;
  grpc: string;
  token: string;
  /** From spawn to the replica's index. */
  readyMs: number;
  /** From the index to the lookups of large packages warmed, answers stored and the heap settled (collected when V8 held much garbage). */
  settledMs: number;
  /** The replica's `OSV heap settled` log line. */
  compacted: string;
  /** The server's resident memory now, in bytes (from /proc). */
  rss(): number;
  /** The replica's last `process.memoryUsage()` (written every 2 s by the preload), in MiB, as text. */
  memory(): string;
  /** A position in the replica's GC log. */
  gcMark(): number;
  /**
   * The replica's collections since `mark` (perf_hooks 'gc' entries) that paused it while the client's requests
   * were in flight (any of `windows`), and, apart, those outside them (while the client started, or the replica
   * collected while idle).
   */
  gcSince(mark: number, windows: readonly RequestWindow[]): GcSummary & { outside: { count: number; major: number; longest: number } };
  stop(): Promise<void>;
}

/** When a latency client's first request started and its last ended, wall-clock ms (`performance.timeOrigin` based). */
interface RequestWindow {
  from: number;
  to: number;
}

interface GcSummary {
  /** The scavenges (kind "minor") apart: how many, their median and longest pause. */
  minor: { length: number; p50: number; longest: number };
  count: number;
  major: number;
  longest: number;
  longestKind: string;
  longestMajor: number;
  total: number;
}

/**
 * Loaded into `platform serve` with `--import` (a data: URL, so it is no file of the platform): every collection's
 * perf_hooks 'gc' entry, appended to the file named by OSV_BENCH_GC_LOG as `kind duration flags at` lines, `at` in
 * wall-clock ms. The duration is the pause of the main thread from the GC's prologue to its epilogue (for a full
 * collection, its final atomic pause).
 */
const GC_OBSERVER = `data:text/javascript,${encodeURIComponent(`
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { appendFileSync } from 'node:fs';
const path = process.env.OSV_BENCH_GC_LOG;
// By Node's own constants (scavenge 1, full collection 4, incremental marking 8, weak callbacks 16).
const kinds = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental-marking',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak-callbacks',
};
// With the flags (forced, all available garbage, all external memory, …) so the log says what asked for a collection.
new PerformanceObserver((list) => {
  let text = '';
  for (const entry of list.getEntries())
    text += (kinds[entry.detail?.kind] ?? 'other') + ' ' + entry.duration + ' flags=' + (entry.detail?.flags ?? 0) + ' at=' + (performance.timeOrigin + entry.startTime).toFixed(3) + '\\n';
  appendFileSync(path, text);
}).observe({ entryTypes: ['gc'] });
// What the replica's memory is made of, every 2 s: the bench prints the last one beside the RSS from /proc.
setInterval(() => appendFileSync(path, 'memory ' + JSON.stringify(process.memoryUsage()) + '\\n'), 2000).unref();
`)}`;

/**
 * `platform serve --only admin,grpc` on the benchmark's SQLite file, in its own process, as `npm start` runs it. Its
 * first start prints the bootstrap token and the listeners; its log lines (JSON) say when the replica is ready and
 * when it has settled.
 */
async function startPlatformProcess(dir: string, sqliteUrl: string): Promise<PlatformProcess> {
  const started = performance.now();
  const gcLog = join(dir, 'replica-gc.log');
  writeFileSync(gcLog, '');
  const child = spawn(
    process.execPath,
    [
      // OSV_BENCH_REPLICA_PROF=DIR: the replica writes a CPU profile there when it stops (where the tail comes from).
      ...(process.env.OSV_BENCH_REPLICA_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.OSV_BENCH_REPLICA_PROF] : []),
      // OSV_BENCH_REPLICA_FLAGS='--trace-gc …': more V8 flags for the replica; its output goes to OSV_BENCH_REPLICA_LOG.
      ...(process.env.OSV_BENCH_REPLICA_FLAGS?.split(' ').filter(Boolean) ?? []),
      '--import',
      GC_OBSERVER,
      join(import.meta.dirname, '..', 'bin', 'platform.js'),
      'serve',
      '--only',
      'admin,grpc',
    ],
    {
      env: {
        OSV_BENCH_GC_LOG: gcLog,
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: sqliteUrl,
        PLATFORM_DATA_DIR: dir,
        PLATFORM_HOST: '127.0.0.1',
        PLATFORM_HTTP_PORT: '0',
        PLATFORM_GRPC_PORT: '0',
        // The default level: a line per request, as a production replica logs.
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout });
  const found = new Map<string, string>();
  // The bootstrap token is printed on a database's first start only: a kept directory keeps it for the next runs.
  const tokenFile = join(dir, 'platform-token');
  if (existsSync(tokenFile)) found.set('token', readFileSync(tokenFile, 'utf8'));
  const times = new Map<string, number>();
  let compacted = '';
  const wanted = ['rest', 'grpc', 'token', 'OSV index built', 'OSV lookups warmed', 'OSV answers encoded', 'OSV heap settled'];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`platform serve did not settle in 30 minutes; stderr: ${stderr}`)), 30 * 60_000);
    child.once('exit', (code) => reject(new Error(`platform serve exited with ${code}: ${stderr}`)));
    lines.on('line', (line) => {
      const listener = /^(rest|grpc)\s+(\S+)/u.exec(line);
      if (listener) found.set(listener[1] as string, listener[2] as string);
      const token = /platform token:\s+(\S+)/u.exec(line);
      if (token) found.set('token', token[1] as string);
      if (line.startsWith('{')) {
        const entry = JSON.parse(line) as { msg?: string };
        const msg = entry.msg ?? '';
        if (wanted.includes(msg) && !times.has(msg)) times.set(msg, performance.now());
        if (msg === 'OSV heap settled') compacted = line;
      }
      if (wanted.every((w) => found.has(w) || times.has(w))) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  writeFileSync(tokenFile, found.get('token') as string);
  // From here on its log (a line per request at the default level, as in production) is drained unread, or appended
  // to OSV_BENCH_REPLICA_LOG (with what OSV_BENCH_REPLICA_FLAGS makes V8 print, such as --trace-gc lines).
  lines.close();
  const replicaLog = process.env.OSV_BENCH_REPLICA_LOG;
  if (replicaLog) child.stdout.on('data', (chunk: Buffer) => appendFileSync(replicaLog, chunk));
  child.stdout.resume();
  const ready = times.get('OSV index built') as number;
  const settled = Math.max(...['OSV lookups warmed', 'OSV answers encoded', 'OSV heap settled'].map((msg) => times.get(msg) as number));
  return {
    pid: child.pid as number,
    http: found.get('rest') as string,
    grpc: (found.get('grpc') as string).replace(/^grpc:\/\//u, ''),
    token: found.get('token') as string,
    readyMs: ready - started,
    settledMs: settled - ready,
    compacted,
    rss: () => Number(/VmRSS:\s+(\d+) kB/u.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024,
    memory() {
      const last = readFileSync(gcLog, 'utf8').lastIndexOf('memory {');
      if (last === -1) return 'n/a';
      const usage = JSON.parse(
        readFileSync(gcLog, 'utf8')
          .slice(last + 7)
          .split('\n')[0] as string,
      ) as Record<string, number>;
      return Object.entries(usage)
        .map(([name, bytes]) => `${name} ${fmt(bytes / MiB, 0)}`)
        .join(', ');
    },
    gcMark: () => readFileSync(gcLog, 'utf8').length,
    gcSince(mark, windows) {
      const minor: number[] = [];
      const outside = { count: 0, major: 0, longest: 0 };
      const summary: GcSummary = {
        minor: { length: 0, p50: NaN, longest: NaN },
        count: 0,
        major: 0,
        longest: 0,
        longestKind: 'none',
        longestMajor: 0,
        total: 0,
      };
      for (const line of readFileSync(gcLog, 'utf8').slice(mark).split('\n')) {
        const [kind, duration, , at] = line.split(' ');
        const ms = Number(duration);
        if (kind === undefined || !Number.isFinite(ms)) continue;
        const startedAt = Number(at?.slice('at='.length));
        if (!windows.some((window) => startedAt + ms >= window.from && startedAt <= window.to)) {
          outside.count++;
          if (kind === 'major') outside.major++;
          outside.longest = Math.max(outside.longest, ms);
          continue;
        }
        summary.count++;
        summary.total += ms;
        if (kind === 'minor') minor.push(ms);
        // A full collection's final pause is 'major' whether its marking ran incrementally or not; 'incremental-marking'
        // is a pause of the marking that leads to one, counted in the longest pause but not as a collection.
        if (kind === 'major') {
          summary.major++;
          summary.longestMajor = Math.max(summary.longestMajor, ms);
        }
        if (ms > summary.longest) {
          summary.longest = ms;
          summary.longestKind = kind;
        }
      }
      if (minor.length > 0) {
        const sorted = minor.sort((a, b) => a - b);
        summary.minor = { length: sorted.length, p50: percentile(sorted, 50), longest: sorted[sorted.length - 1] as number };
      }
      return { ...summary, outside };
    },
    async stop() {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The naive baseline: every record in memory, every query walks all of them with the comparator.

interface ScanRecord {
  id: string;
  affected: OsvAffected[];
}

function scanAffected(a: OsvAffected, ecosystem: string, name: string, version: string): boolean {
  const pkg = a.package;
  if (!pkg) return false;
  if (pkg.ecosystem !== ecosystem && !pkg.ecosystem.startsWith(`${ecosystem}:`)) return false;
  if (normalizePackageName(pkg.ecosystem, pkg.name) !== name) return false;
  if (version === '') return true;
  const order: VersionOrder | undefined = comparatorFor(pkg.ecosystem);
  if ((a.versions ?? []).includes(version)) return true;
  if (!order) return false;
  const v = order.parse(version);
  if (v === undefined) return false;
  for (const range of a.ranges ?? []) {
    if (range.type === 'GIT') continue;
    const events = range.events
      .map((e) => {
        const [type, value] = Object.entries(e)[0] as [string, string];
        return { type, parsed: order.parse(value) };
      })
      .filter((e) => e.parsed !== undefined)
      .sort((x, y) => order.compare(x.parsed, y.parsed));
    let affected = false;
    for (const e of events) {
      const c = order.compare(v, e.parsed);
      if (e.type === 'introduced' && c >= 0) affected = true;
      else if ((e.type === 'fixed' || e.type === 'limit') && c >= 0) affected = false;
      else if (e.type === 'last_affected' && c > 0) affected = false;
    }
    if (affected) return true;
  }
  return false;
}

/** The synthetic corpus' rows as plain objects by key and name (the baseline of the full-collection figure). */
function objectIndex(): Map<string, PlainRow[]> {
  const lists = new Map<string, PlainRow[]>();
  for (const record of new SyntheticCorpus({ records: RECORDS }).records()) {
    for (const data of computeIndexRows(record)) {
      const key = `${data.ecosystem}\u0000${data.name}`;
      const list = lists.get(key);
      if (list === undefined) lists.set(key, [plainRow(data)]);
      else list.push(plainRow(data));
    }
  }
  return lists;
}

/**
 * Steps 2 and 3, in this process: the index (build time, memory), matching and the service without a transport,
 * and the naive scan. Its own function so that the index is unreachable once it returns.
 */
async function inProcess(
  sqliteUrl: string,
  corpus: { path: string; samples: SampleQuery[] },
  queries: Record<string, unknown>[],
): Promise<void> {
  const handle = await openDatabase<PlatformDatabase>(sqliteUrl);
  settle();
  const before = process.memoryUsage();
  let started = performance.now();
  const index = await buildIndex(narrowTables(handle.db));
  const buildMs = performance.now() - started;
  settle();
  const after = process.memoryUsage();
  report(`index build: ${fmt(buildMs / 1000, 1)} s for ${JSON.stringify(index.stats())}`);
  report(
    `index memory: heap +${fmt((after.heapUsed - before.heapUsed) / MiB, 0)} MiB, array buffers +${fmt((after.arrayBuffers - before.arrayBuffers) / MiB, 0)} MiB ` +
      `(typed storage ${fmt(index.byteSize() / MiB, 0)} MiB), RSS +${fmt((after.rss - before.rss) / MiB, 0)} MiB (RSS now ${fmt(after.rss / MiB, 0)} MiB)`,
  );
  const flat = fullCollection();
  report(
    `full collection (gc()) with the flat index live: ${fmt(flat.ms)} ms wall (${fmt(flat.cpuMs)} ms CPU), heap ${fmt(flat.heapMiB, 0)} MiB`,
  );
  if (RECORDS <= 500_000 && !process.argv.includes('--skip-baseline')) {
    // Baseline in the same run: the same rows as one plain object each, grouped by package (the layout before
    // issue 20), and the same full collection with it live.
    const objects = objectIndex();
    const baseline = fullCollection();
    report(
      `full collection with the same rows as plain objects live (baseline: the former layout, ${objects.size} lists): ${fmt(baseline.ms)} ms wall (${fmt(baseline.cpuMs)} ms CPU), ` +
        `heap ${fmt(baseline.heapMiB, 0)} MiB; flat / objects = ${fmt(flat.ms / baseline.ms, 3)}`,
    );
    objects.clear();
  }

  // In-process matching (no transport, no hydration) for the sampled queries.
  const parsed = queries.map((q) => parseQuery(q));
  const inProcess: number[] = [];
  for (let round = 0; round < 2; round++) {
    for (const q of parsed) {
      started = performance.now();
      matchQuery(index, q, { pageSize: 3000, deadline: Infinity, now: Date.now });
      if (round === 1) inProcess.push(performance.now() - started);
    }
  }
  const ip = stats(inProcess);
  report(`index matching in-process: p50 ${fmt(ip.p50, 4)} ms, p99 ${fmt(ip.p99, 4)} ms, mean ${fmt(ip.mean, 4)} ms per query`);

  // The service in-process (matching plus hydration of full records from SQLite), without a transport.
  const service = createOsvService({
    db: narrowTables(handle.db),
    index: staticIndexSource(index),
    config: loadPlatformConfig({}).osv,
    clock: { now: () => Date.now() },
    log: createLogger({ level: 'silent' }),
  });
  const serviceSingle: number[] = [];
  for (let round = 0; round < 2; round++) {
    for (const q of queries.slice(0, SINGLE_QUERIES)) {
      started = performance.now();
      await service.query(q);
      if (round === 1) serviceSingle.push(performance.now() - started);
    }
  }
  const ss = stats(serviceSingle);
  report(`Query in-process (matching + full records from SQLite, no transport): p50 ${fmt(ss.p50)} ms, p99 ${fmt(ss.p99)} ms`);
  const serviceBatch: number[] = [];
  let entries = 0;
  for (let i = 0; i < BATCHES; i++) {
    const offset = (i * 1000) % Math.max(1, queries.length - 1000);
    started = performance.now();
    const result = await service.queryBatch({ queries: queries.slice(offset, offset + 1000) });
    serviceBatch.push(performance.now() - started);
    entries += (result.results ?? []).reduce((n, r) => n + (r.vulns?.length ?? 0), 0);
  }
  const sb = stats(serviceBatch);
  report(
    `QueryBatch(1000) in-process: p50 ${fmt(sb.p50)} ms, p99 ${fmt(sb.p99)} ms (${Math.round(entries / BATCHES)} {id, modified} entries per answer)`,
  );
  if (process.argv.includes('--skip-scan')) {
    await handle.close();
    return;
  }
  // 3. Naive linear scan over the same records, in this process.
  const scan: ScanRecord[] = [];
  for await (const chunk of readSources(await listSourceFiles([corpus.path, ...BULK]))) {
    for (const raw of chunk)
      if ('value' in raw) {
        const r = raw.value as OsvRecord;
        if (r.withdrawn === undefined) scan.push({ id: r.id, affected: r.affected ?? [] });
      }
  }
  const scanMs: number[] = [];
  let agree = 0;
  const packageQueries = parsed.filter((q) => q.kind === 'package').slice(0, SCAN_QUERIES);
  for (const q of packageQueries) {
    if (q.kind !== 'package') continue;
    started = performance.now();
    const found: string[] = [];
    for (const r of scan)
      if (r.affected.some((a) => scanAffected(a, q.ecosystem, q.ecosystem === 'GIT' ? normalizeRepo(q.name) : q.name, q.version)))
        found.push(r.id);
    found.sort(compareIds);
    scanMs.push(performance.now() - started);
    const indexed = matchQuery(index, q, { pageSize: 100_000, deadline: Infinity, now: Date.now }).vulns.map((v) => v.id);
    if (q.ecosystem === 'GIT' || JSON.stringify(found) === JSON.stringify(indexed)) agree++;
  }
  const sc = stats(scanMs);
  report(
    `naive linear scan in-process: p50 ${fmt(sc.p50)} ms, p99 ${fmt(sc.p99)} ms per query over ${scan.length} records (${packageQueries.length} queries; same ids as the index for ${agree})`,
  );
  report(`speed-up of the index over the scan (p50, matching only): ${fmt(sc.p50 / ip.p50, 0)}×`);
  await handle.close();
}

/** CPU time per call of `fn` in µs: the median of three passes after a warm-up pass. */
function perCallMicros(count: number, fn: (i: number) => void): number {
  return perCallMicrosEach(count, { fn }).fn;
}

/**
 * `perCallMicros` of several variants of the same work, measured in turns (A B A B A B after a warm-up of each), so
 * that a change of load on the shared machine falls on every variant alike.
 */
function perCallMicrosEach<K extends string>(count: number, variants: Record<K, (i: number) => void>): Record<K, number> {
  const names = Object.keys(variants) as K[];
  const pass = (name: K) => {
    const fn = variants[name];
    settle();
    const cpu = process.cpuUsage();
    for (let i = 0; i < count; i++) fn(i);
    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / count;
  };
  for (const name of names) pass(name);
  const samples = new Map<K, number[]>(names.map((name) => [name, []]));
  for (let round = 0; round < 3; round++) for (const name of names) samples.get(name)?.push(pass(name));
  return Object.fromEntries(names.map((name) => [name, (samples.get(name) ?? []).sort((a, b) => a - b)[1] as number])) as Record<K, number>;
}

/**
 * What a QueryBatch(1000) answer costs to write, in this process: 1,000 results of 0 to 8 `{id, modified}` entries
 * (2,000 in all, about what the latency run's batches return), with real ids and timestamps of the bulk records.
 * Without the fast path the RPC layer read the handler's JSON with `fromJson` and wrote it with `toBinary` /
 * `toJson`; a handler could instead build the message with `create` (timestamps read by the generated codec);
 * with the fast path each result is written by src/osv/osv.batch-answer.ts and spliced. All three write the same
 * bytes (test/grpc/batch-answer-differential.test.ts).
 */
function batchFigures(records: readonly OsvRecord[]): void {
  const sizes = [1, 2, 4, 5, 8];
  const results: BatchResultJson[] = [];
  for (let i = 0, at = 0; i < 1000; i++) {
    const size = i % 2 === 0 ? 0 : (sizes[(i >> 1) % sizes.length] as number);
    const result: BatchResultJson = {};
    if (size > 0)
      result.vulns = Array.from({ length: size }, (_v, k) => {
        const r = records[(at + k) % records.length] as OsvRecord;
        return { id: r.id, modified: r.modified };
      });
    if (i % 50 === 7) result.next_page_token = `UDpHSFNBLX${i}`;
    at += size;
    results.push(result);
  }
  const entries = results.reduce((sum, r) => sum + (r.vulns?.length ?? 0), 0);
  const shared = sharedElementsOf(BatchVulnerabilityListSchema, 'results', 'bench');
  const empty = create(BatchVulnerabilityListSchema);
  const fromHandlerJson = () => fromJson(BatchVulnerabilityListSchema, { results } as unknown as JsonValue);
  const created = () =>
    create(BatchVulnerabilityListSchema, {
      results: results.map((r) => ({
        vulns: (r.vulns ?? []).map((v) => ({ id: v.id, modified: fromJson(TimestampSchema, v.modified) })),
        nextPageToken: r.next_page_token ?? '',
      })),
    });
  const spliced = (form: 'json' | 'wire') => results.map((r) => prepareElement(shared, encodeBatchResult(r, form), false));
  const us = perCallMicrosEach(10, {
    jsonWire: () => toBinary(BatchVulnerabilityListSchema, fromHandlerJson()),
    jsonText: () => JSON.stringify(messageToJson(BatchVulnerabilityListSchema, fromHandlerJson())),
    createWire: () => toBinary(BatchVulnerabilityListSchema, created()),
    createText: () => JSON.stringify(messageToJson(BatchVulnerabilityListSchema, created())),
    fastWire: () => splicedBytes(BatchVulnerabilityListSchema, empty, shared, spliced('wire')),
    fastText: () => splicedJson(BatchVulnerabilityListSchema, empty, shared, spliced('json')),
  });
  const ms = (x: number) => fmt(x / 1000);
  report(
    `codec, a QueryBatch answer of 1000 results (${entries} {id, modified} entries), protobuf / JSON: without the fast path (handler JSON, fromJson + toBinary / toJson) ` +
      `${ms(us.jsonWire)} / ${ms(us.jsonText)} ms; handler message built with create ${ms(us.createWire)} / ${ms(us.createText)} ms; ` +
      `with it (osv.batch-answer.ts, results spliced) ${ms(us.fastWire)} / ${ms(us.fastText)} ms; CPU time, median of 3 in turns`,
  );
}

/**
 * The codec figures, in this process over the real bulk records: what a Query answer costs per record with the
 * generated codec alone (each record converted from its JSON object, as for a record without stored answers) and
 * with the fast path (each record's stored JSON text or protobuf bytes spliced into the answer); both answers are
 * the same bytes (test/grpc/codec-differential.test.ts).
 */
async function codecFigures(): Promise<void> {
  const records: OsvRecord[] = [];
  for await (const chunk of readSources(await listSourceFiles(BULK))) {
    for (const raw of chunk) {
      if (!('value' in raw)) continue;
      const validated = validateOsvRecord(raw.value);
      if (validated.ok) records.push(validated.record);
    }
  }
  const stored = records.map((r) => encodeAnswer(r));
  const n = records.length;
  // The stored answers of one record, as the pass after an import writes them (encodeAnswer), with the runtime's
  // own text encoding and with Node's (src/grpc/text-encoding.ts, which the platform uses).
  const encodeRecord = (i: number) => {
    const message = fromJson(VulnerabilitySchema, records[i] as unknown as JsonValue, { ignoreUnknownFields: true });
    toJsonString(VulnerabilitySchema, message, JSON_WRITE);
    toBinary(VulnerabilitySchema, message);
  };
  const answers = perCallMicrosEach(n, {
    runtime: (i) => {
      configureTextEncoding(runtimeTextEncoding);
      encodeRecord(i);
    },
    node: (i) => {
      useNodeTextEncoding();
      encodeRecord(i);
    },
  });
  useNodeTextEncoding();
  const decode = perCallMicros(n, (i) => fromBinary(VulnerabilitySchema, (stored[i] as { wire: Uint8Array }).wire));
  report(
    `codec, generated (@bufbuild/protobuf): ${fmt(answers.runtime, 1)} µs per record to JSON text + protobuf bytes (fromJson, toJsonString, toBinary) with the runtime's TextEncoder, ` +
      `${fmt(answers.node, 1)} µs with Node's Buffer encoder (src/grpc/text-encoding.ts); ${fmt(decode, 1)} µs to decode its bytes (fromBinary); ${n} bulk records, CPU time, median of 3 passes each, in turns`,
  );
  batchFigures(records);

  // A Query answer of PAGE records, whole by the generated codec or spliced from the stored forms.
  const PAGE = 270;
  const pages = Math.floor(n / PAGE);
  const shared = sharedElementsOf(VulnerabilityListSchema, 'vulns', 'bench');
  const rest = create(VulnerabilityListSchema, { nextPageToken: 'UDpHSFNB' });
  const page = (p: number) => records.slice(p * PAGE, (p + 1) * PAGE);
  const wholeJson = perCallMicros(pages, (p) => {
    const vulns = page(p).map((r) => fromJson(VulnerabilitySchema, r as unknown as JsonValue, { ignoreUnknownFields: true }));
    toJsonString(VulnerabilityListSchema, create(VulnerabilityListSchema, { vulns, nextPageToken: 'UDpHSFNB' }), JSON_WRITE);
  });
  const wholeWire = perCallMicros(pages, (p) => {
    const vulns = page(p).map((r) => fromJson(VulnerabilitySchema, r as unknown as JsonValue, { ignoreUnknownFields: true }));
    toBinary(VulnerabilityListSchema, create(VulnerabilityListSchema, { vulns, nextPageToken: 'UDpHSFNB' }));
  });
  const splicedText = perCallMicros(pages, (p) => {
    const elements = stored
      .slice(p * PAGE, (p + 1) * PAGE)
      .map((a) => prepareElement(shared, new EncodedMessage(Buffer.from(a.json), undefined), true));
    splicedJson(VulnerabilityListSchema, rest, shared, elements);
  });
  const splicedWire = perCallMicros(pages, (p) => {
    const elements = stored.slice(p * PAGE, (p + 1) * PAGE).map((a) => prepareElement(shared, new EncodedMessage(undefined, a.wire), true));
    splicedBytes(VulnerabilityListSchema, rest, shared, elements);
  });
  report(
    `codec, a Query answer of ${PAGE} records (${pages} pages): without the fast path (generated codec, whole message) ${fmt(wholeJson / 1000)} ms JSON / ${fmt(wholeWire / 1000)} ms protobuf ` +
      `= ${fmt(wholeJson / PAGE, 1)} / ${fmt(wholeWire / PAGE, 1)} µs per record; with it (stored forms spliced) ${fmt(splicedText / 1000, 3)} ms JSON / ${fmt(splicedWire / 1000, 3)} ms protobuf ` +
      `= ${fmt(splicedText / PAGE, 2)} / ${fmt(splicedWire / PAGE, 2)} µs per record`,
  );
}

/**
 * `--only index`: the flat index built straight from the synthetic generator in this process (no database): build
 * time, typed storage, heap, RSS, a full collection, and matching latency for the sampled queries. The quick way to
 * see how the index grows (`--records 2000000`).
 */
function indexOnly(): void {
  settle();
  const before = process.memoryUsage();
  const corpus = new SyntheticCorpus({ records: RECORDS });
  const index = new CorpusIndex();
  let rowsMs = 0;
  let applyMs = 0;
  const started = performance.now();
  for (const record of corpus.records()) {
    const t = performance.now();
    const rows = computeIndexRows(record);
    const t2 = performance.now();
    index.applyVuln(record.id, record.modified, rows);
    rowsMs += t2 - t;
    applyMs += performance.now() - t2;
  }
  const t3 = performance.now();
  index.seal();
  applyMs += performance.now() - t3;
  const totalMs = performance.now() - started;
  settle();
  const after = process.memoryUsage();
  report(
    `flat index of ${RECORDS} synthetic records: ${fmt(totalMs / 1000, 1)} s to generate, compute rows and apply them (computing rows ${fmt(rowsMs / 1000, 1)} s, building the index from them ${fmt(applyMs / 1000, 1)} s); ${JSON.stringify(index.stats())}`,
  );
  report(
    `flat index memory: typed storage ${fmt(index.byteSize() / MiB, 0)} MiB, heap +${fmt((after.heapUsed - before.heapUsed) / MiB, 0)} MiB, ` +
      `RSS ${fmt(after.rss / MiB, 0)} MiB (process)`,
  );
  const full = fullCollection();
  report(
    `full collection (gc()) with the index live: ${fmt(full.ms)} ms wall (${fmt(full.cpuMs)} ms CPU), heap ${fmt(full.heapMiB, 0)} MiB`,
  );
  if (RECORDS <= 500_000 && !process.argv.includes('--skip-baseline')) {
    const objects = objectIndex();
    const baseline = fullCollection();
    report(
      `full collection with the same rows as plain objects live (baseline: the former layout): ${fmt(baseline.ms)} ms wall (${fmt(baseline.cpuMs)} ms CPU), ` +
        `heap ${fmt(baseline.heapMiB, 0)} MiB; flat / objects = ${fmt(full.ms / baseline.ms, 3)} wall, ${fmt(full.cpuMs / baseline.cpuMs, 3)} CPU`,
    );
    objects.clear();
  }
  const parsed = queryMix(corpus.mix(5000)).map((q) => parseQuery(q));
  const times: number[] = [];
  for (let round = 0; round < 2; round++)
    for (const q of parsed) {
      const t = performance.now();
      matchQuery(index, q, { pageSize: 3000, deadline: Infinity, now: Date.now });
      if (round === 1) times.push(performance.now() - t);
    }
  const m = stats(times);
  report(`matching in-process: p50 ${fmt(m.p50, 4)} ms, p99 ${fmt(m.p99, 4)} ms over ${parsed.length} sampled queries`);
  const popular = (corpus.pools.get('popular') ?? []).map((s) => parseQuery(s.query));
  const heavy: number[] = [];
  for (const q of popular) {
    const t = performance.now();
    matchQuery(index, q, { pageSize: 3000, deadline: Infinity, now: Date.now });
    heavy.push(performance.now() - t);
  }
  const h = stats(heavy);
  report(`matching in-process, popular packages: p50 ${fmt(h.p50, 3)} ms, p99 ${fmt(h.p99, 3)} ms over ${popular.length} queries`);
}

async function main(): Promise<void> {
  if (arg('only') === 'index') {
    report(`PlatformOSV index figures: ${RECORDS} synthetic records, node ${process.version}, ${gc ? 'with' : 'without'} --expose-gc`);
    indexOnly();
    return;
  }
  if (arg('only') === 'codec') {
    report(`PlatformOSV codec figures, node ${process.version}, ${gc ? 'with' : 'without'} --expose-gc`);
    await codecFigures();
    return;
  }
  const dir = KEEP ?? mkdtempSync(join(tmpdir(), 'osv-bench-'));
  if (KEEP !== undefined) mkdirSync(KEEP, { recursive: true });
  report(
    `PlatformOSV benchmark: ${RECORDS} synthetic records + bulk files, node ${process.version}, ${gc ? 'with' : 'without'} --expose-gc`,
  );
  try {
    // 1. Corpus and imports.
    const corpus = await writeCorpus(dir);
    report(
      `generated ${RECORDS} synthetic records in ${fmt(corpus.ms / 1000, 1)} s; ${corpus.samples.length} sampled queries (50% not affected, 8% unknown packages, 34% hits, 3% popular packages, 3% purls, 2% commits)`,
    );
    const sqliteUrl = `sqlite:${join(dir, 'platform.db')}`;
    const imported = KEEP !== undefined && existsSync(join(dir, 'imported'));
    if (imported) report(`import: skipped (--keep ${KEEP}: imported by an earlier run)`);
    else await whileBusy(() => importInto(sqliteUrl, [corpus.path, ...BULK], `SQLite (${BUSY})`));
    if (KEEP !== undefined) writeFileSync(join(dir, 'imported'), '');
    if (PG_URL && !imported) {
      const schema = `osv_bench_${process.pid}`;
      try {
        await whileBusy(() => importInto(PG_URL, [corpus.path, ...BULK], `PostgreSQL (${BUSY})`, schema));
      } finally {
        const admin = new pg.Client({ connectionString: PG_URL });
        await admin.connect();
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.end();
      }
    } else {
      report('import PostgreSQL: skipped (give --pg postgres://… or OSV_BENCH_DATABASE_URL)');
    }

    // 2.–3. The index and the naive scan in this process; then the benchmark's own index and records are dropped, so
    // that only the platform's replica holds one while latency is measured.
    const queries = queryMix(corpus.samples);
    // `--only serve` (with --keep): just the served latency runs.
    if (arg('only') !== 'serve') await inProcess(sqliteUrl, corpus, queries);
    if (arg('only') !== 'serve' && !process.argv.includes('--skip-codec')) await codecFigures();
    settle();
    if (process.argv.includes('--skip-serve')) return;

    // 4. Latency against the platform as it runs in production: `platform serve` in a process of its own, measured
    // once it has settled (its replica has built the index, warmed the lookups of large packages and stored the
    // answers of every record: the work each replica does after a start or an import; queries are answered
    // meanwhile, slower).
    const platform = await startPlatformProcess(dir, sqliteUrl);
    try {
      report(`platform ready (platform serve, its own process): replica index built in ${fmt(platform.readyMs / 1000, 1)} s`);
      report(
        `platform settled: lookups of large packages warmed, answers of every record stored and heap settled (${platform.compacted}) ${fmt(platform.settledMs / 1000, 1)} s later; server RSS ${fmt(platform.rss() / MiB, 0)} MiB (${platform.memory()} MiB)`,
      );
      const heavy = queryMix(corpus.heavy);
      for (const condition of CONDITIONS) {
        await inCondition(condition, async () => {
          await latency(`HTTP, ${condition}`, 'http', platform, queries, heavy);
          await latency(`gRPC, ${condition}`, 'grpc', platform, queries, heavy);
        });
        report(`server RSS after the ${condition} latency runs: ${fmt(platform.rss() / MiB, 0)} MiB (${platform.memory()} MiB)`);
      }
      await inBursts(platform, queries);
    } finally {
      await platform.stop();
    }
    // With the replica stopped, so the floor's server has the machine the replica had.
    await floorLatency(queries, queryMix(corpus.heavy));
  } finally {
    if (KEEP === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
