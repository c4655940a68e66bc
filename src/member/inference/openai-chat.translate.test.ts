import { describe, expect, it } from 'vitest';
import type { CompletedTextGeneration, InferenceMeta, TextDelta } from '../../admin/index.ts';
import { AppError } from '../../core/errors.ts';
import { chatCompletionObject, createChunkTranslator, parseChatRequest, type ChatCompletionChunk } from './openai-chat.translate.ts';
import { openAiErrorFromAppError } from './openai-errors.ts';

const PNG = 'iVBORw0KGgo=';

/** The OpenAI-shaped error a body is refused with. */
function refusal(body: unknown) {
  try {
    parseChatRequest(body);
  } catch (error) {
    if (error instanceof AppError) return openAiErrorFromAppError(error);
    throw error;
  }
  throw new Error('the body was accepted');
}

const user = (content: unknown) => ({ model: 'openai/gpt-test', messages: [{ role: 'user', content }] });

describe('parseChatRequest', () => {
  it('translates every role, text and image parts, and tool calls both ways of a round trip', () => {
    const parsed = parseChatRequest({
      model: 'openai/gpt-test',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'developer', content: [{ type: 'text', text: 'answer in French' }], name: 'dev' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: `data:image/PNG;base64,${PNG}`, detail: 'low' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '{"found":true}' }] },
        { role: 'assistant', content: 'It is a logo.' },
        { role: 'tool', tool_call_id: 'call_unknown', content: 'orphan' },
      ],
    });
    expect(parsed.stream).toBe(false);
    expect(parsed.includeUsage).toBe(false);
    expect(parsed.request).toEqual({
      models: ['openai/gpt-test'],
      input: {
        workload: 'text_generation',
        stream: false,
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'developer', content: [{ type: 'text', text: 'answer in French' }] },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image', media_type: 'image/png', data: PNG },
            ],
          },
          { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' }] },
          // The tool's name comes from the call it answers (Gemini matches responses by name).
          { role: 'tool', content: [{ type: 'text', text: '{"found":true}' }], tool_call_id: 'call_1', name: 'lookup' },
          { role: 'assistant', content: 'It is a logo.' },
          { role: 'tool', content: 'orphan', tool_call_id: 'call_unknown' },
        ],
      },
    });
  });

  it('translates tools and every tool_choice form', () => {
    const tools = [
      { type: 'function', function: { name: 'lookup', description: 'find', parameters: { type: 'object', properties: { q: {} } } } },
      { type: 'function', function: { name: 'now', strict: true } },
    ];
    const choices = [
      ['auto', 'auto'],
      ['none', 'none'],
      ['required', 'required'],
      [{ type: 'function', function: { name: 'now' } }, { name: 'now' }],
    ] as const;
    for (const [given, expected] of choices) {
      const { request } = parseChatRequest({ ...user('hi'), tools, tool_choice: given });
      expect(request.input).toMatchObject({
        tools: [
          { name: 'lookup', description: 'find', parameters: { type: 'object', properties: { q: {} } } },
          // A function without parameters takes no arguments.
          { name: 'now', parameters: { type: 'object', properties: {} } },
        ],
        tool_choice: expected,
      });
    }
  });

  it('maps sampling fields to platform parameters and the token limit to max_output_tokens', () => {
    const { request } = parseChatRequest({
      ...user('hi'),
      temperature: 0.2,
      top_p: 0.9,
      presence_penalty: 0.1,
      frequency_penalty: -0.1,
      seed: 7,
      stop: ['END'],
      verbosity: 'low',
      max_tokens: 100,
      n: 1,
      user: 'end-user-1',
      store: false,
      metadata: { team: 'x' },
      parallel_tool_calls: true,
      response_format: { type: 'text' },
      logprobs: false,
      modalities: ['text'],
    });
    expect(request.input).toEqual({
      workload: 'text_generation',
      stream: false,
      messages: [{ role: 'user', content: 'hi' }],
      parameters: {
        temperature: 0.2,
        top_p: 0.9,
        presence_penalty: 0.1,
        frequency_penalty: -0.1,
        seed: 7,
        stop: ['END'],
        verbosity: 'low',
      },
      max_output_tokens: 100,
    });
    // max_completion_tokens wins over the deprecated max_tokens; null means absent, as OpenAI's clients send it.
    const both = parseChatRequest({ ...user('hi'), max_tokens: 100, max_completion_tokens: 50, temperature: null });
    expect(both.request.input).toEqual({
      workload: 'text_generation',
      stream: false,
      messages: [{ role: 'user', content: 'hi' }],
      max_output_tokens: 50,
    });
  });

  it('reads stream and stream_options.include_usage', () => {
    expect(parseChatRequest({ ...user('hi'), stream: true })).toMatchObject({
      stream: true,
      includeUsage: false,
      request: { input: { stream: true } },
    });
    expect(parseChatRequest({ ...user('hi'), stream: true, stream_options: { include_usage: true } })).toMatchObject({
      stream: true,
      includeUsage: true,
    });
    // Usage chunks exist only in streams.
    expect(parseChatRequest({ ...user('hi'), stream_options: { include_usage: true } }).includeUsage).toBe(false);
  });

  it('refuses unsupported fields and values with 400 in OpenAI’s shape, naming the field', () => {
    const cases: [unknown, string][] = [
      [{ ...user('hi'), n: 2 }, 'n'],
      [{ ...user('hi'), logit_bias: { 1: 2 } }, 'logit_bias'],
      [{ ...user('hi'), audio: { voice: 'x' } }, 'audio'],
      [{ ...user('hi'), functions: [] }, 'functions'],
      [{ ...user('hi'), reasoning_effort: 3 }, 'reasoning_effort'],
      [{ ...user('hi'), response_format: { type: 'json_object' } }, 'response_format.type'],
      [{ ...user('hi'), parallel_tool_calls: false }, 'parallel_tool_calls'],
      [{ ...user('hi'), logprobs: true }, 'logprobs'],
      [{ ...user('hi'), max_tokens: 0 }, 'max_tokens'],
      [{ ...user('hi'), temperature: 'hot' }, 'temperature'],
      [{ model: 'openai/gpt-test', messages: [] }, 'messages'],
      [{ messages: [{ role: 'user', content: 'hi' }] }, 'model'],
      [{ model: 'openai/gpt-test', messages: [{ role: 'function', content: 'x', name: 'f' }] }, 'messages.0.role'],
      [{ model: 'openai/gpt-test', messages: [{ role: 'tool', content: 'x' }] }, 'messages.0.tool_call_id'],
      [user([{ type: 'input_audio', input_audio: { data: 'AA', format: 'wav' } }]), 'messages.0.content'],
      [user([{ type: 'image_url', image_url: { url: 'https://example.test/cat.png' } }]), 'messages.0.content.0.image_url.url'],
      [user([{ type: 'image_url', image_url: { url: 'data:text/plain;base64,AA==' } }]), 'messages.0.content.0.image_url.url'],
      [
        {
          model: 'm',
          messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }],
        },
        'messages.0.content',
      ],
      [{ ...user('hi'), tools: [{ type: 'custom', custom: { name: 'x' } }] }, 'tools.0.type'],
      [{ ...user('hi'), tool_choice: { type: 'allowed_tools' } }, 'tool_choice'],
    ];
    for (const [body, param] of cases) {
      const answer = refusal(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error.type).toBe('invalid_request_error');
      expect(answer.body.error.code).toBe('parameter_invalid');
      expect(answer.body.error.param, JSON.stringify(body)).toBe(param);
    }
    expect(refusal(user([{ type: 'image_url', image_url: { url: 'http://example.test/a.png' } }])).body.error.message).toContain(
      'does not fetch',
    );
    expect(refusal([]).body.error.message).toBe('body: expected a JSON object');
  });

  it('never repeats a client-chosen field name that could be a secret', () => {
    const answer = refusal({ ...user('hi'), 'sk-live-0123456789': true });
    expect(JSON.stringify(answer)).not.toContain('sk-live');
    expect(answer.body.error.param).toBeNull();
  });
});

const meta: InferenceMeta = { request_id: 'req_1', model: 'openai/gpt-test', model_identity: 'gpt-test-2025', workload: 'text_generation' };

describe('chatCompletionObject', () => {
  const answer = (
    output: Partial<CompletedTextGeneration['output']>,
    rest: Partial<CompletedTextGeneration> = {},
  ): CompletedTextGeneration => ({
    meta,
    output: { text: '', tool_calls: [], finish_reason: 'stop', usage: null, ...output },
    usage: { input_tokens: 12, output_tokens: 3, cached_input_tokens: 4 },
    cost: { amount: '0.0012', unit: 'USD' },
    ...rest,
  });

  it('answers a text completion with usage, cached tokens and the platform extras', () => {
    expect(chatCompletionObject(answer({ text: 'Bonjour' }), 1_700_000_000)).toEqual({
      id: 'chatcmpl-req_1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'openai/gpt-test',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Bonjour', refusal: null }, finish_reason: 'stop', logprobs: null }],
      usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 } },
      platform: { request_id: 'req_1', model_identity: 'gpt-test-2025', cost: { amount: '0.0012', unit: 'USD' } },
    });
  });

  it('answers tool calls with null content, and maps finish reasons', () => {
    const calls = answer({ tool_calls: [{ id: 'call_1', name: 'lookup', arguments: '{}' }], finish_reason: 'tool_calls' });
    expect(chatCompletionObject(calls, 0).choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
      },
      finish_reason: 'tool_calls',
      logprobs: null,
    });
    for (const [reason, expected] of [
      ['length', 'length'],
      ['content_filter', 'content_filter'],
      ['other', 'stop'],
    ] as const) {
      expect(chatCompletionObject(answer({ text: 'x', finish_reason: reason }), 0).choices[0].finish_reason).toBe(expected);
    }
  });

  it('omits usage when the provider reported none, and cached tokens when it did not say', () => {
    expect(chatCompletionObject(answer({ text: 'x' }, { usage: null, cost: null }), 0)).not.toHaveProperty('usage');
    const noCache = answer({ text: 'x', usage: { input_tokens: 1, output_tokens: 2, cached_input_tokens: null } }, { usage: null });
    expect(chatCompletionObject(noCache, 0).usage).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
  });
});

describe('createChunkTranslator', () => {
  const run = (deltas: TextDelta[], includeUsage: boolean, settlement = { finish_reason: null, usage: null, cost: null }) => {
    const translator = createChunkTranslator({ meta, createdSeconds: 5, includeUsage });
    const chunks: ChatCompletionChunk[] = [translator.start()];
    for (const delta of deltas) {
      const chunk = translator.delta(delta);
      if (chunk) chunks.push(chunk);
    }
    return [...chunks, ...translator.end(settlement)];
  };

  it('streams a text answer: role chunk, content deltas, the finish chunk carrying the platform extras', () => {
    const chunks = run(
      [
        { type: 'text', text: 'Bon' },
        { type: 'text', text: '' },
        { type: 'text', text: 'jour' },
        { type: 'finish', finish_reason: 'stop' },
      ],
      false,
      // The settlement, read once the call is recorded, carries the cost.
      { finish_reason: null, usage: null, cost: { amount: '0.1', unit: 'EUR' } } as never,
    );
    expect(chunks.map((c) => [c.choices[0]?.delta, c.choices[0]?.finish_reason])).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{ content: 'Bon' }, null],
      [{ content: 'jour' }, null],
      [{}, 'stop'],
    ]);
    for (const c of chunks) {
      expect(c).toMatchObject({ id: 'chatcmpl-req_1', object: 'chat.completion.chunk', created: 5, model: 'openai/gpt-test' });
      expect(c).not.toHaveProperty('usage');
    }
    expect(chunks.at(-1)?.platform).toEqual({ request_id: 'req_1', model_identity: 'gpt-test-2025', cost: { amount: '0.1', unit: 'EUR' } });
  });

  it('streams tool calls with index, id, type and name first, then argument fragments', () => {
    const chunks = run(
      [
        { type: 'tool_call', index: 0, id: 'call_a', name: 'lookup', arguments: '' },
        { type: 'tool_call', index: 0, arguments: '{"q":' },
        { type: 'tool_call', index: 0, arguments: '"x"}' },
        { type: 'tool_call', index: 1, id: 'call_b', name: 'now', arguments: '{}' },
        { type: 'finish', finish_reason: 'tool_calls' },
      ],
      false,
    );
    expect(chunks.slice(1).map((c) => [c.choices[0]?.delta, c.choices[0]?.finish_reason])).toEqual([
      [{ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] }, null],
      [{ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'now', arguments: '{}' } }] }, null],
      [{}, 'tool_calls'],
    ]);
  });

  it('with include_usage: usage null on every chunk, then a usage chunk with empty choices; the settlement wins', () => {
    const settled = {
      finish_reason: 'length' as const,
      usage: { input_tokens: 9, output_tokens: 2, cached_input_tokens: null },
      cost: null,
    };
    const chunks = run(
      [
        { type: 'text', text: 'Hi' },
        { type: 'usage', usage: { input_tokens: 1, output_tokens: 1, cached_input_tokens: null } },
        { type: 'finish', finish_reason: 'stop' },
      ],
      true,
      settled as never,
    );
    expect(chunks).toHaveLength(4);
    for (const c of chunks.slice(0, 3)) expect(c.usage).toBeNull();
    expect(chunks[2]?.choices[0]?.finish_reason).toBe('length');
    expect(chunks[3]).toEqual({
      id: 'chatcmpl-req_1',
      object: 'chat.completion.chunk',
      created: 5,
      model: 'openai/gpt-test',
      choices: [],
      usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
      platform: { request_id: 'req_1', model_identity: 'gpt-test-2025', cost: null },
    });
  });

  it('falls back to the streamed usage and finish reason, and to stop when neither says', () => {
    const streamed = run(
      [
        { type: 'usage', usage: { input_tokens: 3, output_tokens: 4, cached_input_tokens: 1 } },
        { type: 'finish', finish_reason: 'content_filter' },
      ],
      true,
    );
    expect(streamed.at(-2)?.choices[0]?.finish_reason).toBe('content_filter');
    expect(streamed.at(-1)?.usage).toEqual({
      prompt_tokens: 3,
      completion_tokens: 4,
      total_tokens: 7,
      prompt_tokens_details: { cached_tokens: 1 },
    });
    const silent = run([], true);
    expect(silent.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    expect(silent.at(-1)?.usage).toBeNull();
  });
});
