// Reading and preparing records on a thread of their own, for `platform osv import` (docs/osv.md, "Import"): the
// file reading, JSON parsing, validation and index rows (about half of an import's CPU) run beside the database
// writes on the main thread, so an import uses two cores where it has them, and keeps more than one where another
// program takes a core.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { prepareRecord, type PreparedOrRejected } from './osv.prepare.ts';
import { readSources, SourceError, type SourceKind } from './osv.sources.ts';

/** Records per message to the main thread. */
const CHUNK_RECORDS = 500;
/** Messages the thread may send ahead of the writer: a bound on the memory between them. */
const CHUNKS_AHEAD = 4;

type ThreadMessage = { chunk: PreparedOrRejected[] } | { done: true } | { error: { name: string; message: string } };

interface ThreadData {
  osvImportThread: true;
  files: { path: string; kind: SourceKind }[];
}

async function prepareOnThread(files: ThreadData['files'], port: NonNullable<typeof parentPort>): Promise<void> {
  let credits = CHUNKS_AHEAD;
  let wake: (() => void) | undefined;
  port.on('message', () => {
    credits++;
    wake?.();
    wake = undefined;
  });
  const send = async (chunk: PreparedOrRejected[]) => {
    while (credits === 0) await new Promise<void>((resolve) => (wake = resolve));
    credits--;
    port.postMessage({ chunk } satisfies ThreadMessage);
  };
  try {
    let chunk: PreparedOrRejected[] = [];
    for await (const raws of readSources(files))
      for (const raw of raws) {
        chunk.push(prepareRecord(raw));
        if (chunk.length >= CHUNK_RECORDS) {
          await send(chunk);
          chunk = [];
        }
      }
    if (chunk.length > 0) await send(chunk);
    port.postMessage({ done: true } satisfies ThreadMessage);
  } catch (error) {
    const { name, message } = error instanceof Error ? error : new Error(String(error));
    port.postMessage({ error: { name, message } } satisfies ThreadMessage);
  }
  port.removeAllListeners('message');
}

if (!isMainThread && parentPort && (workerData as Partial<ThreadData> | null)?.osvImportThread === true)
  await prepareOnThread((workerData as ThreadData).files, parentPort);

/**
 * The thread loads this TypeScript file through tsx, as the process does (bin/platform.js): Node's workers do not
 * inherit the main thread's module hooks. tsx is found from here, not from the working directory (where an eval'd
 * worker would look for it).
 */
const BOOT = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); })`;

/**
 * Every record of `files`, in order, read and prepared on a worker thread, in chunks. Stopping early (a `break` in
 * the consumer, or an error) ends the thread. Errors of the reading come back as they were thrown (a SourceError
 * stays one).
 */
export async function* preparedOnThread(files: readonly { path: string; kind: SourceKind }[]): AsyncGenerator<PreparedOrRejected[]> {
  const data: ThreadData = { osvImportThread: true, files: files.map(({ path, kind }) => ({ path, kind })) };
  const worker = new Worker(BOOT, { eval: true, workerData: data });
  const inbox: ThreadMessage[] = [];
  let failure: Error | undefined;
  let finished = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  worker.on('message', (message: ThreadMessage) => {
    inbox.push(message);
    notify();
  });
  worker.on('error', (error: Error) => {
    failure ??= error;
    notify();
  });
  worker.on('exit', (code) => {
    if (!finished) failure ??= new Error(`the import thread stopped (exit code ${code}) before its end`);
    notify();
  });
  try {
    for (;;) {
      const message = inbox.shift();
      if (message === undefined) {
        if (failure) throw failure;
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      if ('error' in message) {
        finished = true;
        const error = message.error.name === 'SourceError' ? new SourceError(message.error.message) : new Error(message.error.message);
        throw error;
      }
      if ('done' in message) {
        finished = true;
        return;
      }
      worker.postMessage('more');
      yield message.chunk;
    }
  } finally {
    finished = true;
    await worker.terminate();
  }
}
