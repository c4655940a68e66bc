import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Refusal } from './answers.ts';
import { anthropicDialect } from './anthropic.standin.ts';
import { geminiDialect } from './gemini.standin.ts';
import { openAiDialect } from './openai.standin.ts';
import type {
  DialectModule,
  DirectoryOptions,
  ErrorSpec,
  RawAnswer,
  RecordedFile,
  RecordedRequest,
  ScriptScope,
  StandinDialect,
  StandinModel,
  StandinOptions,
  StandinState,
  Times,
} from './standin.types.ts';

const DIALECTS: Record<StandinDialect, DialectModule> = { openai: openAiDialect, anthropic: anthropicDialect, gemini: geminiDialect };

/** A delay before the status line (`headers`, the default) or after the headers, before the body (`body`). */
export interface DelayScope extends ScriptScope {
  phase?: 'headers' | 'body';
}

/** A running stand-in of one provider's HTTP API on 127.0.0.1. */
export interface Standin {
  readonly dialect: StandinDialect;
  /** What a provider declaration's `base_url` would be: `http://127.0.0.1:PORT/v1` (Gemini `/v1beta`). */
  readonly baseUrl: string;
  /** `http://127.0.0.1:PORT`, for redirect targets. */
  readonly origin: string;
  readonly port: number;
  /** Every request received, in order, recorded before its answer was chosen. `reset` empties this same array. */
  readonly requests: RecordedRequest[];
  /** The next requests in scope (default: the next one) get `spec` rendered in the dialect's error shape. */
  fail(spec: ErrorSpec, scope?: Times | ScriptScope): void;
  /** The next requests in scope get this raw answer (an HTML 200, invalid JSON, a redirect, a cut connection). */
  respond(answer: RawAnswer, scope?: Times | ScriptScope): void;
  /** The next requests in scope are answered `ms` later. Adds to `latencyMs`. */
  delay(ms: number, scope?: Times | DelayScope): void;
  setModels(models: StandinModel[]): void;
  /** Replaces the directory options (page size, padding, fault). */
  setDirectory(options: DirectoryOptions): void;
  /** Forgets the recorded requests and pending scripts; restores the models and directory options given at start. */
  reset(): void;
  /** Stops listening, cuts open connections and drops pending delayed answers. A second call does nothing. */
  close(): Promise<void>;
}

interface Script<T> {
  value: T;
  remaining: Times;
  when: ((request: RecordedRequest) => boolean) | undefined;
}

type ScriptedAnswer = { kind: 'error'; spec: ErrorSpec } | { kind: 'raw'; answer: RawAnswer };

function toScript<T>(value: T, scope: Times | ScriptScope | undefined): Script<T> {
  const { times = 1, when } = typeof scope === 'object' ? scope : { times: scope };
  if (times !== 'always' && !(Number.isInteger(times) && times > 0))
    throw new Error(`times must be a positive integer or 'always', not ${times}`);
  return { value, remaining: times, when };
}

/** The first script that applies to `request`, consumed once. */
function take<T>(scripts: Script<T>[], request: RecordedRequest): T | undefined {
  const index = scripts.findIndex((s) => !s.when || s.when(request));
  const script = scripts[index];
  if (!script) return undefined;
  if (script.remaining !== 'always' && --script.remaining === 0) scripts.splice(index, 1);
  return script.value;
}

async function parseForm(body: Buffer, contentType: string): Promise<Record<string, string | RecordedFile> | undefined> {
  try {
    // The platform's own multipart parser (undici's), so the stand-in judges a body as a real server would.
    const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
    const out: Record<string, string | RecordedFile> = {};
    for (const [name, value] of form) {
      out[name] =
        typeof value === 'string' ? value : { filename: value.name, contentType: value.type, data: Buffer.from(await value.arrayBuffer()) };
    }
    return out;
  } catch {
    return undefined;
  }
}

async function receive(req: IncomingMessage): Promise<RecordedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const url = new URL(req.url ?? '/', 'http://standin.invalid');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  const contentType = headers['content-type'] ?? '';
  let json: unknown;
  if (/\bjson\b/i.test(contentType) && body.length > 0) {
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      json = undefined;
    }
  }
  return {
    method: req.method ?? 'GET',
    path: url.pathname,
    url: req.url ?? '/',
    query: Object.fromEntries(url.searchParams),
    headers,
    body,
    json,
    form: /^multipart\/form-data/i.test(contentType) ? await parseForm(body, contentType) : undefined,
  };
}

function checkDirectory(dialect: StandinDialect, options: DirectoryOptions): DirectoryOptions {
  if (options.pageSize !== undefined && !(Number.isInteger(options.pageSize) && options.pageSize > 0))
    throw new Error('directory.pageSize must be a positive integer');
  const fault = options.fault;
  if (fault && fault.how !== 'endless' && !(Number.isInteger(fault.afterPages) && fault.afterPages >= 0))
    throw new Error('directory.fault.afterPages must be a non-negative integer');
  if (fault?.how === 'repeat_cursor' && fault.afterPages < 1)
    throw new Error('repeat_cursor needs afterPages ≥ 1: the first page has no cursor');
  if (fault?.how === 'missing_cursor' && dialect === 'gemini')
    throw new Error("Gemini's only sign of another page is nextPageToken, so a page cannot claim more without one");
  if (fault && fault.how !== 'page_error' && dialect === 'openai' && options.pageSize === undefined)
    throw new Error('the OpenAI directory pages only with a pageSize (unpaginated, it has no cursor to break)');
  return { ...options };
}

/**
 * Starts a stand-in of `options.dialect` on `127.0.0.1:0`. It serves the dialect's directory and inference endpoints
 * as the adapters in `src/admin/wires/` call them, answers errors in the dialect's documented shapes, and records
 * every request. Close it after the test.
 */
export async function startStandin(options: StandinOptions): Promise<Standin> {
  const dialect = DIALECTS[options.dialect];
  const initialModels = options.models ?? dialect.defaultModels;
  const initialDirectory = checkDirectory(options.dialect, {
    ...options.directory,
    ...(options.pageSize !== undefined ? { pageSize: options.pageSize } : {}),
  });
  let counter = 0;
  const state: StandinState = {
    models: initialModels,
    directory: initialDirectory,
    reply: options.reply ?? 'ok',
    nextId: () => `req_standin${String(++counter).padStart(6, '0')}`,
  };
  const requests: RecordedRequest[] = [];
  const answers: Script<ScriptedAnswer>[] = [];
  const delays: Script<{ ms: number; phase: 'headers' | 'body' }>[] = [];
  const pendingWaits = new Set<() => void>();
  const latencyMs = options.latencyMs ?? 0;

  /** Resolves after `ms`, or early when the client goes away or the stand-in closes; true when the time ran out. */
  function wait(ms: number, res: ServerResponse): Promise<boolean> {
    if (ms <= 0) return Promise.resolve(!res.destroyed);
    return new Promise((resolve) => {
      const finish = (elapsed: boolean) => {
        clearTimeout(timer);
        pendingWaits.delete(cancel);
        res.off('close', cancel);
        resolve(elapsed);
      };
      const cancel = () => finish(false);
      const timer = setTimeout(() => finish(true), ms);
      pendingWaits.add(cancel);
      res.on('close', cancel);
    });
  }

  function answerFor(request: RecordedRequest): RawAnswer {
    try {
      return normalAnswer(request);
    } catch (error) {
      if (error instanceof Refusal) return error.answer;
      throw error;
    }
  }

  function normalAnswer(request: RecordedRequest): RawAnswer {
    const scripted = take(answers, request);
    if (scripted) return scripted.kind === 'error' ? dialect.error(scripted.spec, state) : scripted.answer;
    const prefix = `${dialect.basePath}/`;
    if (!request.path.startsWith(prefix)) return dialect.notFound(request, state);
    if (options.apiKey !== undefined) {
      const refusal = dialect.authenticate(request, options.apiKey, state);
      if (refusal) return refusal;
    }
    return dialect.handle(request, request.path.slice(prefix.length), state);
  }

  async function send(res: ServerResponse, answer: RawAnswer, bodyDelayMs: number): Promise<void> {
    const body = typeof answer.body === 'string' ? Buffer.from(answer.body) : answer.body;
    res.writeHead(answer.status, { ...answer.headers, ...(answer.chunked ? {} : { 'content-length': String(body.length) }) });
    if (bodyDelayMs > 0) {
      res.flushHeaders();
      if (!(await wait(bodyDelayMs, res))) return;
    }
    if (answer.truncateAt !== undefined) {
      res.write(body.subarray(0, answer.truncateAt), () => res.destroy());
      return;
    }
    if (answer.chunked) res.write(body);
    res.end(answer.chunked ? undefined : body);
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const request = await receive(req);
    requests.push(request);
    const answer = answerFor(request);
    const delay = take(delays, request);
    const headersAfter = latencyMs + (delay?.phase === 'headers' ? delay.ms : 0);
    if (!(await wait(headersAfter, res))) return;
    await send(res, answer, delay?.phase === 'body' ? delay.ms : 0);
  }

  const server = createServer((req, res) => {
    serve(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  return {
    dialect: options.dialect,
    baseUrl: `${origin}${dialect.basePath}`,
    origin,
    port,
    requests,
    fail(spec, scope) {
      if (spec.dialect !== undefined && spec.dialect !== options.dialect)
        throw new Error(`a ${spec.dialect} error given to the ${options.dialect} stand-in`);
      answers.push(toScript({ kind: 'error', spec }, scope));
    },
    respond(answer, scope) {
      answers.push(toScript({ kind: 'raw', answer }, scope));
    },
    delay(ms, scope) {
      const phase = typeof scope === 'object' ? (scope.phase ?? 'headers') : 'headers';
      delays.push(toScript({ ms, phase }, scope));
    },
    setModels(models) {
      state.models = models;
    },
    setDirectory(directory) {
      state.directory = checkDirectory(options.dialect, directory);
    },
    reset() {
      requests.length = 0;
      answers.length = 0;
      delays.length = 0;
      state.models = initialModels;
      state.directory = initialDirectory;
    },
    async close() {
      if (!server.listening) return;
      for (const cancel of [...pendingWaits]) cancel();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
