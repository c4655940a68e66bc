/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-explicit-any -- provider bodies are untyped JSON (Reply.json); the assertions pin their shape */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CATALOG_DIR, loadCatalog } from '../../../src/admin/catalog/catalog.loader.ts';
import type { ApiFormat } from '../../../src/admin/catalog/wires.ts';
import { silentWav } from '../../../src/admin/wires/openai-transcription.wire.ts';
import type { DirectoryFormat, MultipartBody, UpstreamRequest, WireCredential } from '../../../src/admin/wires/wire.types.ts';
import { endpointFor } from '../../../src/admin/wires/wires.registry.ts';
import {
  PROVIDER_ERRORS,
  RAW_ANSWERS,
  startStandin,
  type ErrorSpec,
  type Standin,
  type StandinDialect,
  type StandinOptions,
} from './index.ts';

const KEY = 'sk-standin-key-1234';
const credential: WireCredential = { kind: 'api_key', key: KEY };
const DIALECT_OF: Record<ApiFormat, StandinDialect> = {
  openai_chat: 'openai',
  anthropic_messages: 'anthropic',
  gemini_generate_content: 'gemini',
};
/** The directory each dialect's adapters read (any adapter of the format has the same one). */
const DIRECTORY_OF: Record<StandinDialect, DirectoryFormat> = {
  openai: endpointFor('openai_chat', 'text_generation')!.directory,
  anthropic: endpointFor('anthropic_messages', 'text_generation')!.directory,
  gemini: endpointFor('gemini_generate_content', 'text_generation')!.directory,
};
/** The headers a dialect's adapters send with an API key. */
const AUTH: Record<StandinDialect, Record<string, string>> = {
  openai: { authorization: `Bearer ${KEY}` },
  anthropic: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' },
  gemini: { 'x-goog-api-key': KEY },
};
const DIALECTS: StandinDialect[] = ['openai', 'anthropic', 'gemini'];

const open: Standin[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function standin(options: StandinOptions): Promise<Standin> {
  const s = await startStandin(options);
  open.push(s);
  return s;
}

const models = (n: number, prefix = 'm') => Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i + 1}`, display_name: `M ${i + 1}` }));

function formOf(body: MultipartBody): FormData {
  const form = new FormData();
  for (const part of body.parts) {
    if ('filename' in part) form.append(part.name, new Blob([Buffer.from(part.data)], { type: part.contentType }), part.filename);
    else form.append(part.name, part.value);
  }
  return form;
}

/** Sends what an adapter built, as the platform's sender will: no redirects followed. */
function send(request: UpstreamRequest, signal?: AbortSignal): Promise<Response> {
  const init: RequestInit = { method: request.method, headers: request.headers, redirect: 'manual', ...(signal ? { signal } : {}) };
  if (request.body !== null) init.body = typeof request.body === 'string' ? request.body : formOf(request.body);
  return fetch(request.url, init);
}

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON; undefined when it is not JSON. */
  json: any;
}

async function call(
  s: Standin,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown } = {},
): Promise<Reply> {
  const response = await fetch(`${s.baseUrl}/${path}`, {
    method,
    redirect: 'manual',
    headers: { ...AUTH[s.dialect], ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
    ...(options.body !== undefined ? { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** The simplest inference request of each dialect for `model`. */
const INFERENCE: Record<StandinDialect, (model: string) => { path: string; body: unknown }> = {
  openai: (model) => ({ path: 'chat/completions', body: { model, messages: [{ role: 'user', content: 'hi' }] } }),
  anthropic: (model) => ({ path: 'messages', body: { model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } }),
  gemini: (model) => ({ path: `models/${model}:generateContent`, body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } }),
};

const infer = (s: Standin, model: string) => {
  const { path, body } = INFERENCE[s.dialect](model);
  return call(s, 'POST', path, { body });
};

describe('provider stand-ins accept what the adapters build', () => {
  it("answers every shipped OpenAI, Anthropic and Gemini model's probe with 200, and lists them in the adapter's directory", async () => {
    const state = loadCatalog(DEFAULT_CATALOG_DIR);
    if (!state.ok) throw new Error(state.reason);
    const stands = {
      openai: await standin({ dialect: 'openai', apiKey: KEY }),
      anthropic: await standin({ dialect: 'anthropic', apiKey: KEY }),
      gemini: await standin({ dialect: 'gemini', apiKey: KEY }),
    };
    let probed = 0;
    for (const providerId of ['openai', 'anthropic', 'google']) {
      const provider = state.catalog.providers.get(providerId)!;
      const s = stands[DIALECT_OF[provider.declaration.api_format]];
      const listed = DIRECTORY_OF[s.dialect].parse(await (await send(DIRECTORY_OF[s.dialect].request(s.baseUrl, credential, null))).json());
      expect(listed.next).toBeNull();
      for (const model of [...state.catalog.composed.values()].filter((m) => m.provider_id === providerId)) {
        expect(
          listed.models.map((m) => m.id),
          model.ref,
        ).toContain(model.model_id);
        const adapter = endpointFor(provider.declaration.api_format, model.workload)!;
        const probe = adapter.probe(model);
        if (!probe.ok) throw new Error(`${model.ref}: ${probe.reason}`);
        const before = s.requests.length;
        const response = await send(adapter.build({ baseUrl: s.baseUrl, model, credential }, probe.input));
        expect(response.status, `${model.ref}: ${await response.clone().text()}`).toBe(200);
        await response.arrayBuffer();
        expect(s.requests.length).toBe(before + 1);
        probed++;
      }
    }
    expect(probed).toBeGreaterThanOrEqual(18);
    const transcription = stands.openai.requests.find((r) => r.path === '/v1/audio/transcriptions')!;
    expect(transcription.form?.model).toBe('whisper-1');
    expect(transcription.form?.file).toEqual({ filename: 'probe.wav', contentType: 'audio/wav', data: Buffer.from(silentWav(250)) });
    const speech = stands.openai.requests.find((r) => r.path === '/v1/audio/speech')!;
    expect(speech.json).toMatchObject({ model: 'tts-1', voice: 'alloy', response_format: 'wav' });
  });

  it('answers in each dialect the shapes its clients read', async () => {
    const openai = await standin({ dialect: 'openai', reply: 'pong' });
    const chat = await infer(openai, 'gpt-4.1');
    expect(chat.json).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-4.1',
      choices: [{ index: 0, message: { role: 'assistant', content: 'pong' }, finish_reason: 'stop' }],
    });
    expect(chat.json.usage.total_tokens).toBe(chat.json.usage.prompt_tokens + chat.json.usage.completion_tokens);
    const embeddings = await call(openai, 'POST', 'embeddings', { body: { model: 'text-embedding-3-small', input: ['a', 'b'] } });
    expect(embeddings.json.data.map((d: { index: number }) => d.index)).toEqual([0, 1]);
    expect(embeddings.json.data[0].embedding).toHaveLength(8);
    expect(embeddings.json.data[0].embedding).not.toEqual(embeddings.json.data[1].embedding);
    const image = await call(openai, 'POST', 'images/generations', { body: { model: 'gpt-image-1', prompt: 'grey' } });
    expect(
      Buffer.from(image.json.data[0].b64_json as string, 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    const mp3 = await fetch(`${openai.baseUrl}/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts-1', input: 'hi', voice: 'alloy' }),
    });
    expect(mp3.headers.get('content-type')).toBe('audio/mpeg');
    expect(
      Buffer.from(await mp3.arrayBuffer())
        .subarray(0, 3)
        .toString(),
    ).toBe('ID3');
    const stream = await call(openai, 'POST', 'chat/completions', {
      body: { model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } },
    });
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    expect(stream.text).toContain('"content":"pong"');
    expect(stream.text.endsWith('data: [DONE]\n\n')).toBe(true);

    const anthropic = await standin({ dialect: 'anthropic' });
    const message = await infer(anthropic, 'claude-sonnet-4-5-20250929');
    expect(message.json).toMatchObject({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'ok' }],
      model: 'claude-sonnet-4-5-20250929',
      stop_reason: 'end_turn',
    });
    expect(message.json.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: 1 });
    expect(message.headers.get('request-id')).toMatch(/^req_/);

    const gemini = await standin({ dialect: 'gemini' });
    const content = await infer(gemini, 'gemini-2.5-flash');
    expect(content.json).toMatchObject({
      candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }],
      usageMetadata: { candidatesTokenCount: 1 },
    });
    const streamed = await call(gemini, 'POST', 'models/gemini-2.5-flash:streamGenerateContent?alt=sse', {
      body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
    });
    expect(streamed.text.startsWith('data: {"candidates"')).toBe(true);
    const embedded = await call(gemini, 'POST', 'models/gemini-embedding-001:embedContent', {
      body: { content: { parts: [{ text: 'a' }] } },
    });
    expect(embedded.json.embedding.values).toHaveLength(8);
  });
});

describe('directory paging', () => {
  /** Pages through a directory the way discovery does: follow `next` until null. */
  async function pageAll(s: Standin): Promise<string[]> {
    const directory = DIRECTORY_OF[s.dialect];
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const parsed = directory.parse(await (await send(directory.request(s.baseUrl, credential, cursor))).json());
      ids.push(...parsed.models.map((m) => m.id));
      cursor = parsed.next;
      if (cursor === null) return ids;
    }
    throw new Error('more than 10 pages');
  }

  it.each(['anthropic', 'gemini'] as const)('%s: three pages with its own cursors, each request recorded', async (dialect) => {
    const s = await standin({ dialect, apiKey: KEY, models: models(5), pageSize: 2 });
    expect(await pageAll(s)).toEqual(['m-1', 'm-2', 'm-3', 'm-4', 'm-5']);
    expect(s.requests.map((r) => r.method)).toEqual(['GET', 'GET', 'GET']);
    const queries = s.requests.map((r) => r.query);
    if (dialect === 'anthropic') {
      expect(queries).toEqual([{ limit: '1000' }, { limit: '1000', after_id: 'm-2' }, { limit: '1000', after_id: 'm-4' }]);
      expect(s.requests[0]?.headers).toMatchObject({ 'x-api-key': KEY, 'anthropic-version': '2023-06-01' });
    } else {
      expect(queries.map((q) => q.pageSize)).toEqual(['1000', '1000', '1000']);
      expect(queries[0]?.pageToken).toBeUndefined();
      expect(queries[1]?.pageToken).toMatch(/^[\w-]+$/);
      expect(s.requests[0]?.headers['x-goog-api-key']).toBe(KEY);
    }
  });

  it('anthropic pages carry has_more, first_id and last_id; gemini names models/<id> and omits the token on the last page', async () => {
    const anthropic = await standin({ dialect: 'anthropic', models: models(3), pageSize: 2 });
    const first = await call(anthropic, 'GET', 'models');
    expect(first.json).toMatchObject({ has_more: true, first_id: 'm-1', last_id: 'm-2' });
    expect(first.json.data[0]).toEqual({ type: 'model', id: 'm-1', display_name: 'M 1', created_at: '2025-01-01T00:00:00.000Z' });
    expect((await call(anthropic, 'GET', 'models?after_id=m-2')).json).toMatchObject({ has_more: false, first_id: 'm-3', last_id: 'm-3' });
    expect((await call(anthropic, 'GET', 'models?limit=1')).json.data).toHaveLength(1);
    expect((await call(anthropic, 'GET', 'models?after_id=nope')).status).toBe(400);

    const gemini = await standin({ dialect: 'gemini', models: models(3), pageSize: 2 });
    const page = await call(gemini, 'GET', 'models');
    expect(page.json.models.map((m: { name: string }) => m.name)).toEqual(['models/m-1', 'models/m-2']);
    const last = await call(gemini, 'GET', `models?pageToken=${page.json.nextPageToken}`);
    expect(last.json.models).toHaveLength(1);
    expect('nextPageToken' in last.json).toBe(false);
    expect((await call(gemini, 'GET', 'models?pageToken=garbage')).json.error.status).toBe('INVALID_ARGUMENT');
  });

  it('openai: one unpaginated list by default; with a page size, the has_more/last_id/after paging of compatible servers', async () => {
    const plain = await standin({ dialect: 'openai', models: models(5) });
    const list = await call(plain, 'GET', 'models');
    expect(list.json.object).toBe('list');
    expect(list.json.data).toHaveLength(5);
    expect(list.json.data[0]).toEqual({ id: 'm-1', object: 'model', created: 1_735_689_600, owned_by: 'system' });
    expect('has_more' in list.json).toBe(false);

    const paged = await standin({ dialect: 'openai', models: models(5), pageSize: 2 });
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await call(paged, 'GET', `models${after ? `?after=${after}` : ''}`);
      seen.push(...page.json.data.map((m: { id: string }) => m.id));
      if (!page.json.has_more) break;
      after = page.json.last_id as string;
    }
    expect(seen).toEqual(['m-1', 'm-2', 'm-3', 'm-4', 'm-5']);
    expect(paged.requests.map((r) => r.url)).toEqual(['/v1/models', '/v1/models?after=m-2', '/v1/models?after=m-4']);
  });

  it('an oversized page is padded past the limit and stays the same JSON; chunked pages announce no length', async () => {
    const s = await standin({ dialect: 'anthropic', models: models(2), directory: { padToBytes: 64 * 1024, chunked: true } });
    const response = await fetch(`${s.baseUrl}/models`, { headers: AUTH.anthropic });
    expect(response.headers.get('content-length')).toBeNull();
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    const text = await response.text();
    expect(Buffer.byteLength(text)).toBe(64 * 1024);
    expect(DIRECTORY_OF.anthropic.parse(JSON.parse(text)).models.map((m) => m.id)).toEqual(['m-1', 'm-2']);
    s.setModels(models(3000));
    s.setDirectory({});
    const big = await call(s, 'GET', 'models');
    expect(big.json).toMatchObject({ has_more: true, last_id: 'm-20' });
  });

  it('faults: a failing page, a page claiming more without a cursor, a repeated cursor, an endless directory', async () => {
    const failing = await standin({
      dialect: 'gemini',
      models: models(5),
      directory: { pageSize: 2, fault: { how: 'page_error', afterPages: 1, error: PROVIDER_ERRORS.gemini.unavailable() } },
    });
    const first = await call(failing, 'GET', 'models');
    const second = await call(failing, 'GET', `models?pageToken=${first.json.nextPageToken}`);
    expect(second.status).toBe(503);
    expect(second.json.error).toMatchObject({ code: 503, status: 'UNAVAILABLE' });

    const noCursor = await standin({
      dialect: 'anthropic',
      models: models(5),
      directory: { pageSize: 2, fault: { how: 'missing_cursor', afterPages: 1 } },
    });
    const page2 = await call(noCursor, 'GET', 'models?after_id=m-2');
    expect(page2.json).toMatchObject({ has_more: true, last_id: null });
    expect(() => DIRECTORY_OF.anthropic.parse(page2.json)).toThrow('has_more without last_id');
    const openaiNoCursor = await standin({
      dialect: 'openai',
      models: models(5),
      directory: { pageSize: 2, fault: { how: 'missing_cursor', afterPages: 0 } },
    });
    const openaiPage = await call(openaiNoCursor, 'GET', 'models');
    expect(openaiPage.json.has_more).toBe(true);
    expect('last_id' in openaiPage.json).toBe(false);

    const loop = await standin({
      dialect: 'gemini',
      models: models(9),
      directory: { pageSize: 2, fault: { how: 'repeat_cursor', afterPages: 2 } },
    });
    const p1 = await call(loop, 'GET', 'models');
    const p2 = await call(loop, 'GET', `models?pageToken=${p1.json.nextPageToken}`);
    const p3 = await call(loop, 'GET', `models?pageToken=${p2.json.nextPageToken}`);
    expect(p3.json.nextPageToken).toBe(p2.json.nextPageToken);
    expect(p3.json.models.map((m: { name: string }) => m.name)).toEqual(['models/m-5', 'models/m-6']);

    const endless = await standin({ dialect: 'anthropic', models: models(1), directory: { pageSize: 3, fault: { how: 'endless' } } });
    let after = '';
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const page = await call(endless, 'GET', `models${after ? `?after_id=${after}` : ''}`);
      expect(page.json.has_more).toBe(true);
      ids.push(...page.json.data.map((m: { id: string }) => m.id));
      after = page.json.last_id as string;
    }
    expect(new Set(ids).size).toBe(15);
    expect(ids.slice(0, 3)).toEqual(['m-1', 'endless-1', 'endless-2']);

    await expect(
      startStandin({ dialect: 'gemini', directory: { pageSize: 2, fault: { how: 'missing_cursor', afterPages: 1 } } }),
    ).rejects.toThrow('nextPageToken');
    await expect(
      startStandin({ dialect: 'anthropic', directory: { pageSize: 2, fault: { how: 'repeat_cursor', afterPages: 0 } } }),
    ).rejects.toThrow('afterPages');
  });
});

describe('authentication', () => {
  it('openai: no key and a wrong key are 401 in its shape, the wrong key echoed only masked', async () => {
    const s = await standin({ dialect: 'openai', apiKey: KEY });
    const none = await call(s, 'GET', 'models', { headers: { authorization: '' } });
    expect(none.status).toBe(401);
    expect(none.json.error).toMatchObject({ type: 'invalid_request_error', code: null, param: null });
    const wrong = await call(s, 'GET', 'models', { headers: { authorization: 'Bearer sk-not-the-right-key-9876' } });
    expect(wrong.status).toBe(401);
    expect(wrong.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key', param: null });
    expect(wrong.json.error.message).toContain('sk-*');
    expect(wrong.text).not.toContain('not-the-right');
    expect((await call(s, 'GET', 'models')).status).toBe(200);
  });

  it('anthropic: x-api-key or bearer, 401 authentication_error otherwise; anthropic-version is required', async () => {
    const s = await standin({ dialect: 'anthropic', apiKey: KEY });
    const none = await call(s, 'GET', 'models', { headers: { 'x-api-key': '' } });
    expect(none.status).toBe(401);
    const wrong = await call(s, 'POST', 'messages', {
      headers: { 'x-api-key': 'nope' },
      body: INFERENCE.anthropic('claude-haiku-4-5-20251001').body,
    });
    expect(wrong.json).toMatchObject({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
    expect(wrong.json.request_id).toBe(wrong.headers.get('request-id'));
    const noVersion = await fetch(`${s.baseUrl}/models`, { headers: { 'x-api-key': KEY } });
    expect(noVersion.status).toBe(400);
    expect(await noVersion.json()).toMatchObject({
      error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' },
    });
    expect(
      (await fetch(`${s.baseUrl}/models`, { headers: { authorization: `Bearer ${KEY}`, 'anthropic-version': '2023-06-01' } })).status,
    ).toBe(200);
  });

  it('gemini: a wrong key is 400 API_KEY_INVALID, no credential 403, a wrong bearer 401; ?key= works too', async () => {
    const s = await standin({ dialect: 'gemini', apiKey: KEY });
    const wrong = await call(s, 'GET', 'models', { headers: { 'x-goog-api-key': 'AIza-wrong' } });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error).toMatchObject({
      code: 400,
      status: 'INVALID_ARGUMENT',
      details: expect.arrayContaining([expect.objectContaining({ reason: 'API_KEY_INVALID' })]),
    });
    const none = await fetch(`${s.baseUrl}/models`);
    expect(none.status).toBe(403);
    expect(((await none.json()) as { error: { status: string } }).error.status).toBe('PERMISSION_DENIED');
    const bearer = await fetch(`${s.baseUrl}/models`, { headers: { authorization: 'Bearer ya29.wrong' } });
    expect(bearer.status).toBe(401);
    expect((await fetch(`${s.baseUrl}/models?key=${KEY}`)).status).toBe(200);
  });

  it('without apiKey no credential is needed (the `none` lane)', async () => {
    const s = await standin({ dialect: 'openai' });
    expect((await fetch(`${s.baseUrl}/models`)).status).toBe(200);
  });
});

describe('errors in each dialect', () => {
  it.each(DIALECTS)('%s: every PROVIDER_ERRORS helper renders in the documented shape with its status and headers', async (dialect) => {
    const s = await standin({ dialect, apiKey: KEY });
    const helpers = Object.entries(PROVIDER_ERRORS[dialect]) as [string, (...args: never[]) => ErrorSpec][];
    for (const [name, make] of helpers) {
      const spec = make();
      s.fail(spec);
      const reply = await call(s, 'GET', 'models');
      expect(reply.status, name).toBe(spec.status);
      expect(reply.headers.get('content-type'), name).toMatch(/^application\/json/);
      for (const [header, value] of Object.entries(spec.headers ?? {})) expect(reply.headers.get(header), `${name} ${header}`).toBe(value);
      if (dialect === 'openai') {
        expect(Object.keys(reply.json.error).sort(), name).toEqual(['code', 'message', 'param', 'type']);
        expect(reply.json.error.type, name).toBe(spec.type ?? (spec.status >= 500 ? 'server_error' : 'invalid_request_error'));
      } else if (dialect === 'anthropic') {
        expect(reply.json, name).toMatchObject({ type: 'error', error: { type: spec.type, message: spec.message } });
      } else {
        expect(reply.json.error, name).toMatchObject({ code: spec.status, status: spec.type, message: spec.message });
      }
      expect(typeof (reply.json.error.message as unknown), name).toBe('string');
    }
    expect(s.requests).toHaveLength(helpers.length);
    expect((await call(s, 'GET', 'models')).status).toBe(200);
  });

  it('pins the facts classification depends on', async () => {
    const openai = PROVIDER_ERRORS.openai;
    expect(openai.rateLimited('tokens', 7)).toMatchObject({
      status: 429,
      type: 'tokens',
      code: 'rate_limit_exceeded',
      headers: { 'retry-after': '7', 'x-ratelimit-reset-tokens': '7s' },
    });
    expect(openai.rateLimited().headers).toHaveProperty('x-ratelimit-reset-requests');
    expect(openai.insufficientQuota()).toMatchObject({ status: 429, type: 'insufficient_quota', code: 'insufficient_quota' });
    expect(openai.modelNotFound('x')).toMatchObject({ status: 404, code: 'model_not_found' });
    expect(openai.projectLacksModel('x')).toMatchObject({ status: 403, code: 'model_not_found' });
    expect(['model_not_exist', 'model_retired', 'model_decommissioned']).toEqual([
      openai.modelNotExist('x').code,
      openai.modelRetired('x').code,
      openai.modelDecommissioned('x').code,
    ]);
    expect(openai.unsupportedParameter()).toMatchObject({ status: 400, param: 'max_tokens', code: 'unsupported_parameter' });
    expect(openai.unsupportedParameter().message).toContain("Use 'max_completion_tokens' instead");
    expect(PROVIDER_ERRORS.anthropic.overloaded()).toMatchObject({ status: 529, type: 'overloaded_error' });
    expect(PROVIDER_ERRORS.anthropic.rateLimited(3).headers).toMatchObject({ 'retry-after': '3' });
    const gemini = PROVIDER_ERRORS.gemini;
    expect(gemini.rateLimited(5).details).toContainEqual({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '5s' });
    expect(gemini.quotaExhausted().message).toBe(gemini.rateLimited().message);
    expect(JSON.stringify(gemini.quotaExhausted().details)).not.toContain('RetryInfo');

    const s = await standin({ dialect: 'anthropic' });
    s.fail(PROVIDER_ERRORS.anthropic.overloaded());
    const overloaded = await infer(s, 'claude-3-5-haiku-20241022');
    expect(overloaded.status).toBe(529);
    expect(overloaded.json).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
      request_id: expect.stringMatching(/^req_/),
    });
  });

  it('a bare status takes the dialect defaults; another dialect’s error is refused as a test mistake', async () => {
    const expected: Record<StandinDialect, unknown> = {
      openai: { error: { type: 'server_error', code: null, param: null, message: expect.any(String) } },
      anthropic: { type: 'error', error: { type: 'api_error' } },
      gemini: { error: { code: 500, status: 'INTERNAL' } },
    };
    for (const dialect of DIALECTS) {
      const s = await standin({ dialect });
      s.fail({ status: 500 });
      expect((await call(s, 'GET', 'models')).json).toMatchObject(expected[dialect] as object);
      const foreign = dialect === 'openai' ? PROVIDER_ERRORS.gemini.internal() : PROVIDER_ERRORS.openai.serverError();
      expect(() => s.fail(foreign)).toThrow('stand-in');
    }
  });

  it('an unknown model in an inference request is the dialect’s model-not-found; a reasoning model refuses max_tokens', async () => {
    const openai = await standin({ dialect: 'openai' });
    const missing = await infer(openai, 'gpt-9');
    expect(missing.status).toBe(404);
    expect(missing.json.error).toMatchObject({ code: 'model_not_found', type: 'invalid_request_error' });
    const refused = await call(openai, 'POST', 'chat/completions', {
      body: { model: 'gpt-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ param: 'max_tokens', code: 'unsupported_parameter' });
    const accepted = await call(openai, 'POST', 'chat/completions', {
      body: { model: 'gpt-5', max_completion_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(accepted.status).toBe(200);
    expect((await call(openai, 'POST', 'chat/completion', { body: {} })).json.error.message).toBe('Invalid URL (POST /v1/chat/completion)');

    const anthropic = await standin({ dialect: 'anthropic' });
    const gone = await infer(anthropic, 'claude-2');
    expect(gone.status).toBe(404);
    expect(gone.json.error).toEqual({ type: 'not_found_error', message: 'model: claude-2' });
    const noBudget = await call(anthropic, 'POST', 'messages', {
      body: { model: 'claude-3-5-haiku-20241022', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(noBudget.json.error.message).toBe('max_tokens: Field required');

    const gemini = await standin({ dialect: 'gemini' });
    const absent = await infer(gemini, 'gemini-0');
    expect(absent.status).toBe(404);
    expect(absent.json.error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
    const unknownField = await call(gemini, 'POST', 'models/gemini-2.5-flash:generateContent', {
      body: { contents: [{ parts: [{ text: 'hi' }] }], generationConfig: { max_tokens: 5 } },
    });
    expect(unknownField.status).toBe(400);
    expect(unknownField.json.error.message).toContain('Unknown name "max_tokens"');
  });
});

describe('scripts: raw answers, counts, delays, recording', () => {
  it('raw answers: an HTML 200, invalid JSON, a redirect that is not followed, a cut connection', async () => {
    const s = await standin({ dialect: 'openai', apiKey: KEY });
    s.respond(RAW_ANSWERS.html200());
    const html = await call(s, 'GET', 'models');
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html.json).toBeUndefined();

    s.respond(RAW_ANSWERS.invalidJson());
    const invalid = await call(s, 'GET', 'models');
    expect(invalid.headers.get('content-type')).toBe('application/json');
    expect(invalid.json).toBeUndefined();

    s.respond(RAW_ANSWERS.redirect(`${s.origin}/elsewhere`));
    const redirect = await send(DIRECTORY_OF.openai.request(s.baseUrl, credential, null));
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe(`${s.origin}/elsewhere`);
    expect(s.requests.map((r) => r.path)).toEqual(['/v1/models', '/v1/models', '/v1/models']);

    s.respond(RAW_ANSWERS.truncated({ object: 'list', data: models(50) }, 100));
    const cut = await fetch(`${s.baseUrl}/models`, { headers: AUTH.openai });
    expect(cut.status).toBe(200);
    await expect(cut.text()).rejects.toThrow();

    s.respond(RAW_ANSWERS.gatewayHtml(502));
    expect((await call(s, 'GET', 'models')).status).toBe(502);
  });

  it('counts: the next N, always, and only the requests `when` picks', async () => {
    const s = await standin({ dialect: 'gemini', apiKey: KEY });
    s.fail(PROVIDER_ERRORS.gemini.internal(), 2);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(s, 'GET', 'models')).status);
    expect(statuses).toEqual([500, 500, 200]);

    s.fail(PROVIDER_ERRORS.gemini.rateLimited(), { times: 'always', when: (r) => r.path.endsWith(':generateContent') });
    expect((await call(s, 'GET', 'models')).status).toBe(200);
    expect((await infer(s, 'gemini-2.5-pro')).status).toBe(429);
    expect((await infer(s, 'gemini-2.5-pro')).status).toBe(429);
    s.reset();
    expect(s.requests).toHaveLength(0);
    expect((await infer(s, 'gemini-2.5-pro')).status).toBe(200);
    expect(() => s.fail({ status: 500 }, 0)).toThrow('positive integer');
  });

  it('delays: an answer past the client deadline, a body after prompt headers, a constant latency, close with an answer pending', async () => {
    const s = await standin({ dialect: 'anthropic' });
    s.delay(2000);
    const started = Date.now();
    await expect(fetch(`${s.baseUrl}/models`, { headers: AUTH.anthropic, signal: AbortSignal.timeout(100) })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(1500);
    expect(s.requests).toHaveLength(1);

    // Margins allow for a loaded machine: the body must come well after the headers, not to the millisecond.
    s.delay(300, { phase: 'body' });
    const t0 = Date.now();
    const response = await fetch(`${s.baseUrl}/models`, { headers: AUTH.anthropic });
    const headersAt = Date.now();
    expect(response.status).toBe(200);
    await response.json();
    expect(Date.now() - headersAt).toBeGreaterThanOrEqual(150);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);

    const slow = await standin({ dialect: 'openai', latencyMs: 60 });
    const t1 = Date.now();
    await call(slow, 'GET', 'models');
    expect(Date.now() - t1).toBeGreaterThanOrEqual(55);

    slow.delay(10_000);
    const pending = fetch(`${slow.baseUrl}/models`).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const t2 = Date.now();
    await slow.close();
    expect(Date.now() - t2).toBeLessThan(500);
    expect(await pending).toBeInstanceOf(Error);
  });

  it('records method, path, query, lower-cased headers, raw body and JSON before answering, scripted or not', async () => {
    const s = await standin({ dialect: 'openai', apiKey: KEY });
    s.fail(PROVIDER_ERRORS.openai.insufficientQuota());
    await fetch(`${s.baseUrl}/chat/completions?trace=1`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json', 'X-Custom': 'A' },
      body: '{"model":"gpt-4.1","messages":[],"max_tokens":16}',
    });
    const [recorded] = s.requests;
    expect(recorded).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions',
      url: '/v1/chat/completions?trace=1',
      query: { trace: '1' },
      json: { model: 'gpt-4.1', messages: [], max_tokens: 16 },
      form: undefined,
    });
    expect(recorded?.headers).toMatchObject({ authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'x-custom': 'A' });
    expect(recorded?.body.toString()).toBe('{"model":"gpt-4.1","messages":[],"max_tokens":16}');

    const broken = await call(s, 'POST', 'chat/completions', { body: '{"model":' });
    expect(broken.status).toBe(400);
    expect(s.requests[1]?.json).toBeUndefined();
    expect(s.requests[1]?.body.toString()).toBe('{"model":');
    const held = s.requests;
    s.reset();
    expect(held).toBe(s.requests);
    expect(held).toHaveLength(0);
  });
});

/** The `openai` npm client, when installed (a later issue adds it); its absence skips these checks. */
interface OpenAiClient {
  chat: { completions: { create(body: Record<string, unknown>): Promise<{ choices: { message: { content: string | null } }[] }> } };
  models: { list(): AsyncIterable<{ id: string }> };
}
type OpenAiConstructor = new (options: { apiKey: string; baseURL: string; maxRetries: number }) => OpenAiClient;
const openAiPackage = 'openai';
const OpenAI = ((await import(openAiPackage).catch(() => undefined)) as { default: OpenAiConstructor } | undefined)?.default;

describe.skipIf(OpenAI === undefined)('the openai npm client against the stand-in', () => {
  it('lists models, completes a chat, and reads a 401 and a 429 as the API errors they are', async () => {
    const s = await standin({ dialect: 'openai', apiKey: KEY, reply: 'from the stand-in' });
    const client = new OpenAI!({ apiKey: KEY, baseURL: s.baseUrl, maxRetries: 0 });
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toContain('gpt-4.1');
    const completion = await client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0]?.message.content).toBe('from the stand-in');

    s.fail(PROVIDER_ERRORS.openai.insufficientQuota());
    await expect(client.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({
      status: 429,
      code: 'insufficient_quota',
      type: 'insufficient_quota',
    });
    const wrong = new OpenAI!({ apiKey: 'sk-wrong', baseURL: s.baseUrl, maxRetries: 0 });
    await expect(wrong.chat.completions.create({ model: 'gpt-4.1', messages: [] })).rejects.toMatchObject({
      status: 401,
      code: 'invalid_api_key',
    });
    expect(s.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(3);
  });
});
