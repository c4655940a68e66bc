import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { percentile } from './stats.ts';

/**
 * Closed-loop POST load generator run in a worker thread, so the client's work does not share the event loop of the
 * server it measures (plain JS: it needs only node:http). Each loop owns one keep-alive connection and sends the same
 * request (or bundle of concurrent requests, `also`) back to back; an answer counts when every status is 200 and
 * every body was read to the end.
 */
const LOADGEN = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { port, path, method, headers, body, also, connections, durationMs, warmupMs } = workerData;
const extra = also || [];
const agent = new http.Agent({ keepAlive: true, maxSockets: connections * (1 + extra.length) });
const payload = Buffer.from(body);
const latencies = [];
let errors = 0;
let measuring = false;
let stop = false;
function request(p, m, data) {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, method: m, agent,
      headers: { ...headers, 'content-length': String(data.length) } }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve(res.statusCode === 200));
    });
    req.on('error', () => resolve(false));
    req.end(data);
  });
}
const empty = Buffer.alloc(0);
async function once() {
  const start = process.hrtime.bigint();
  const answers = await Promise.all([request(path, method || 'POST', payload), ...extra.map((p) => request(p, 'GET', empty))]);
  if (measuring) {
    if (answers.every(Boolean)) latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
    else errors++;
  }
}
async function loop() { while (!stop) await once(); }
const loops = Array.from({ length: connections }, () => loop());
setTimeout(() => { measuring = true; const t0 = Date.now();
  setTimeout(() => { measuring = false; stop = true; const elapsed = (Date.now() - t0) / 1000;
    Promise.all(loops).then(() => { agent.destroy(); parentPort.postMessage({ latencies, errors, elapsed }); });
  }, durationMs);
}, warmupMs);
`;

/** One measured window: latencies of the answered requests, failures, its length, and the main thread's busy time. */
export interface RawLoad {
  latencies: number[];
  errors: number;
  elapsed: number;
  /** Main-thread busy milliseconds in the measured window (event-loop utilisation). */
  activeMs: number;
  /** Main-thread CPU milliseconds in the measured window, from the kernel (NaN where /proc is not there). */
  cpuMs: number;
}

/** Clock ticks per second of /proc's times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time the main thread has used, in milliseconds (user + system, from /proc/self/task/<pid>/stat, whose main
 * thread's id is the process id). Unlike event-loop utilisation, which counts wall time while the loop is busy, this
 * does not grow when other processes take the core away: on a shared machine it is the steadier figure.
 */
function mainThreadCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces, so split after its closing parenthesis): utime is the
    // 14th field of the line, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

export interface PostTarget {
  port: number;
  path: string;
  /** Default POST; a direct forge read is a GET with an empty body. */
  method?: 'POST' | 'GET';
  headers: Record<string, string>;
  body: string | Buffer;
  /**
   * More GETs (paths, same port and headers) sent at the same time as the request: one call is the whole bundle,
   * answered when every part is (a direct baseline for a tool that makes several forge calls concurrently).
   */
  also?: readonly string[];
}

export interface LoadWindow {
  connections: number;
  warmupMs: number;
  durationMs: number;
}

/** Runs the load generator against `target` for one window; the main thread's utilisation is read over the measured part. */
export async function postLoad(target: PostTarget, window: LoadWindow): Promise<RawLoad> {
  const worker = new Worker(LOADGEN, {
    eval: true,
    workerData: { ...target, body: Buffer.from(target.body), ...window },
  });
  let elu: ReturnType<typeof performance.eventLoopUtilization> | undefined;
  let cpuAtMark = NaN;
  const mark = setTimeout(() => {
    elu = performance.eventLoopUtilization();
    cpuAtMark = mainThreadCpuMs();
  }, window.warmupMs);
  try {
    const result = await new Promise<{ latencies: number[]; errors: number; elapsed: number }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    const used = elu ? performance.eventLoopUtilization(elu) : undefined;
    return { ...result, activeMs: used?.active ?? NaN, cpuMs: mainThreadCpuMs() - cpuAtMark };
  } finally {
    clearTimeout(mark);
    await worker.terminate();
  }
}

/** Figures of one series over all its windows. */
export interface LoadSummary {
  rps: number;
  p50: number;
  p99: number;
  count: number;
  errors: number;
  /** Main-thread busy time per request, in microseconds. */
  serverUs: number;
  /** Main-thread CPU time per request, in microseconds. */
  cpuUs: number;
}

/** Total answered requests over total measured time; percentiles over every latency of every window. */
export function summariseLoad(windows: readonly RawLoad[]): LoadSummary {
  const sorted = windows.flatMap((w) => w.latencies).sort((a, b) => a - b);
  const errors = windows.reduce((n, w) => n + w.errors, 0);
  const elapsed = windows.reduce((n, w) => n + w.elapsed, 0);
  const active = windows.reduce((n, w) => n + w.activeMs, 0);
  const cpu = windows.reduce((n, w) => n + w.cpuMs, 0);
  const all = sorted.length + errors;
  return {
    rps: sorted.length / elapsed,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    count: sorted.length,
    errors,
    serverUs: all > 0 ? (active * 1000) / all : NaN,
    cpuUs: all > 0 ? (cpu * 1000) / all : NaN,
  };
}
