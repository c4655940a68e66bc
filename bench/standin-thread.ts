import { readFileSync } from 'node:fs';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { startStandin } from '../test/support/upstream/index.ts';

/**
 * An OpenAI stand-in on its own thread, for bench:inference's throughput section. A real provider is remote: its work
 * never takes the gateway's event loop. In the platform's process the stand-in would serve every gateway request on
 * the gateway's own thread, so the gateway series would measure the stand-in's cost plus the gateway's against the
 * direct series' stand-in cost alone. On its own thread it costs every series (direct, gateway, bare proxy) the same.
 */
export interface StandinThread {
  /** `http://127.0.0.1:PORT/v1`, a provider declaration's `base_url`. */
  baseUrl: string;
  port: number;
  /** The stand-in thread's CPU time so far, in milliseconds (from /proc; NaN where there is none). */
  cpuMs(): Promise<number>;
  close(): Promise<void>;
}

interface Started {
  baseUrl: string;
  port: number;
}

/** /proc/thread-self is the calling thread's own entry: utime and stime, in clock ticks of 1/100 s. */
function threadCpuMs(): number {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/** How often the thread forgets the requests its stand-in records (the bench reads none of them). */
const FORGET_EVERY_MS = 1000;

if (!isMainThread && (workerData as { standinThread?: boolean } | null)?.standinThread === true) {
  const { apiKey } = workerData as { apiKey: string };
  const standin = await startStandin({ dialect: 'openai', apiKey });
  const forget = setInterval(() => standin.reset(), FORGET_EVERY_MS);
  parentPort?.on('message', (message: 'cpu' | 'close') => {
    if (message === 'cpu') parentPort?.postMessage({ cpuMs: threadCpuMs() });
    else {
      clearInterval(forget);
      void standin.close().then(() => parentPort?.postMessage({ closed: true }));
    }
  });
  parentPort?.postMessage({ baseUrl: standin.baseUrl, port: standin.port } satisfies Started);
}

/**
 * Starts the stand-in, accepting `apiKey`, on a worker thread. Node 20's workers do not inherit the main thread's
 * `--import tsx` module hooks, so the thread registers tsx itself before it loads this (TypeScript) file.
 */
export async function startStandinThread(apiKey: string): Promise<StandinThread> {
  const boot = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const worker = new Worker(boot, { eval: true, workerData: { standinThread: true, apiKey } });
  /** The worker's next message (its listeners removed once it came, as the bench asks many times). */
  const next = <T>() =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (message: T) => {
        worker.off('error', onError);
        resolve(message);
      };
      const onError = (error: Error) => {
        worker.off('message', onMessage);
        reject(error);
      };
      worker.once('message', onMessage);
      worker.once('error', onError);
    });
  const started = await next<Started>();
  return {
    ...started,
    async cpuMs() {
      const answer = next<{ cpuMs: number }>();
      worker.postMessage('cpu');
      return (await answer).cpuMs;
    },
    async close() {
      const closed = next<unknown>();
      worker.postMessage('close');
      await closed;
      await worker.terminate();
    },
  };
}
