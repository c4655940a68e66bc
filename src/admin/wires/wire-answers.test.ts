import { afterEach, describe, expect, it } from 'vitest';
import { startStandin, type Standin, type StandinDialect } from '../../../test/support/upstream/index.ts';
import { DEFAULT_CATALOG_DIR, loadCatalog } from '../catalog/catalog.loader.ts';
import type { ApiFormat } from '../catalog/wires.ts';
import { anthropicMessagesWire } from './anthropic-messages.wire.ts';
import { geminiEmbeddingsWire, geminiGenerateContentWire } from './gemini-generate-content.wire.ts';
import { openAiChatWire } from './openai-chat.wire.ts';
import { openAiEmbeddingsWire } from './openai-embeddings.wire.ts';
import { openAiImagesWire } from './openai-images.wire.ts';
import { openAiSpeechWire } from './openai-speech.wire.ts';
import { openAiTranscriptionWire } from './openai-transcription.wire.ts';
import { answerOf, bytes, collapse, send } from './wire-answers.testkit.ts';
import type { EndpointAdapter, TextGenerationInput, WorkloadOutputs } from './wire.types.ts';
import { ENDPOINT_ADAPTERS, endpointFor } from './wires.registry.ts';

const KEY = 'sk-answers-key';
const credential = { kind: 'api_key' as const, key: KEY };
const DIALECT_OF: Record<ApiFormat, StandinDialect> = {
  openai_chat: 'openai',
  anthropic_messages: 'anthropic',
  gemini_generate_content: 'gemini',
};

const open: Standin[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const jsonAnswer = (body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) => ({
  body: bytes(typeof body === 'string' ? body : JSON.stringify(body)),
  headers,
});

/** A chat completion as OpenAI documents it, with the parts a test overrides. */
function chatCompletion(message: Record<string, unknown>, finish: unknown = 'stop', usage: unknown = undefined) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_760_000_000,
    model: 'gpt-4.1',
    choices: [{ index: 0, message: { role: 'assistant', refusal: null, ...message }, logprobs: null, finish_reason: finish }],
    ...(usage !== undefined ? { usage } : {}),
  };
}

function anthropicMessage(content: unknown[], stopReason: unknown = 'end_turn', usage: unknown = { input_tokens: 5, output_tokens: 1 }) {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage,
  };
}

function geminiResponse(parts: unknown[], finishReason: unknown = 'STOP', usageMetadata: unknown = undefined) {
  return {
    candidates: [{ content: { parts, role: 'model' }, finishReason, index: 0 }],
    ...(usageMetadata !== undefined ? { usageMetadata } : {}),
    modelVersion: 'gemini-2.5-flash',
    responseId: 'r-1',
  };
}

describe('wire answers: every shipped model, sent to its stand-in', () => {
  it("parses every shipped OpenAI, Anthropic and Gemini model's probe answer, and its streamed answer to the same result", async () => {
    const state = loadCatalog(DEFAULT_CATALOG_DIR);
    if (!state.ok) throw new Error(state.reason);
    const stands = new Map<StandinDialect, Standin>();
    for (const dialect of ['openai', 'anthropic', 'gemini'] as const) {
      const s = await startStandin({ dialect, apiKey: KEY, reply: 'pong 👋' });
      open.push(s);
      stands.set(dialect, s);
    }
    const parsed = new Map<string, number>();
    for (const providerId of ['openai', 'anthropic', 'google']) {
      const provider = state.catalog.providers.get(providerId);
      if (!provider) throw new Error(providerId);
      const format = provider.declaration.api_format;
      const s = stands.get(DIALECT_OF[format]);
      if (!s) throw new Error(format);
      for (const model of [...state.catalog.composed.values()].filter((m) => m.provider_id === providerId)) {
        const adapter = endpointFor(format, model.workload);
        if (!adapter) throw new Error(model.ref);
        const probe = adapter.probe(model);
        if (!probe.ok) throw new Error(`${model.ref}: ${probe.reason}`);
        const response = await send(adapter.build({ baseUrl: s.baseUrl, model, credential }, probe.input));
        expect(response.status, model.ref).toBe(200);
        const output = adapter.parse(await answerOf(response));
        expectProbeOutput(model.workload, output, model.ref);
        parsed.set(model.workload, (parsed.get(model.workload) ?? 0) + 1);
        if (model.workload !== 'text_generation' || !model.capabilities.streaming) continue;
        const text = adapter as EndpointAdapter<'text_generation'>;
        const streamed = await send(
          text.build({ baseUrl: s.baseUrl, model, credential }, { ...(probe.input as TextGenerationInput), stream: true }),
        );
        expect(streamed.headers.get('content-type'), model.ref).toBe('text/event-stream');
        const decoder = text.streamDecoder?.();
        if (!decoder) throw new Error(`${model.ref}: no stream decoder`);
        const deltas = [];
        for await (const chunk of streamed.body as AsyncIterable<Uint8Array>) deltas.push(...decoder.push(chunk));
        deltas.push(...decoder.end());
        const { finishes, usages, ...sum } = collapse(deltas);
        expect([finishes, usages], model.ref).toEqual([1, 1]);
        // Anthropic's documented message_start usage names no cache counts where the non-streamed answer says 0.
        const whole = output as WorkloadOutputs['text_generation'];
        const usage = format === 'anthropic_messages' && whole.usage ? { ...whole.usage, cached_input_tokens: null } : whole.usage;
        expect(sum, model.ref).toEqual({ ...whole, usage });
      }
    }
    expect(parsed.get('text_generation')).toBeGreaterThanOrEqual(9);
    expect([...parsed.keys()].sort()).toEqual(['embeddings', 'image_generation', 'speech', 'text_generation', 'transcription']);
  });
});

function expectProbeOutput(workload: string, output: unknown, ref: string): void {
  if (workload === 'text_generation') {
    const text = output as WorkloadOutputs['text_generation'];
    expect(text, ref).toMatchObject({ text: 'pong 👋', tool_calls: [], finish_reason: 'stop' });
    expect(text.usage?.input_tokens, ref).toBeGreaterThan(0);
    // tokenEstimate('pong 👋') in the stand-ins: ceil(7 / 4).
    expect(text.usage?.output_tokens, ref).toBe(2);
  } else if (workload === 'embeddings') {
    const { embeddings } = output as WorkloadOutputs['embeddings'];
    expect(embeddings, ref).toHaveLength(1);
    // The stand-ins answer 8 values unless asked; Gemini's declared default output_dimensionality (3072) is sent.
    expect(embeddings[0], ref).toHaveLength(ref.startsWith('google/') ? 3072 : 8);
  } else if (workload === 'image_generation') {
    const { images } = output as WorkloadOutputs['image_generation'];
    expect(images.map((i) => i.media_type)).toEqual(['image/png']);
    expect(
      Buffer.from(images[0]?.data ?? '', 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
  } else if (workload === 'speech') {
    const speech = output as WorkloadOutputs['speech'];
    expect(speech.media_type).toBe('audio/wav');
    expect(Buffer.from(speech.audio).subarray(0, 4).toString()).toBe('RIFF');
  } else {
    // Whisper bills by duration (`usage.type: duration`), which is no token count.
    expect(output, ref).toEqual({ text: 'pong 👋', usage: null });
  }
}

describe('wire answers: text generation', () => {
  it('openai_chat reads text, tool calls, refusals and usage with cached tokens', () => {
    const usage = { prompt_tokens: 1200, completion_tokens: 80, total_tokens: 1280, prompt_tokens_details: { cached_tokens: 1024 } };
    expect(openAiChatWire.parse(jsonAnswer(chatCompletion({ content: 'Hello' }, 'stop', usage)))).toEqual({
      text: 'Hello',
      tool_calls: [],
      finish_reason: 'stop',
      usage: { input_tokens: 1200, output_tokens: 80, cached_input_tokens: 1024 },
    });
    const calls = chatCompletion(
      {
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
          { id: 'call_b', type: 'function', function: { name: 'time', arguments: '{}' } },
        ],
      },
      'tool_calls',
      { prompt_tokens: 10, completion_tokens: 5 },
    );
    expect(openAiChatWire.parse(jsonAnswer(calls))).toEqual({
      text: '',
      tool_calls: [
        { id: 'call_a', name: 'weather', arguments: '{"city":"Oslo"}' },
        { id: 'call_b', name: 'time', arguments: '{}' },
      ],
      finish_reason: 'tool_calls',
      usage: { input_tokens: 10, output_tokens: 5, cached_input_tokens: null },
    });
    // The deprecated single function call, and arguments sent as an object by a compatible server.
    expect(
      openAiChatWire.parse(
        jsonAnswer(chatCompletion({ content: null, function_call: { name: 'f', arguments: { a: 1 } } }, 'function_call')),
      ),
    ).toMatchObject({ tool_calls: [{ id: 'call_0', name: 'f', arguments: '{"a":1}' }], finish_reason: 'tool_calls', usage: null });
    expect(openAiChatWire.parse(jsonAnswer(chatCompletion({ content: null, refusal: 'I cannot help with that.' }, 'stop')))).toMatchObject({
      text: 'I cannot help with that.',
      finish_reason: 'content_filter',
    });
    // Content as a list of parts (Mistral's reasoning models): the text parts are the answer.
    const parts = [
      { type: 'thinking', thinking: [{ type: 'text', text: 'hmm' }] },
      { type: 'text', text: 'A' },
      { type: 'text', text: 'B' },
    ];
    expect(openAiChatWire.parse(jsonAnswer(chatCompletion({ content: parts }))).text).toBe('AB');
  });

  it('openai_chat maps every finish reason', () => {
    const table: [unknown, string][] = [
      ['stop', 'stop'],
      ['length', 'length'],
      ['tool_calls', 'tool_calls'],
      ['function_call', 'tool_calls'],
      ['content_filter', 'content_filter'],
      ['eos', 'other'],
      [null, 'other'],
    ];
    for (const [given, expected] of table)
      expect(openAiChatWire.parse(jsonAnswer(chatCompletion({ content: 'x' }, given))).finish_reason, String(given)).toBe(expected);
  });

  it('anthropic_messages joins text blocks, turns tool_use blocks into calls and skips thinking', () => {
    const answer = anthropicMessage(
      [
        { type: 'thinking', thinking: 'Let me see.', signature: 'sig' },
        { type: 'text', text: 'Checking ' },
        { type: 'text', text: 'now.' },
        { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo', days: [1, 2] } },
        { type: 'tool_use', id: 'toolu_2', name: 'time', input: {} },
      ],
      'tool_use',
    );
    expect(anthropicMessagesWire.parse(jsonAnswer(answer))).toEqual({
      text: 'Checking now.',
      tool_calls: [
        { id: 'toolu_1', name: 'weather', arguments: '{"city":"Oslo","days":[1,2]}' },
        { id: 'toolu_2', name: 'time', arguments: '{}' },
      ],
      finish_reason: 'tool_calls',
      usage: { input_tokens: 5, output_tokens: 1, cached_input_tokens: null },
    });
  });

  it('anthropic_messages reports the whole input: input_tokens plus cache reads plus cache writes; cached input is the reads', () => {
    const usage = { input_tokens: 472, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 89 };
    expect(anthropicMessagesWire.parse(jsonAnswer(anthropicMessage([{ type: 'text', text: 'x' }], 'end_turn', usage))).usage).toEqual({
      input_tokens: 2572,
      output_tokens: 89,
      cached_input_tokens: 2000,
    });
    const noCache = { input_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 2 };
    expect(anthropicMessagesWire.parse(jsonAnswer(anthropicMessage([], 'end_turn', noCache))).usage).toEqual({
      input_tokens: 9,
      output_tokens: 2,
      cached_input_tokens: 0,
    });
  });

  it('anthropic_messages maps every stop reason', () => {
    const table: [unknown, string][] = [
      ['end_turn', 'stop'],
      ['stop_sequence', 'stop'],
      ['max_tokens', 'length'],
      ['model_context_window_exceeded', 'length'],
      ['tool_use', 'tool_calls'],
      ['refusal', 'content_filter'],
      ['pause_turn', 'other'],
      ['something_new', 'other'],
      [null, 'other'],
    ];
    for (const [given, expected] of table)
      expect(anthropicMessagesWire.parse(jsonAnswer(anthropicMessage([], given))).finish_reason, String(given)).toBe(expected);
  });

  it('gemini_generate_content reads text (not thoughts), function calls with stable ids, and usage with thoughts as output', () => {
    const usage = {
      promptTokenCount: 120,
      candidatesTokenCount: 30,
      thoughtsTokenCount: 200,
      cachedContentTokenCount: 64,
      totalTokenCount: 350,
    };
    const answer = geminiResponse(
      [
        { text: 'Planning…', thought: true },
        { text: 'Let me ' },
        { text: 'check.' },
        { functionCall: { name: 'weather', args: { city: 'Oslo' } } },
        { functionCall: { name: 'time', args: {} } },
        { functionCall: { id: 'given-id', name: 'date' } },
      ],
      'STOP',
      usage,
    );
    expect(geminiGenerateContentWire.parse(jsonAnswer(answer))).toEqual({
      text: 'Let me check.',
      tool_calls: [
        { id: 'call_0', name: 'weather', arguments: '{"city":"Oslo"}' },
        { id: 'call_1', name: 'time', arguments: '{}' },
        { id: 'given-id', name: 'date', arguments: '{}' },
      ],
      finish_reason: 'tool_calls',
      usage: { input_tokens: 120, output_tokens: 230, cached_input_tokens: 64 },
    });
    // A blocked prompt has no candidate: nothing was generated, and the filter said why.
    expect(
      geminiGenerateContentWire.parse(
        jsonAnswer({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 } }),
      ),
    ).toEqual({
      text: '',
      tool_calls: [],
      finish_reason: 'content_filter',
      usage: { input_tokens: 7, output_tokens: 0, cached_input_tokens: null },
    });
  });

  it('gemini_generate_content maps every finish reason', () => {
    const table: [unknown, string][] = [
      ['STOP', 'stop'],
      ['MAX_TOKENS', 'length'],
      ['SAFETY', 'content_filter'],
      ['RECITATION', 'content_filter'],
      ['BLOCKLIST', 'content_filter'],
      ['PROHIBITED_CONTENT', 'content_filter'],
      ['SPII', 'content_filter'],
      ['MALFORMED_FUNCTION_CALL', 'other'],
      ['LANGUAGE', 'other'],
      ['OTHER', 'other'],
      [null, 'other'],
    ];
    for (const [given, expected] of table)
      expect(geminiGenerateContentWire.parse(jsonAnswer(geminiResponse([{ text: 'x' }], given))).finish_reason, String(given)).toBe(
        expected,
      );
  });
});

describe('wire answers: embeddings, images, speech, transcription', () => {
  it('openai embeddings are ordered by index; gemini embeddings keep the request order', () => {
    const answer = {
      object: 'list',
      data: [
        { object: 'embedding', index: 1, embedding: [0.3, 0.4] },
        { object: 'embedding', index: 0, embedding: [0.1, 0.2] },
      ],
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 4, total_tokens: 4 },
    };
    expect(openAiEmbeddingsWire.parse(jsonAnswer(answer))).toEqual({
      embeddings: [
        [0.1, 0.2],
        [0.3, 0.4],
      ],
      usage: { input_tokens: 4, output_tokens: 0, cached_input_tokens: null },
    });
    const twice = {
      data: [
        { index: 0, embedding: [1] },
        { index: 0, embedding: [2] },
      ],
    };
    expect(() => openAiEmbeddingsWire.parse(jsonAnswer(twice))).toThrow(/index/);
    expect(() => openAiEmbeddingsWire.parse(jsonAnswer({ data: [{ index: 0, embedding: 'AAAA' }] }))).toThrow(
      /data\[0\]\.embedding is not a list/,
    );
    expect(geminiEmbeddingsWire.parse(jsonAnswer({ embeddings: [{ values: [1, 2] }, { values: [3, 4] }] }))).toEqual({
      embeddings: [
        [1, 2],
        [3, 4],
      ],
      usage: null,
    });
    expect(() => geminiEmbeddingsWire.parse(jsonAnswer({ embeddings: [{ values: [1, '2'] }] }))).toThrow(/non-number/);
  });

  it('images come as base64 with their media type and token usage; a URL answer is refused', () => {
    const gptImage = {
      created: 1,
      data: [{ b64_json: '/9j/4AAQ' }],
      output_format: 'jpeg',
      usage: { input_tokens: 50, output_tokens: 4160, total_tokens: 4210, input_tokens_details: { text_tokens: 50, image_tokens: 0 } },
    };
    expect(openAiImagesWire.parse(jsonAnswer(gptImage))).toEqual({
      images: [{ data: '/9j/4AAQ', media_type: 'image/jpeg' }],
      usage: { input_tokens: 50, output_tokens: 4160, cached_input_tokens: null },
    });
    expect(openAiImagesWire.parse(jsonAnswer({ created: 1, data: [{ b64_json: 'UklGRg==' }] }))).toEqual({
      images: [{ data: 'UklGRg==', media_type: 'image/webp' }],
      usage: null,
    });
    expect(() => openAiImagesWire.parse(jsonAnswer({ created: 1, data: [{ url: 'https://img.example/1.png' }] }))).toThrow(/URL/);
    expect(() => openAiImagesWire.parse(jsonAnswer({ created: 1, data: [] }))).toThrow(/no image/);
  });

  it('speech is the bytes with their type: declared, or sniffed from a generic one; JSON or an empty body is refused', () => {
    const wav = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVEfmt ')]);
    expect(openAiSpeechWire.parse({ body: wav, headers: { 'Content-Type': 'audio/wav; charset=binary' } })).toEqual({
      audio: wav,
      media_type: 'audio/wav',
    });
    expect(openAiSpeechWire.parse({ body: wav, headers: { 'content-type': 'application/octet-stream' } }).media_type).toBe('audio/wav');
    expect(openAiSpeechWire.parse({ body: Buffer.from('ID3\u0004'), headers: {} }).media_type).toBe('audio/mpeg');
    expect(() => openAiSpeechWire.parse(jsonAnswer({ error: { message: 'no' } }))).toThrow(/not audio/);
    expect(() => openAiSpeechWire.parse({ body: new Uint8Array(), headers: { 'content-type': 'audio/wav' } })).toThrow(/no audio/);
    expect(() => openAiSpeechWire.parse({ body: Buffer.from('hello'), headers: { 'content-type': 'application/octet-stream' } })).toThrow(
      /not audio/,
    );
  });

  it('transcription reads text and token usage; duration usage is no token count', () => {
    const tokens = { text: 'Hello.', usage: { type: 'tokens', input_tokens: 14, output_tokens: 3, total_tokens: 17 } };
    expect(openAiTranscriptionWire.parse(jsonAnswer(tokens))).toEqual({
      text: 'Hello.',
      usage: { input_tokens: 14, output_tokens: 3, cached_input_tokens: null },
    });
    expect(openAiTranscriptionWire.parse(jsonAnswer({ text: 'Hi', usage: { type: 'duration', seconds: 2 } }))).toEqual({
      text: 'Hi',
      usage: null,
    });
    expect(() => openAiTranscriptionWire.parse(jsonAnswer({ task: 'transcribe' }))).toThrow(/text is not a string/);
  });
});

describe('wire answers: bodies of another shape', () => {
  const SECRET = 'user-secret-0xC0FFEE';
  const malformed: [string, { body: Uint8Array; headers: Record<string, string> }][] = [
    ['an HTML page', jsonAnswer(`<html><body>${SECRET}</body></html>`, { 'content-type': 'text/html' })],
    ['cut JSON', jsonAnswer(`{"choices":[{"message":{"content":"${SECRET}"`)],
    ['a JSON list', jsonAnswer([SECRET])],
    ['an empty object', jsonAnswer({ note: SECRET })],
    ['an OpenAI error envelope', jsonAnswer({ error: { message: SECRET, type: 'server_error', code: null } })],
    ['an Anthropic error envelope', jsonAnswer({ type: 'error', error: { type: 'overloaded_error', message: SECRET } })],
    ['a Gemini error envelope', jsonAnswer({ error: { code: 503, message: SECRET, status: 'UNAVAILABLE' } })],
    ['bytes that are not UTF-8', { body: Uint8Array.from([0x7b, 0xff, 0xfe, 0x7d]), headers: {} }],
  ];

  it('every adapter refuses them with an Error that names the problem and never quotes the body', () => {
    let refusals = 0;
    for (const adapter of ENDPOINT_ADAPTERS) {
      for (const [what, answer] of malformed) {
        let thrown: unknown;
        try {
          adapter.parse(answer);
        } catch (error) {
          thrown = error;
        }
        expect(thrown, `${adapter.apiFormat}/${adapter.workload}: ${what}`).toBeInstanceOf(Error);
        expect((thrown as Error).message).not.toContain(SECRET);
        expect((thrown as Error).message.length).toBeGreaterThan(5);
        refusals++;
      }
    }
    expect(refusals).toBe(8 * malformed.length);
    expect(() => openAiChatWire.parse(malformed[0]![1])).toThrow('the answer is not JSON');
    expect(() => openAiChatWire.parse(malformed[4]![1])).toThrow('the upstream reported an error (server_error)');
    expect(() => anthropicMessagesWire.parse(malformed[5]![1])).toThrow('(overloaded_error)');
    expect(() => geminiGenerateContentWire.parse(malformed[6]![1])).toThrow('(UNAVAILABLE)');
    expect(() => openAiChatWire.parse(malformed[3]![1])).toThrow('choices is not a list');
  });

  it('a field of the wrong kind is named', () => {
    expect(() =>
      openAiChatWire.parse(jsonAnswer(chatCompletion({ content: 'x' }, 'stop', { prompt_tokens: -1, completion_tokens: 1 }))),
    ).toThrow('usage.prompt_tokens is not a token count');
    expect(() => openAiChatWire.parse(jsonAnswer(chatCompletion({ content: 'x', tool_calls: [{ id: 'c', function: {} }] })))).toThrow(
      'message.tool_calls[0].function.name is not a string',
    );
    expect(() => anthropicMessagesWire.parse(jsonAnswer(anthropicMessage([{ type: 'tool_use', id: 't', name: 'n', input: [1] }])))).toThrow(
      'content[0].input is not an object',
    );
    expect(() => anthropicMessagesWire.parse(jsonAnswer({ ...anthropicMessage([]), type: 'completion' }))).toThrow('not a message');
    expect(() => geminiGenerateContentWire.parse(jsonAnswer({ candidates: [] }))).toThrow('no candidates');
    expect(() => geminiGenerateContentWire.parse(jsonAnswer(geminiResponse([{ functionCall: { args: {} } }])))).toThrow(
      'functionCall.name is not a string',
    );
  });
});
