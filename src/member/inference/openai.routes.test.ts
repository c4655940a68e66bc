import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { InferenceCaller, InferenceEngine, InferenceRequest, StreamSettlement, TextDelta } from '../../admin/index.ts';
import { AppError } from '../../core/errors.ts';
import { createHttpApp } from '../../core/http/server.ts';
import type { AuthResult } from '../../core/identity/identity.model.ts';
import { createLogger } from '../../core/logger.ts';
import { registerOpenAiRoutes } from './openai.routes.ts';

/**
 * The routes with the official OpenAI client on a real port, in front of a scripted engine: what the client sends
 * and reads, independent of the execution path (test/member/openai-client.test.ts runs the real one).
 */

const MEMBER = 'mem_token';
const PLATFORM = 'plt_token';

function principal(plane: 'member' | 'platform'): AuthResult {
  return {
    ok: true,
    principal: {
      accountId: 'acc_1',
      humanId: 'hum_1',
      email: 'a@example.test',
      role: 'member',
      plane,
      capabilities: new Set(),
      credentialId: `cred_${plane}`,
      via: 'bearer',
    },
  };
}

const auth = {
  async authenticate(input: { authorization?: string | undefined }): Promise<AuthResult> {
    if (input.authorization === `Bearer ${MEMBER}`) return principal('member');
    if (input.authorization === `Bearer ${PLATFORM}`) return principal('platform');
    return { ok: false, reason: 'unknown' };
  },
};

const MODELS = {
  models: [
    { ref: 'openai/gpt-test', provider_id: 'openai' },
    { ref: 'anthropic/claude-test', provider_id: 'anthropic' },
  ],
};
const plane = {
  async memberModelsJson(_accountId: string, filter: { available?: boolean }) {
    if (filter.available !== true) throw new Error('the OpenAI list shows available models only');
    const json = Buffer.from(JSON.stringify(MODELS));
    return { json, gzip: () => json };
  },
};

const meta = (request: InferenceRequest) => ({
  request_id: 'req_42',
  model: request.models[0] ?? '',
  model_identity: 'identity-1',
  workload: request.input.workload,
});

/** What the scripted engine saw, and what it will answer next. */
const seen: { caller: InferenceCaller; request: InferenceRequest; signal: AbortSignal }[] = [];
let streamScript: TextDelta[] = [];
let streamFailure: AppError | undefined;
let settled: StreamSettlement = { finish_reason: null, usage: null, cost: null };

const engine: InferenceEngine = {
  async infer(caller, request, signal) {
    seen.push({ caller, request, signal });
    if (request.models[0] === 'openai/none') throw new AppError('not_found', 'no model of the Account is named openai/none');
    if (request.models[0] === 'openai/busy')
      throw new AppError('rate_limited', 'the provider asks to wait', { headers: { 'retry-after': '3' } });
    if (request.input.workload === 'embeddings') {
      return {
        meta: meta(request),
        output: { embeddings: request.input.input.map((_, i) => [i + 0.5, -2]), usage: null },
        usage: { input_tokens: 4, output_tokens: 0, cached_input_tokens: null },
        cost: null,
      };
    }
    if (request.input.stream) {
      const script = streamScript;
      const failure = streamFailure;
      return {
        meta: meta(request),
        deltas: (async function* () {
          for (const delta of script) yield delta;
          if (failure) throw failure;
        })(),
        settled: Promise.resolve(settled),
      };
    }
    const last = request.input.messages.at(-1);
    const calls =
      request.input.tools && last?.role !== 'tool'
        ? [{ id: 'call_1', name: request.input.tools[0]?.name ?? '', arguments: '{"city":"Paris"}' }]
        : [];
    return {
      meta: meta(request),
      output: {
        text: calls.length > 0 ? '' : `echo: ${typeof last?.content === 'string' ? last.content : 'parts'}`,
        tool_calls: calls,
        finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
        usage: null,
      },
      usage: { input_tokens: 10, output_tokens: 5, cached_input_tokens: 2 },
      cost: { amount: '0.00042', unit: 'USD' },
    };
  },
};

describe('the OpenAI-compatible routes with the official client', () => {
  let app: FastifyInstance;
  let url: string;
  let client: OpenAI;

  beforeAll(async () => {
    app = createHttpApp({ log: createLogger({ level: 'silent' }) });
    // The member route the OpenAI list shares its path with: other clients keep this shape.
    app.get('/agent_api/v1/models', async () => ({ models: MODELS.models }));
    registerOpenAiRoutes(app, { engine, plane, auth, now: () => 1_700_000_000_000 });
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/agent_api/v1`;
    client = new OpenAI({ apiKey: MEMBER, baseURL: url, maxRetries: 0 });
  });
  afterAll(async () => {
    // After the disconnect test the client's pool holds a second socket that never carried a request, which a
    // graceful close would wait for (the server side of the aborted stream is closed; that test checks it).
    app.server.closeAllConnections();
    await app.close();
  });
  beforeEach(() => {
    seen.length = 0;
    streamScript = [];
    streamFailure = undefined;
    settled = { finish_reason: null, usage: null, cost: null };
  });

  it('answers a chat completion, passing the caller and the translated request to the engine', async () => {
    const completion = await client.chat.completions.create({
      model: 'openai/gpt-test',
      messages: [{ role: 'user', content: 'hello' }],
      temperature: 0.3,
      max_completion_tokens: 64,
      user: 'end-user',
    });
    expect(completion.choices[0]?.message.content).toBe('echo: hello');
    expect(completion.model).toBe('openai/gpt-test');
    expect(completion.created).toBe(1_700_000_000);
    expect(completion.usage).toEqual({
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
      prompt_tokens_details: { cached_tokens: 2 },
    });
    expect((completion as unknown as { platform: unknown }).platform).toEqual({
      request_id: 'req_42',
      model_identity: 'identity-1',
      cost: { amount: '0.00042', unit: 'USD' },
    });
    expect(seen[0]?.caller).toEqual({ accountId: 'acc_1', humanId: 'hum_1', credentialId: 'cred_member' });
    expect(seen[0]?.request.input).toMatchObject({ parameters: { temperature: 0.3 }, max_output_tokens: 64, stream: false });
    expect(seen[0]?.signal.aborted).toBe(false);
  });

  it('streams with include_usage, as the client accumulates it', async () => {
    streamScript = [
      { type: 'text', text: 'Bon' },
      { type: 'text', text: 'jour' },
      { type: 'finish', finish_reason: 'stop' },
    ];
    settled = { finish_reason: 'stop', usage: { input_tokens: 7, output_tokens: 2, cached_input_tokens: null }, cost: null };
    const stream = await client.chat.completions.create({
      model: 'openai/gpt-test',
      messages: [{ role: 'user', content: 'salut' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const finishes: (string | null)[] = [];
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]) finishes.push(chunk.choices[0].finish_reason);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Bonjour');
    expect(finishes.at(-1)).toBe('stop');
    expect(usage).toEqual({ prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 });
  });

  it('streams tool calls the client’s stream helper assembles', async () => {
    streamScript = [
      { type: 'tool_call', index: 0, id: 'call_9', name: 'weather', arguments: '' },
      { type: 'tool_call', index: 0, arguments: '{"city":' },
      { type: 'tool_call', index: 0, arguments: '"Paris"}' },
      { type: 'finish', finish_reason: 'tool_calls' },
    ];
    const runner = client.chat.completions.stream({
      model: 'openai/gpt-test',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [
        { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
      ],
    });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
    expect(final.choices[0]?.message.tool_calls).toEqual([
      { id: 'call_9', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
    ]);
  });

  it('raises a failure in mid-stream as the client’s APIError', async () => {
    streamScript = [{ type: 'text', text: 'partial' }];
    streamFailure = new AppError('provider_error', 'the provider failed');
    const stream = await client.chat.completions.create({
      model: 'openai/gpt-test',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    const read = async () => {
      for await (const chunk of stream) void chunk;
    };
    await expect(read()).rejects.toMatchObject({ error: { code: 'provider_error', type: 'api_error' } });
  });

  it('does a tool call round trip', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'weather', parameters: { type: 'object', properties: {} } } }];
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'weather in Paris?' }];
    const first = await client.chat.completions.create({ model: 'openai/gpt-test', messages, tools, tool_choice: 'auto' });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(call).toEqual({ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } });
    expect(first.choices[0]?.message.content).toBeNull();
    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: 'call_1', content: 'sunny' });
    const second = await client.chat.completions.create({ model: 'openai/gpt-test', messages, tools });
    expect(second.choices[0]?.message.content).toBe('echo: sunny');
    expect(seen[1]?.request.input).toMatchObject({
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' }] },
        { role: 'tool', content: 'sunny', tool_call_id: 'call_1', name: 'weather' },
      ],
    });
  });

  it('answers embeddings in float and in the base64 the client asks for by default', async () => {
    // The client sends encoding_format base64 unless told otherwise, and decodes it.
    const decoded = await client.embeddings.create({ model: 'openai/emb', input: ['a', 'b'] });
    expect(decoded.data.map((d) => d.embedding)).toEqual([
      [0.5, -2],
      [1.5, -2],
    ]);
    expect(decoded.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    const floats = await client.embeddings.create({ model: 'openai/emb', input: 'a', encoding_format: 'float' });
    expect(floats.data[0]?.embedding).toEqual([0.5, -2]);
  });

  it('lists models in OpenAI’s shape for the client or ?format=openai, and the member shape otherwise', async () => {
    const listed = [];
    for await (const model of client.models.list()) listed.push(model);
    expect(listed).toEqual([
      { id: 'openai/gpt-test', object: 'model', created: 0, owned_by: 'openai' },
      { id: 'anthropic/claude-test', object: 'model', created: 0, owned_by: 'anthropic' },
    ]);
    const headers = { authorization: `Bearer ${MEMBER}` };
    const byQuery = (await (await fetch(`${url}/models?format=openai`, { headers })).json()) as { object: string };
    expect(byQuery.object).toBe('list');
    const plain = (await (await fetch(`${url}/models`, { headers })).json()) as { models: unknown[] };
    expect(plain.models).toHaveLength(2);
    const other = (await (await fetch(`${url}/models/x?format=openai`, { headers })).json()) as { error: { code: string } };
    expect(other.error.code).toBe('not_found');
  });

  it('answers errors as the client’s typed errors: 404, 429 with retry-after, 400 naming the field, 401', async () => {
    const create = (model: string, extra: Record<string, unknown> = {}) =>
      client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }], ...extra });
    await expect(create('openai/none')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(create('openai/none')).rejects.toMatchObject({ status: 404, code: 'not_found', type: 'invalid_request_error' });
    const busy = await create('openai/busy').catch((error: unknown) => error);
    expect(busy).toBeInstanceOf(OpenAI.RateLimitError);
    expect((busy as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('3');
    await expect(create('openai/gpt-test', { n: 3 })).rejects.toMatchObject({ status: 400, param: 'n', code: 'parameter_invalid' });
    for (const apiKey of [PLATFORM, 'nope']) {
      const stranger = new OpenAI({ apiKey, baseURL: url, maxRetries: 0 });
      await expect(stranger.chat.completions.create({ model: 'openai/gpt-test', messages: [] })).rejects.toBeInstanceOf(
        OpenAI.AuthenticationError,
      );
      await expect(stranger.embeddings.create({ model: 'openai/emb', input: 'x' })).rejects.toMatchObject({
        status: 401,
        type: 'authentication_error',
      });
      await expect(stranger.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    }
    expect(seen.filter((s) => s.caller.credentialId !== 'cred_member')).toEqual([]);
  });

  it('answers malformed JSON and wrong content types in OpenAI’s shape', async () => {
    const post = (body: string, type: string) =>
      fetch(`${url}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${MEMBER}`, 'content-type': type }, body });
    const broken = await post('{"model":', 'application/json');
    expect(broken.status).toBe(400);
    expect(await broken.json()).toEqual({
      error: { message: 'request body is not valid JSON', type: 'invalid_request_error', param: null, code: 'parameter_invalid' },
    });
    const text = await post('hi', 'text/plain');
    expect(text.status).toBe(415);
    expect(((await text.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
  });

  it('aborts the engine’s signal when the client goes away mid-stream', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const aborted = new Promise<void>((resolve) => {
      const original = engine.infer.bind(engine);
      engine.infer = async (caller, request, signal) => {
        signal.addEventListener('abort', () => {
          resolve();
          release();
        });
        const answer = await original(caller, request, signal);
        if (!('deltas' in answer)) return answer;
        return {
          ...answer,
          deltas: (async function* () {
            yield { type: 'text', text: 'first' };
            await gate;
          })(),
        };
      };
    });
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'openai/gpt-test', messages: [{ role: 'user', content: 'x' }], stream: true },
      { signal: controller.signal },
    );
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content === 'first') break;
    }
    controller.abort();
    await aborted;
    expect(seen.at(-1)?.signal.aborted).toBe(true);
  });
});
