/**
 * `npm run bench:inference`: the overhead of the inference gateway (issue 16's Benchmark) above a direct call to an
 * OpenAI stand-in that answers at once, in the same run, on SQLite and PostgreSQL.
 *
 * For each database: the platform is built on a fresh database with the shipped catalog, its `openai` provider
 * overridden (PUT definition) to a stand-in on 127.0.0.1 (test/support/upstream) and the stand-in's key installed; a
 * member-plane token of the owner calls `openai/gpt-4.1-mini`. The direct series replay, byte for byte, the request
 * the gateway itself sent to the stand-in (recorded from one call through it), so both sides ask the same thing.
 * Four sections (memory before throughput, whose garbage would blur the memory figures):
 * 1. one request at a time, non-streamed: direct `POST /v1/chat/completions`, the native
 *    `POST /agent_api/v1/inference_requests` and the OpenAI-compatible `POST /agent_api/v1/chat/completions`, in
 *    rounds whose order rotates so noise on the shared machine hits every series alike; p50, p99 and the added
 *    latency (target: added p50 under 2 ms on both routes);
 * 2. the same with `stream: true`, timing the first SSE `data:` line (target: added p50 under 2 ms). The native
 *    route's first event (`start`) is written once the upstream answered its headers; the OpenAI route's first chunk
 *    is the upstream's first chunk translated;
 * 3. memory per open stream: N streams the stand-in holds open (headers sent, body delayed) are opened directly and
 *    then through the native route, and `process.memoryUsage()` is read before and while they are open, after `gc()`
 *    (the script runs with --expose-gc). heapUsed and external come from a second open-and-close cycle against the
 *    heap the first left behind; rss from the first cycle (committed pages stay committed after a collection, so a
 *    second cycle shows no rss growth), which makes rss the noisiest figure. The client, the stand-in and the platform
 *    share the process, so the gateway's own figure is the through-gateway growth less the direct growth. No target
 *    in the issue: printed only. For context the database's `select 1` and one-row committed insert are timed
 *    (each gateway call's usage row is committed, by group commit, before its answer, or its stream's `done`, is written);
 * 4. sustained requests/s with 64 concurrent keep-alive clients (a load generator in a worker thread), direct and
 *    through both routes, non-streamed, in rounds (target: at least 50% of the direct rate). For this section the
 *    stand-in runs on a thread of its own (bench/standin-thread.ts) and the provider is pointed at it, for every
 *    series alike (direct, both gateway routes, bare proxy). Why: a real provider is remote, its work never takes the
 *    gateway's event loop; with the stand-in on the main thread the gateway series measured the stand-in's cost plus
 *    the gateway's on one thread against the stand-in's cost alone, so no proxy could reach the target however cheap
 *    it was. The load generator is the same for every series (same worker, same keep-alive agent with one connection
 *    per client, same body: the direct series replays what the gateway sent upstream). Printed per series: CPU time
 *    per request of the main thread (the gateway; from /proc, which does not grow when other processes take the
 *    core), of the stand-in's thread, and of the rest of the process (the load generator, GC and runtime helpers).
 *    These are load-independent, unlike the rates: from them the bench prints each series' ceiling, the rate the
 *    machine's cores allow when the bench has them to itself (each thread at most one core, all of them at most all
 *    cores), and the gateway's ceiling as a share of the direct one. On a 2-core machine the client, the stand-in and
 *    the gateway share two cores, which a production gateway does not. A fourth series, a bare proxy
 *    (bench/bare-proxy.ts: Fastify and undici forwarding the direct request, no gateway logic), shows the ceiling of
 *    the ratio for any proxy on this machine and how much of the gateway's cost is its own logic.
 * Every gateway call writes its usage row, as in production. The per-credential inference limits are set far above
 * what the bench sends.
 *
 * Variables: BENCH_DIALECTS (default `sqlite,postgres`), BENCH_DATABASE_URL or TEST_DATABASE_URL (PostgreSQL),
 * BENCH_LATENCY_SECONDS (sections 1 and 2, each, default 10), BENCH_SECONDS (section 4 per window, default 3),
 * BENCH_WARMUP_SECONDS (default 1), BENCH_ROUNDS (section 4, default 2), BENCH_CONNECTIONS (default 64),
 * BENCH_STREAMS (section 3, default 200).
 */
import { Agent, request, type ClientRequest, type RequestOptions } from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { sql, type Kysely } from 'kysely';
import type { PlatformDatabase } from '../src/app/database.ts';
import type { Dialect } from '../src/core/db/database.ts';
import type { RecordedRequest, Standin } from '../test/support/upstream/index.ts';
import { startBareProxy } from './bare-proxy.ts';
import { postLoad, summariseLoad, type LoadSummary, type PostTarget, type RawLoad } from './post-load.ts';
import { startStandinPlatform } from './standin-platform.ts';
import { startStandinThread, type StandinThread } from './standin-thread.ts';
import { percentile } from './stats.ts';

const DIALECTS = (process.env.BENCH_DIALECTS ?? 'sqlite,postgres').split(',').map((d) => d.trim()) as Dialect[];
const LATENCY_SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 10);
const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);
const LOAD_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const OPEN_STREAMS = Number(process.env.BENCH_STREAMS ?? 200);

const TARGET_ADDED_P50_MS = 2;
const TARGET_RATE_RATIO = 0.5;
const STANDIN_KEY = 'sk-bench-standin-0123456789abcdef';
const PROVIDER = '/api/v1/admin/model_providers/openai';
const MODEL = 'openai/gpt-4.1-mini';
const MESSAGES = [{ role: 'user', content: 'Say ok.' }];
const NATIVE_PATH = '/agent_api/v1/inference_requests';
const OPENAI_PATH = '/agent_api/v1/chat/completions';
/** The stand-in records every request; it is emptied this often so a long run does not hold them all. */
const RESET_EVERY_ROUNDS = 256;
/** How long the stand-in holds a stream's body in section 3: longer than the section, cut short when it ends. */
const HOLD_MS = 120_000;

/** One POST as sent: where, with which headers and body. */
interface Call {
  name: string;
  port: number;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** One timed request: to the end of the body, and to the first SSE `data:` line (NaN when none came). */
interface Timing {
  ms: number;
  firstDataMs: number;
}

/** The request both the timed calls and the held-open streams send. */
function postOptions(agent: Agent, call: Call): RequestOptions {
  return {
    host: '127.0.0.1',
    port: call.port,
    method: 'POST',
    path: call.path,
    agent,
    headers: { ...call.headers, 'content-length': String(call.body.length) },
  };
}

function post(agent: Agent, call: Call): Promise<Timing & { status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(postOptions(agent, call), (res) => {
      const chunks: Buffer[] = [];
      let firstDataMs = NaN;
      let seen = '';
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (Number.isNaN(firstDataMs)) {
          // A `data:` line may straddle two chunks; keep a short tail of what came before.
          seen = (seen + chunk.toString('latin1')).slice(-4096);
          if (/(^|\n)data:/.test(seen)) firstDataMs = performance.now() - started;
        }
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(chunks).toString('utf8'),
          ms: performance.now() - started,
          firstDataMs,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(call.body);
  });
}

/** Sends `call`, checks the answer, and returns its timing. */
async function timed(agent: Agent, call: Call): Promise<Timing> {
  const answer = await post(agent, call);
  if (answer.status !== 200) throw new Error(`${call.name}: ${answer.status} ${answer.text.slice(0, 500)}`);
  return answer;
}

function replayOf(recorded: RecordedRequest | undefined, port: number, name: string): Call {
  if (!recorded) throw new Error(`the stand-in did not receive the gateway's request for ${name}`);
  const headers: Record<string, string> = {};
  for (const header of ['authorization', 'content-type', 'accept']) {
    const value = recorded.headers[header];
    if (value !== undefined) headers[header] = value;
  }
  return { name, port, path: recorded.url, headers, body: recorded.body };
}

const ms = (n: number) => `${n.toFixed(2)} ms`;
const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
const loadLine = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

function pct(values: readonly number[], p: number): number {
  return percentile(
    [...values].sort((x, y) => x - y),
    p,
  );
}

/**
 * Runs the calls one at a time in rounds for `seconds` after a warm-up; within a round the order rotates so a change
 * in the machine's load hits every series alike. Returns each series' timings.
 */
async function sequentialRounds(agentFor: (call: Call) => Agent, calls: Call[], seconds: number, standin: Standin): Promise<Timing[][]> {
  const series = calls.map((): Timing[] => []);
  const warmEnd = performance.now() + WARMUP_SECONDS * 1000;
  const end = warmEnd + seconds * 1000;
  for (let round = 0; performance.now() < end; round++) {
    const measuring = performance.now() >= warmEnd;
    for (let k = 0; k < calls.length; k++) {
      const index = (round + k) % calls.length;
      const call = calls[index]!;
      const timing = await timed(agentFor(call), call);
      if (measuring) series[index]!.push(timing);
    }
    if (round % RESET_EVERY_ROUNDS === 0) standin.reset();
  }
  return series;
}

/** Prints the direct series and each gateway series against it; false when an added p50 misses the target. */
function reportLatency(calls: Call[], series: Timing[][], pick: (t: Timing) => number): boolean {
  const [direct, ...gateway] = series.map((s) => s.map(pick));
  const directP50 = pct(direct!, 50);
  const directP99 = pct(direct!, 99);
  console.log(`${calls[0]!.name.padEnd(44)} p50 ${ms(directP50)}  p99 ${ms(directP99)}  (${direct!.length} requests)`);
  let ok = true;
  gateway.forEach((values, i) => {
    const added50 = pct(values, 50) - directP50;
    const added99 = pct(values, 99) - directP99;
    const passed = added50 < TARGET_ADDED_P50_MS;
    ok &&= passed;
    console.log(
      `${calls[i + 1]!.name.padEnd(44)} p50 ${ms(pct(values, 50))}  p99 ${ms(pct(values, 99))}  added p50 ${ms(added50)} (target < ${TARGET_ADDED_P50_MS} ms) ${verdict(passed)}  added p99 ${ms(added99)}`,
    );
  });
  return ok;
}

/** CPU per request of the threads other than the main one, for one series. */
interface ThreadCpu {
  /** The stand-in's thread, µs per request. */
  standinUs: number;
  /** Every other thread of the process (the load generator, GC and libuv helpers), µs per request. */
  otherUs: number;
}

/** Process-wide CPU (every thread), in milliseconds. */
function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * Sustained throughput of each call, windows taking turns round after round. Beside the load generator's figures,
 * the stand-in thread's CPU and the process's are read at the end of the warm-up and at the end of each window.
 */
async function throughput(calls: Call[], standin: StandinThread): Promise<{ loads: LoadSummary[]; threads: ThreadCpu[] }> {
  const windows = calls.map((): RawLoad[] => []);
  const spent = calls.map(() => ({ standinMs: 0, processMs: 0 }));
  const window = { connections: CONNECTIONS, warmupMs: WARMUP_SECONDS * 1000, durationMs: LOAD_SECONDS * 1000 };
  for (let round = 0; round < LOAD_ROUNDS; round++) {
    for (const [i, call] of calls.entries()) {
      const target: PostTarget = { port: call.port, path: call.path, headers: call.headers, body: call.body };
      let atMark: Promise<{ standinMs: number; processMs: number }> | undefined;
      const mark = setTimeout(() => {
        const processMs = processCpuMs();
        atMark = standin.cpuMs().then((standinMs) => ({ standinMs, processMs }));
      }, window.warmupMs);
      const load = await postLoad(target, window);
      clearTimeout(mark);
      const [standinMs, processMs] = [await standin.cpuMs(), processCpuMs()];
      const before = await atMark;
      windows[i]!.push(load);
      if (before) {
        spent[i]!.standinMs += standinMs - before.standinMs;
        // The process's CPU less the main thread's and the stand-in's: the load generator and the runtime's helpers.
        spent[i]!.processMs += processMs - before.processMs;
      }
    }
  }
  const loads = windows.map(summariseLoad);
  const threads = loads.map((load, i): ThreadCpu => {
    const requests = load.count + load.errors;
    const standinUs = (spent[i]!.standinMs * 1000) / requests;
    return { standinUs, otherUs: (spent[i]!.processMs * 1000) / requests - standinUs - load.cpuUs };
  });
  return { loads, threads };
}

/** CPU time per request of each thread of one series, as printed. */
const cpuLine = (r: LoadSummary, t: ThreadCpu) =>
  `CPU per request: main thread ${r.cpuUs.toFixed(0)} µs (busy ${r.serverUs.toFixed(0)}), stand-in ${t.standinUs.toFixed(0)} µs, others ${t.otherUs.toFixed(0)} µs`;

function reportThroughput(calls: Call[], results: LoadSummary[], threads: ThreadCpu[]): boolean {
  const line = (name: string, r: LoadSummary, t: ThreadCpu, tail: string) =>
    console.log(
      `${name.padEnd(44)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${ms(r.p50)}  p99 ${ms(r.p99)}  (${r.count} ok, ${r.errors} errors)\n${''.padEnd(44)} ${cpuLine(r, t)}${tail}`,
    );
  const direct = results[0]!;
  line(calls[0]!.name, direct, threads[0]!, '');
  let ok = direct.errors === 0;
  results.slice(1).forEach((r, i) => {
    const ratio = r.rps / direct.rps;
    const passed = ratio >= TARGET_RATE_RATIO && r.errors === 0;
    ok &&= passed;
    line(
      calls[i + 1]!.name,
      r,
      threads[i + 1]!,
      `\n${''.padEnd(44)} ${(ratio * 100).toFixed(1)}% of direct (target >= ${TARGET_RATE_RATIO * 100}%) ${verdict(passed)}; gateway's own main-thread CPU ${(r.cpuUs - direct.cpuUs).toFixed(0)} µs/req`,
    );
  });
  return ok;
}

/**
 * The bare proxy's line: its share of the direct rate is the most any gateway of this shape reaches here (no target),
 * and each gateway route's CPU above it is the gateway's own logic. Then the ceiling argument: on this machine's cores
 * the client and the stand-in take CPU on every series, so a proxy whose main thread costs c µs per request cannot go
 * faster than one core allows it (1e6 / c) nor than the cores allow the three together.
 */
function reportFloor(floor: Call, results: LoadSummary[], threads: ThreadCpu[]): void {
  const [direct, native, openai, bare] = results as [LoadSummary, LoadSummary, LoadSummary, LoadSummary];
  console.log(
    `${floor.name.padEnd(44)} ${bare.rps.toFixed(0).padStart(6)} req/s  p50 ${ms(bare.p50)}  p99 ${ms(bare.p99)}  (${bare.count} ok, ${bare.errors} errors)\n${''.padEnd(44)} ${cpuLine(bare, threads[3]!)}`,
  );
  console.log(
    `${''.padEnd(44)} ${((bare.rps / direct.rps) * 100).toFixed(1)}% of direct (the ceiling for a proxy here, no target); main-thread CPU above it: native route ${(native.cpuUs - bare.cpuUs).toFixed(0)} µs/req, OpenAI route ${(openai.cpuUs - bare.cpuUs).toFixed(0)} µs/req`,
  );
  const cores = availableParallelism();
  const names = ['direct', 'native route', 'OpenAI route', 'bare proxy'];
  const ceilings = results.map((r, i) => {
    const { standinUs, otherUs } = threads[i]!;
    // Each thread can use at most one core, and together they can use every core (and no more).
    const busiest = Math.max(r.cpuUs, standinUs, otherUs);
    return Math.min(1e6 / busiest, (cores * 1e6) / (r.cpuUs + standinUs + otherUs));
  });
  console.log(`ceiling from CPU per request (load-independent; the rate the ${cores} cores allow each series when it has them to itself):`);
  ceilings.forEach((ceiling, i) =>
    console.log(
      `${''.padEnd(44)} ${names[i]!.padEnd(13)} ${ceiling.toFixed(0).padStart(6)} req/s${i === 0 ? '' : ` = ${((ceiling / ceilings[0]!) * 100).toFixed(1)}% of direct's`}`,
    ),
  );
}

interface Memory {
  heapUsed: number;
  /** Memory outside the V8 heap that JS objects hold: socket and stream buffers. */
  external: number;
  rss: number;
}

const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis));

async function memoryNow(): Promise<Memory> {
  // Twice, with a turn of the event loop between: the first pass lets finalisers run, the second collects what they freed.
  for (let i = 0; i < 2; i++) {
    globalThis.gc?.();
    await sleep(20);
  }
  const { heapUsed, external, rss } = process.memoryUsage();
  return { heapUsed, external, rss };
}

/**
 * Opens `count` streamed calls and resolves once each has shown the sign that both ends hold it open: the response
 * headers (direct: the stand-in flushed them and holds the body) or the first `data:` line (the native route's
 * `start`, written once the upstream answered its headers). Returns the open requests.
 */
async function openStreams(call: Call, count: number, ready: 'headers' | 'data'): Promise<ClientRequest[]> {
  const agent = new Agent({ keepAlive: false });
  const opened = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ClientRequest>((resolve, reject) => {
          const req = request(postOptions(agent, call), (res) => {
            if (res.statusCode !== 200) reject(new Error(`${call.name}: ${res.statusCode}`));
            if (ready === 'headers') resolve(req);
            let seen = '';
            res.on('data', (chunk: Buffer) => {
              seen += chunk.toString('latin1');
              if (/(^|\n)data:/.test(seen)) resolve(req);
            });
            res.on('error', () => undefined);
          });
          req.on('error', (error) => reject(error));
          req.end(call.body);
        }),
    ),
  );
  return opened;
}

/** Memory growth per open stream for `call`, with its figures before and while open. */
async function memoryPerStream(
  call: Call,
  standin: Standin,
  ready: 'headers' | 'data',
): Promise<{ heap: number; external: number; rss: number }> {
  /** Opens the streams, reads memory while they are open, closes them; the reading. */
  const cycle = async (): Promise<Memory> => {
    standin.reset();
    const isStream = (r: RecordedRequest) => (r.json as { stream?: unknown } | undefined)?.stream === true;
    standin.delay(HOLD_MS, { phase: 'body', times: OPEN_STREAMS, when: isStream });
    const open = await openStreams(call, OPEN_STREAMS, ready);
    await sleep(100);
    const during = await memoryNow();
    for (const req of open) req.destroy();
    // The gateway hears each client go, aborts its upstream call and writes the usage row; let that finish.
    await sleep(1000);
    standin.reset();
    return during;
  };
  // Two cycles. The first one's growth over the figures before it is the rss figure: the first streams grow the heap's
  // committed pages, which stay committed after a collection, so a second cycle finds them and shows no rss growth.
  // The second one's figures, against the heap the first left behind, are the heap and external ones: pools and code
  // caches grown once are not counted per stream.
  const first = await memoryNow();
  const firstDuring = await cycle();
  const before = await memoryNow();
  const during = await cycle();
  return {
    heap: (during.heapUsed - before.heapUsed) / OPEN_STREAMS,
    external: (during.external - before.external) / OPEN_STREAMS,
    rss: (firstDuring.rss - first.rss) / OPEN_STREAMS,
  };
}

/**
 * The database's own latency, for reading the figures: p50 of `select 1` and of a one-row insert committed on its own
 * (each gateway call's usage row is committed, by group commit, before its answer or its stream's `done` event).
 */
async function databaseRoundTrips(db: Kysely<PlatformDatabase>): Promise<{ select: number; insert: number }> {
  await sql`create table bench_commit (id integer not null)`.execute(db);
  const select: number[] = [];
  const insert: number[] = [];
  for (let i = 0; i < 200; i++) {
    let t = performance.now();
    await sql`select 1`.execute(db);
    select.push(performance.now() - t);
    t = performance.now();
    await sql`insert into bench_commit (id) values (${i})`.execute(db);
    insert.push(performance.now() - t);
  }
  await sql`drop table bench_commit`.execute(db);
  return { select: pct(select, 50), insert: pct(insert, 50) };
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;

async function run(dialect: Dialect): Promise<boolean> {
  const platform = await startStandinPlatform(dialect, STANDIN_KEY, {
    // One member token sends everything; the per-credential limits must not be what is measured.
    PLATFORM_INFERENCE_RATE_PER_MINUTE: '1000000',
    PLATFORM_INFERENCE_MAX_STREAMS: '10000',
  });
  if (!platform) return true;
  const { standin, ctx, port } = platform;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const standinAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const json = (name: string, path: string, token: string, body: unknown): Call => ({
    name,
    port,
    path,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(body)),
  });

  /** An admin GET (no body) or PUT of `path`; throws unless 200. Returns the provider's lock_version. */
  const adminCall = (path: string, token: string, body: unknown) =>
    new Promise<number | null>((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: body === undefined ? 'GET' : 'PUT',
          path,
          agent,
          headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode !== 200) return reject(new Error(`${path}: ${res.statusCode} ${text}`));
            resolve((JSON.parse(text) as { model_provider: { lock_version: number | null } }).model_provider.lock_version);
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });

  let ok = true;
  try {
    console.log(`\n== ${dialect}: inference gateway against a direct call to the stand-in (load average ${loadLine()}) ==`);
    const owner = await ctx.identity.bootstrap({ accountName: 'Bench', email: 'bench@example.test' });
    const adminToken = owner.platform_token;
    const version = await adminCall(PROVIDER, adminToken, undefined);
    const definition = { display_name: 'OpenAI', base_url: standin.baseUrl, api_format: 'openai_chat', credentials: 'api_key' };
    await adminCall(`${PROVIDER}/definition`, adminToken, { command: { definition, expected_lock_version: version } });
    await adminCall(`${PROVIDER}/api_key`, adminToken, { command: { api_key: STANDIN_KEY } });
    const member = (await ctx.identity.createToken({ humanId: owner.human_id, plane: 'member' })).token;

    const native = json('(b) gateway POST …/inference_requests', NATIVE_PATH, member, {
      model: MODEL,
      messages: MESSAGES,
      max_output_tokens: 16,
    });
    const openai = json('(c) gateway POST …/chat/completions', OPENAI_PATH, member, { model: MODEL, messages: MESSAGES, max_tokens: 16 });
    const nativeStream = json('(b) gateway …/inference_requests stream', NATIVE_PATH, member, {
      model: MODEL,
      messages: MESSAGES,
      max_output_tokens: 16,
      stream: true,
    });
    const openaiStream = json('(c) gateway …/chat/completions stream', OPENAI_PATH, member, {
      model: MODEL,
      messages: MESSAGES,
      max_tokens: 16,
      stream: true,
    });
    // One call of each kind through the gateway, so the direct series can replay what it sent upstream.
    standin.reset();
    await timed(agent, native);
    await timed(agent, nativeStream);
    const sent = standin.requests.filter((r) => r.path.endsWith('/chat/completions'));
    const direct = replayOf(sent[0], standin.port, '(a) direct POST /v1/chat/completions');
    const directStream = replayOf(sent[1], standin.port, '(a) direct POST /v1/chat/completions stream');
    if (!directStream.body.includes('"stream":true')) throw new Error('the recorded streamed request is not a stream');
    // One agent per destination, each with its one keep-alive connection.
    const agentFor = (call: Call) => (call.port === standin.port ? standinAgent : agent);
    console.log(
      `-- 1. non-streamed, one request at a time (${LATENCY_SECONDS} s after ${WARMUP_SECONDS} s warm-up, rounds in rotating order; load ${loadLine()})`,
    );
    const latencyCalls = [direct, native, openai];
    const latency = await sequentialRounds(agentFor, latencyCalls, LATENCY_SECONDS, standin);
    ok = reportLatency(latencyCalls, latency, (t) => t.ms) && ok;

    console.log(`-- 2. streamed, time to the first SSE data line (${LATENCY_SECONDS} s, same rounds; load ${loadLine()})`);
    const streamCalls = [directStream, nativeStream, openaiStream];
    const streams = await sequentialRounds(agentFor, streamCalls, LATENCY_SECONDS, standin);
    if (streams.some((s) => s.some((t) => Number.isNaN(t.firstDataMs)))) throw new Error('a streamed answer had no data line');
    ok = reportLatency(streamCalls, streams, (t) => t.firstDataMs) && ok;
    console.log(
      `${'  (whole stream, for reference)'.padEnd(44)} p50 direct ${ms(
        pct(
          streams[0]!.map((t) => t.ms),
          50,
        ),
      )}, native ${ms(
        pct(
          streams[1]!.map((t) => t.ms),
          50,
        ),
      )}, OpenAI route ${ms(
        pct(
          streams[2]!.map((t) => t.ms),
          50,
        ),
      )}`,
    );

    console.log(`-- 3. memory per open stream, ${OPEN_STREAMS} streams held open by the stand-in (load ${loadLine()})`);
    if (!globalThis.gc) console.log('   (run without --expose-gc: figures include uncollected garbage)');
    const directMemory = await memoryPerStream({ ...directStream, name: 'direct' }, standin, 'headers');
    const gatewayMemory = await memoryPerStream(nativeStream, standin, 'data');
    const memoryLine = (name: string, m: { heap: number; external: number; rss: number }) =>
      console.log(`${name.padEnd(44)} heapUsed ${kb(m.heap)}  external ${kb(m.external)}  rss ${kb(m.rss)} per stream`);
    memoryLine('(a) direct (client + stand-in)', directMemory);
    memoryLine('(b) through …/inference_requests', gatewayMemory);
    memoryLine('  the gateway’s own (b − a), no target', {
      heap: gatewayMemory.heap - directMemory.heap,
      external: gatewayMemory.external - directMemory.external,
      rss: gatewayMemory.rss - directMemory.rss,
    });
    const trips = await databaseRoundTrips(ctx.database.db);
    console.log(
      `${'database (context, no target)'.padEnd(44)} select 1 p50 ${ms(trips.select)}, one-row insert committed p50 ${ms(trips.insert)}`,
    );
    console.log(
      `-- 4. sustained, ${CONNECTIONS} concurrent keep-alive clients in a worker thread (${LOAD_ROUNDS} rounds of ${WARMUP_SECONDS} s warm-up + ${LOAD_SECONDS} s per series; load ${loadLine()})`,
    );
    // The stand-in moves to its own thread for this section (see the header): every series calls that one.
    const remote = await startStandinThread(STANDIN_KEY);
    const lockVersion = await adminCall(PROVIDER, adminToken, undefined);
    await adminCall(`${PROVIDER}/definition`, adminToken, {
      command: { definition: { ...definition, base_url: remote.baseUrl }, expected_lock_version: lockVersion },
    });
    standin.reset();
    const bare = await startBareProxy(remote.port, direct.path);
    try {
      const directRemote: Call = { ...direct, port: remote.port };
      const floor: Call = { ...direct, name: '(d) bare proxy (Fastify + undici, no logic)', port: bare.port };
      const loadCalls = [directRemote, native, openai, floor];
      const { loads, threads } = await throughput(loadCalls, remote);
      ok = reportThroughput(loadCalls.slice(0, 3), loads.slice(0, 3), threads) && ok;
      reportFloor(floor, loads, threads);
    } finally {
      await bare.close();
      await remote.close();
    }

    console.log(`load average after ${dialect}: ${loadLine()}`);
  } finally {
    agent.destroy();
    standinAgent.destroy();
    await platform.close();
  }
  return ok;
}

let allOk = true;
const started = performance.now();
console.log(`bench:inference on ${DIALECTS.join(', ')}; the machine is shared, so figures move between runs (load average ${loadLine()})`);
for (const dialect of DIALECTS) allOk = (await run(dialect)) && allOk;
console.log(`\n${allOk ? 'all targets met' : 'some targets were missed'} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
process.exitCode = allOk ? 0 : 1;
