// Where `platform osv import` reads records from: OSV JSON files (one record, or an array of records), directories
// (recursively), JSON Lines files and OSV.dev's `all.zip` archives (of one or many ecosystems). Records are
// yielded one at a time, so memory does not depend on the size of the input.
import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import yauzl from 'yauzl';

/**
 * One record as read: its parsed JSON, or why it could not be read. `source` says where it came from; `text` is the
 * record's own compact JSON text when the input held it on one line (JSON Lines), so it need not be re-serialised.
 */
export type RawRecord = { source: string; value: unknown; text?: string } | { source: string; error: string };

export type SourceKind = 'json' | 'jsonl' | 'zip';

/** The kind of an input file by its name, or undefined for files an import skips. */
function sourceKind(path: string): SourceKind | undefined {
  const lower = path.toLowerCase();
  if (lower.endsWith('.json')) return 'json';
  if (lower.endsWith('.jsonl') || lower.endsWith('.ndjson')) return 'jsonl';
  if (lower.endsWith('.zip')) return 'zip';
  return undefined;
}

export class SourceError extends Error {
  override name = 'SourceError';
}

/** Expands the given paths into the files to read, in a stable order; throws SourceError for unusable paths. */
export async function listSourceFiles(paths: readonly string[]): Promise<{ path: string; kind: SourceKind; bytes: number }[]> {
  const out: { path: string; kind: SourceKind; bytes: number }[] = [];
  async function walk(dir: string): Promise<void> {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) {
        const kind = sourceKind(entry.name);
        if (kind !== undefined) out.push({ path: full, kind, bytes: (await stat(full)).size });
      }
    }
  }
  for (const path of paths) {
    let info;
    try {
      info = await stat(path);
    } catch {
      throw new SourceError(`${path}: no such file or directory`);
    }
    if (info.isDirectory()) {
      await walk(path);
      continue;
    }
    const kind = sourceKind(path);
    if (kind === undefined) throw new SourceError(`${path}: not an OSV source (expected a directory, .json, .jsonl or .zip)`);
    out.push({ path, kind, bytes: info.size });
  }
  return out;
}

function parse(source: string, text: string, keepText = false): RawRecord {
  try {
    const value = JSON.parse(text) as unknown;
    return keepText ? { source, value, text } : { source, value };
  } catch (error) {
    return { source, error: `invalid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function* fromJsonText(source: string, text: string): Generator<RawRecord> {
  const parsed = parse(source, text);
  if ('value' in parsed && Array.isArray(parsed.value)) {
    for (let i = 0; i < parsed.value.length; i++) yield { source: `${source}[${i}]`, value: parsed.value[i] as unknown };
  } else {
    yield parsed;
  }
}

/** Records per chunk yielded by the readers: one async step per chunk, not per record, keeps reading cheap. */
const CHUNK_RECORDS = 256;

async function* readJsonLines(path: string): AsyncGenerator<RawRecord[]> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let n = 0;
  let out: RawRecord[] = [];
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    const text = rest + decoder.write(chunk as Buffer);
    let start = 0;
    for (let nl = text.indexOf('\n', start); nl !== -1; nl = text.indexOf('\n', start)) {
      n++;
      const line = text.slice(start, text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl);
      start = nl + 1;
      if (line.trim() !== '') out.push(parse(`${path}:${n}`, line, true));
    }
    rest = text.slice(start);
    if (out.length >= CHUNK_RECORDS) {
      yield out;
      out = [];
    }
  }
  rest += decoder.end();
  if (rest.trim() !== '') out.push(parse(`${path}:${n + 1}`, rest.trim(), true));
  if (out.length > 0) yield out;
}

function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: true }, (error, zip) =>
      error ? reject(new SourceError(`${path}: ${error.message}`)) : resolve(zip),
    );
  });
}

function readEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<string> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (error, stream) => {
      if (error) return reject(error);
      const parts: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => parts.push(chunk));
      stream.on('error', reject);
      stream.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    });
  });
}

/** The next entry of a lazily read archive, or undefined at its end. */
function nextEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | undefined> {
  return new Promise((resolve, reject) => {
    const onEntry = (entry: yauzl.Entry) => {
      cleanup();
      resolve(entry);
    };
    const onEnd = () => {
      cleanup();
      resolve(undefined);
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

async function* readZip(path: string): AsyncGenerator<RawRecord[]> {
  const zip = await openZip(path);
  try {
    for (;;) {
      const entry = await nextEntry(zip);
      if (entry === undefined) return;
      if (entry.fileName.endsWith('/')) continue;
      const kind = sourceKind(entry.fileName);
      const source = `${path}!${entry.fileName}`;
      if (kind !== 'json' && kind !== 'jsonl') continue;
      let text: string;
      try {
        text = await readEntry(zip, entry);
      } catch (error) {
        yield [{ source, error: `cannot read archive entry: ${error instanceof Error ? error.message : String(error)}` }];
        continue;
      }
      if (kind === 'json') yield [...fromJsonText(source, text)];
      else {
        const out: RawRecord[] = [];
        let n = 0;
        for (const line of text.split('\n')) {
          n++;
          if (line.trim() !== '') out.push(parse(`${source}:${n}`, line));
        }
        yield out;
      }
    }
  } finally {
    zip.close();
  }
}

/** Yields every record of the given files in order, in chunks. */
export async function* readSources(files: readonly { path: string; kind: SourceKind }[]): AsyncGenerator<RawRecord[]> {
  let pending: RawRecord[] = [];
  for (const file of files) {
    if (file.kind === 'json') {
      // Directories of single-record files: gather a chunk before yielding.
      pending.push(...fromJsonText(file.path, await readFile(file.path, 'utf8')));
      if (pending.length >= CHUNK_RECORDS) {
        yield pending;
        pending = [];
      }
      continue;
    }
    if (pending.length > 0) {
      yield pending;
      pending = [];
    }
    yield* file.kind === 'jsonl' ? readJsonLines(file.path) : readZip(file.path);
  }
  if (pending.length > 0) yield pending;
}

/**
 * A quick estimate of how many records the files hold, for the progress bar: one per `.json` file, the lines of
 * JSON Lines files, the entries of archives.
 */
export async function estimateRecords(files: readonly { path: string; kind: SourceKind }[]): Promise<number> {
  let total = 0;
  for (const file of files) {
    if (file.kind === 'json') total += 1;
    else if (file.kind === 'zip') {
      const zip = await openZip(file.path);
      total += zip.entryCount;
      zip.close();
    } else {
      await new Promise<void>((resolve, reject) => {
        const stream = createReadStream(file.path);
        let lines = 0;
        let last = 10;
        stream.on('data', (data: string | Buffer) => {
          const chunk = typeof data === 'string' ? Buffer.from(data) : data;
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
          if (chunk.length > 0) last = chunk[chunk.length - 1] as number;
        });
        stream.on('error', reject);
        stream.on('end', () => {
          total += lines + (last === 10 ? 0 : 1);
          resolve();
        });
      });
    }
  }
  return total;
}
