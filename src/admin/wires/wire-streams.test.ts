import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { startStandin, type Standin } from '../../../test/support/upstream/index.ts';
import { anthropicMessagesWire } from './anthropic-messages.wire.ts';
import { geminiGenerateContentWire } from './gemini-generate-content.wire.ts';
import { openAiChatWire } from './openai-chat.wire.ts';
import { createSseReader } from './sse-lines.ts';
import { byteByByte, bytes, collapse, composed, decodeAll, send, splitAt, sseBody } from './wire-answers.testkit.ts';
import type { EndpointAdapter, StreamDecoder, TextDelta } from './wire.types.ts';

const open: Standin[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** Text with characters of two, three and four UTF-8 bytes, so byte splits land inside characters. */
const WIDE = 'Grüße aus Tōkyō 東京 👋🏽';

// OpenAI's documented chunk stream: a role chunk, content, two tool calls in fragments, the finish, the usage chunk, [DONE].
const openAiChunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-9',
  object: 'chat.completion.chunk',
  created: 1_760_000_000,
  model: 'gpt-4.1',
  system_fingerprint: 'fp_1',
  choices,
  ...extra,
});
const delta = (d: Record<string, unknown>, finish: string | null = null) => [{ index: 0, delta: d, logprobs: null, finish_reason: finish }];
const OPENAI_STREAM = sseBody([
  { data: openAiChunk(delta({ role: 'assistant', content: '', refusal: null })) },
  { data: openAiChunk(delta({ content: WIDE.slice(0, 6) })) },
  { data: openAiChunk(delta({ content: WIDE.slice(6) })) },
  {
    data: openAiChunk(delta({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }] })),
  },
  { data: openAiChunk(delta({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] })) },
  { data: openAiChunk(delta({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Oslo"}' } }] })) },
  { data: openAiChunk(delta({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'time', arguments: '{}' } }] })) },
  { data: openAiChunk(delta({}, 'tool_calls')) },
  {
    data: openAiChunk([], {
      usage: { prompt_tokens: 82, completion_tokens: 17, total_tokens: 99, prompt_tokens_details: { cached_tokens: 64 } },
    }),
  },
  'data: [DONE]\n\n',
]);
const OPENAI_WHOLE = {
  text: WIDE,
  tool_calls: [
    { id: 'call_a', name: 'weather', arguments: '{"city":"Oslo"}' },
    { id: 'call_b', name: 'time', arguments: '{}' },
  ],
  finish_reason: 'tool_calls',
  usage: { input_tokens: 82, output_tokens: 17, cached_input_tokens: 64 },
};

// Anthropic's documented event stream: thinking (skipped), text, a tool call in pieces, a tool call without arguments.
const ANTHROPIC_STREAM = sseBody([
  {
    event: 'message_start',
    data: {
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [],
        model: 'claude-sonnet-4-5-20250929',
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 472, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 2 },
      },
    },
  },
  { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm.' } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } } },
  { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
  { event: 'content_block_start', data: { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } } },
  { event: 'ping', data: { type: 'ping' } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: WIDE.slice(0, 9) } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: WIDE.slice(9) } } },
  { event: 'content_block_stop', data: { type: 'content_block_stop', index: 1 } },
  {
    event: 'content_block_start',
    data: { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_a', name: 'weather', input: {} } },
  },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '' } } },
  {
    event: 'content_block_delta',
    data: { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city": "Os' } },
  },
  {
    event: 'content_block_delta',
    data: { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: 'lo"}' } },
  },
  { event: 'content_block_stop', data: { type: 'content_block_stop', index: 2 } },
  {
    event: 'content_block_start',
    data: { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'toolu_b', name: 'time', input: {} } },
  },
  { event: 'content_block_stop', data: { type: 'content_block_stop', index: 3 } },
  {
    event: 'message_delta',
    data: { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 89 } },
  },
  { event: 'message_stop', data: { type: 'message_stop' } },
]);
const ANTHROPIC_WHOLE = {
  text: WIDE,
  tool_calls: [
    { id: 'toolu_a', name: 'weather', arguments: '{"city": "Oslo"}' },
    { id: 'toolu_b', name: 'time', arguments: '{}' },
  ],
  finish_reason: 'tool_calls',
  // The whole input: 472 uncached + 100 written to the cache + 2000 read from it.
  usage: { input_tokens: 2572, output_tokens: 89, cached_input_tokens: 2000 },
};

// Gemini's stream: whole responses, CRLF-separated as Google sends them; usage grows chunk by chunk.
const geminiChunk = (parts: unknown[], usage: Record<string, number>, finishReason?: string) => ({
  candidates: [{ content: { parts, role: 'model' }, index: 0, ...(finishReason ? { finishReason } : {}) }],
  usageMetadata: { promptTokenCount: 120, ...usage },
  modelVersion: 'gemini-2.5-flash',
  responseId: 'r-1',
});
const GEMINI_STREAM = sseBody([
  { data: geminiChunk([{ text: 'thinking…', thought: true }], { totalTokenCount: 120 }) },
  { data: geminiChunk([{ text: WIDE.slice(0, 12) }], { candidatesTokenCount: 4, totalTokenCount: 124 }) },
  {
    data: geminiChunk([{ text: WIDE.slice(12) }, { functionCall: { name: 'weather', args: { city: 'Oslo' } } }], {
      candidatesTokenCount: 9,
      totalTokenCount: 129,
    }),
  },
  {
    data: geminiChunk(
      [{ functionCall: { name: 'time', args: {} } }],
      { candidatesTokenCount: 12, thoughtsTokenCount: 40, cachedContentTokenCount: 64, totalTokenCount: 172 },
      'STOP',
    ),
  },
]).replaceAll('\n', '\r\n');
const GEMINI_WHOLE = {
  text: WIDE,
  tool_calls: [
    { id: 'call_0', name: 'weather', arguments: '{"city":"Oslo"}' },
    { id: 'call_1', name: 'time', arguments: '{}' },
  ],
  finish_reason: 'tool_calls',
  usage: { input_tokens: 120, output_tokens: 52, cached_input_tokens: 64 },
};

interface Case {
  name: string;
  adapter: EndpointAdapter<'text_generation'>;
  stream: string;
  whole: object;
  /** Text inside the event that ends the stream (OpenAI: the finish_reason; it may end without [DONE]). */
  terminal: string;
}
const CASES: Case[] = [
  { name: 'openai_chat', adapter: openAiChatWire, stream: OPENAI_STREAM, whole: OPENAI_WHOLE, terminal: '"finish_reason":"tool_calls"' },
  {
    name: 'anthropic_messages',
    adapter: anthropicMessagesWire,
    stream: ANTHROPIC_STREAM,
    whole: ANTHROPIC_WHOLE,
    terminal: '"message_stop"',
  },
  {
    name: 'gemini_generate_content',
    adapter: geminiGenerateContentWire,
    stream: GEMINI_STREAM,
    whole: GEMINI_WHOLE,
    terminal: '"finishReason"',
  },
];

function decoderOf(adapter: EndpointAdapter<'text_generation'>): StreamDecoder {
  const make = adapter.streamDecoder;
  if (!make) throw new Error(`${adapter.apiFormat} has no stream decoder`);
  return make();
}

const decode = (adapter: EndpointAdapter<'text_generation'>, chunks: Iterable<Uint8Array>) => decodeAll(decoderOf(adapter), chunks);

function thrownBy(step: () => unknown): Error {
  try {
    step();
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error('a non-Error was thrown');
  }
  throw new Error('nothing was thrown');
}

describe('stream decoders: text, tool calls, finish and usage', () => {
  for (const { name, adapter, stream, whole, terminal } of CASES) {
    it(`${name}: a documented stream adds up to the answer, with finish and usage exactly once and last`, () => {
      const deltas = decode(adapter, [bytes(stream)]);
      const { finishes, usages, ...sum } = collapse(deltas);
      expect(sum).toEqual(whole);
      expect([finishes, usages]).toEqual([1, 1]);
      expect(deltas.slice(-2).map((d) => d.type)).toEqual(['finish', 'usage']);
      // Each tool call opens with its id and name before any argument piece.
      const firsts = new Map<number, string[]>();
      for (const d of deltas) if (d.type === 'tool_call' && !firsts.has(d.index)) firsts.set(d.index, [typeof d.id, typeof d.name]);
      expect([...firsts.values()]).toEqual([
        ['string', 'string'],
        ['string', 'string'],
      ]);
    });

    it(`${name}: one byte at a time and any random split give the same deltas`, () => {
      const data = bytes(stream);
      const reference = decode(adapter, [data]);
      expect(decode(adapter, byteByByte(data))).toEqual(reference);
      fc.assert(
        fc.property(fc.array(fc.integer({ min: 1, max: data.length - 1 }), { maxLength: 40 }), (offsets) => {
          expect(decode(adapter, splitAt(data, offsets))).toEqual(reference);
        }),
        { numRuns: 200 },
      );
    });

    it(`${name}: CRLF or CR line ends, comments and multi-line data change nothing`, () => {
      const reference = decode(adapter, [bytes(stream)]);
      const lf = stream.replaceAll('\r\n', '\n');
      const variants = [
        lf.replaceAll('\n', '\r\n'),
        lf.replaceAll('\n', '\r'),
        `: keep-alive\n\n${lf.replaceAll('\n\n', '\n: a comment\n\n')}`,
        // Every JSON event spread over several `data:` lines, which the reader joins with newlines.
        lf.replace(/^data: (\{.*\})$/gm, (_, json: string) =>
          JSON.stringify(JSON.parse(json), null, 1)
            .split('\n')
            .map((line) => `data: ${line}`)
            .join('\n'),
        ),
      ];
      for (const variant of variants) {
        expect(variant).not.toBe(lf);
        expect(decode(adapter, byteByByte(bytes(variant)))).toEqual(reference);
      }
    });

    it(`${name}: a stream cut before its terminal event, or inside it, is refused at its end`, () => {
      const separator = stream.includes('\r\n') ? '\r\n\r\n' : '\n\n';
      const marker = stream.indexOf(terminal);
      const eventStart = stream.lastIndexOf(separator, marker) + separator.length;
      const eventEnd = stream.indexOf(separator, marker);
      // Half-way, just before the terminal event, a few bytes into it, and after its data line but before its blank line.
      for (const cut of [Math.floor(stream.length / 2), eventStart, eventStart + 3, eventEnd + separator.length / 2]) {
        const decoder = decoderOf(adapter);
        decoder.push(bytes(stream.slice(0, cut)));
        expect(() => decoder.end(), `cut at ${cut}`).toThrow(/ended/);
      }
      const whole = decoderOf(adapter);
      whole.push(bytes(stream.slice(0, eventEnd + separator.length)));
      expect(() => whole.end()).not.toThrow();
    });
  }

  it('a cut inside a UTF-8 character is refused at the end', () => {
    const data = bytes(OPENAI_STREAM);
    const emoji = OPENAI_STREAM.indexOf('👋');
    const cut = new TextEncoder().encode(OPENAI_STREAM.slice(0, emoji)).length + 2;
    const decoder = decoderOf(openAiChatWire);
    decoder.push(data.subarray(0, cut));
    expect(() => decoder.end()).toThrow('not UTF-8');
  });

  it('openai_chat: the end may come after the finish without [DONE]; usage repeated on every chunk counts once, the last', () => {
    const cumulative = sseBody([
      { data: openAiChunk(delta({ content: 'a' }), { usage: { prompt_tokens: 5, completion_tokens: 1 } }) },
      { data: openAiChunk(delta({ content: 'b' }), { usage: { prompt_tokens: 5, completion_tokens: 2 } }) },
      { data: openAiChunk(delta({}, 'length'), { usage: { prompt_tokens: 5, completion_tokens: 3 } }) },
    ]);
    const deltas = decode(openAiChatWire, byteByByte(bytes(cumulative)));
    expect(collapse(deltas)).toEqual({
      text: 'ab',
      tool_calls: [],
      finish_reason: 'length',
      usage: { input_tokens: 5, output_tokens: 3, cached_input_tokens: null },
      finishes: 1,
      usages: 1,
    });
    // Without include_usage: no usage delta; [DONE] without any finish_reason still finishes once.
    const bare = sseBody([{ data: openAiChunk(delta({ content: 'x' })) }, 'data: [DONE]\n\n']);
    expect(decode(openAiChatWire, [bytes(bare)])).toEqual([
      { type: 'text', text: 'x' },
      { type: 'finish', finish_reason: 'other' },
    ]);
    // A refusal streams as text and finishes as the filter's.
    const refusal = sseBody([
      { data: openAiChunk(delta({ refusal: 'I cannot' })) },
      { data: openAiChunk(delta({}, 'stop')) },
      'data: [DONE]\n\n',
    ]);
    expect(collapse(decode(openAiChatWire, [bytes(refusal)]))).toMatchObject({ text: 'I cannot', finish_reason: 'content_filter' });
    // The deprecated function_call streams as call 0 with the id the non-streamed parse gives it.
    const legacy = sseBody([
      { data: openAiChunk(delta({ function_call: { name: 'f', arguments: '' } })) },
      { data: openAiChunk(delta({ function_call: { arguments: '{"a":1}' } })) },
      { data: openAiChunk(delta({}, 'function_call')) },
      'data: [DONE]\n\n',
    ]);
    expect(collapse(decode(openAiChatWire, [bytes(legacy)]))).toMatchObject({
      tool_calls: [{ id: 'call_0', name: 'f', arguments: '{"a":1}' }],
      finish_reason: 'tool_calls',
    });
    // Calls sent whole without `index` (some compatible servers) are ordered by their position.
    const whole = sseBody([
      {
        data: openAiChunk(
          delta({
            tool_calls: [
              { id: 'c1', function: { name: 'f', arguments: '{"a":1}' } },
              { id: 'c2', function: { name: 'g', arguments: '{}' } },
            ],
          }),
        ),
      },
      { data: openAiChunk(delta({}, 'tool_calls')) },
      'data: [DONE]\n\n',
    ]);
    expect(collapse(decode(openAiChatWire, [bytes(whole)])).tool_calls).toEqual([
      { id: 'c1', name: 'f', arguments: '{"a":1}' },
      { id: 'c2', name: 'g', arguments: '{}' },
    ]);
  });

  it('anthropic_messages: without a stop_reason the stop still finishes once; message_delta may update input counts', () => {
    const stream = sseBody([
      { event: 'message_start', data: { type: 'message_start', message: { usage: { input_tokens: 10, output_tokens: 1 } } } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Hi' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      {
        event: 'message_delta',
        data: { type: 'message_delta', delta: {}, usage: { output_tokens: 4, input_tokens: 12, cache_read_input_tokens: 3 } },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
    expect(decode(anthropicMessagesWire, [bytes(stream)])).toEqual([
      { type: 'text', text: 'Hi' },
      { type: 'finish', finish_reason: 'other' },
      { type: 'usage', usage: { input_tokens: 15, output_tokens: 4, cached_input_tokens: 3 } },
    ]);
  });

  it('gemini_generate_content: a blocked prompt ends as content_filter; MAX_TOKENS without calls is length', () => {
    const blocked = sseBody([{ data: { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 8 } } }]);
    expect(decode(geminiGenerateContentWire, [bytes(blocked)])).toEqual([
      { type: 'finish', finish_reason: 'content_filter' },
      { type: 'usage', usage: { input_tokens: 8, output_tokens: 0, cached_input_tokens: null } },
    ]);
    const cut = sseBody([{ data: geminiChunk([{ text: 'abc' }], { candidatesTokenCount: 1 }, 'MAX_TOKENS') }]);
    expect(collapse(decode(geminiGenerateContentWire, [bytes(cut)]))).toMatchObject({ text: 'abc', finish_reason: 'length', finishes: 1 });
  });
});

describe('stream decoders: errors', () => {
  const SECRET = 'user-secret-0xC0FFEE';
  const errorStreams: [string, EndpointAdapter<'text_generation'>, string, string][] = [
    [
      'an OpenAI error chunk',
      openAiChatWire,
      sseBody([
        { data: openAiChunk(delta({ content: 'a' })) },
        { data: { error: { message: SECRET, type: 'server_error', param: null, code: null } } },
      ]),
      '(server_error)',
    ],
    ['an OpenAI error event', openAiChatWire, `event: error\ndata: ${SECRET}\n\n`, 'reported an error'],
    [
      'an Anthropic error event',
      anthropicMessagesWire,
      sseBody([
        { event: 'message_start', data: { type: 'message_start', message: { usage: { input_tokens: 1, output_tokens: 1 } } } },
        { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: SECRET } } },
      ]),
      '(overloaded_error)',
    ],
    [
      'a Gemini error chunk',
      geminiGenerateContentWire,
      sseBody([{ data: { error: { code: 503, message: SECRET, status: 'UNAVAILABLE' } } }]),
      '(UNAVAILABLE)',
    ],
    ['a chunk that is not JSON', openAiChatWire, `data: {"choices": [${SECRET}\n\n`, 'is not JSON'],
    [
      'an event that is not JSON',
      anthropicMessagesWire,
      `event: content_block_delta\ndata: ${SECRET}\n\n`,
      '(content_block_delta) is not JSON',
    ],
    ['a chunk of another shape', geminiGenerateContentWire, sseBody([{ data: { candidates: SECRET } }]), 'candidates is not a list'],
    [
      'a tool delta for a text block',
      anthropicMessagesWire,
      sseBody([
        { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
        {
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{' } },
        },
      ]),
      'not a tool_use',
    ],
  ];

  for (const [what, adapter, stream, message] of errorStreams) {
    it(`${adapter.apiFormat}: ${what} throws, never quoting the stream, and the decoder stays spent`, () => {
      const decoder = decoderOf(adapter);
      const error = thrownBy(() => {
        for (const chunk of byteByByte(bytes(stream))) decoder.push(chunk);
      });
      expect(error.message).toContain(message);
      expect(error.message).not.toContain(SECRET);
      expect(() => decoder.push(bytes('data: {}\n\n'))).toThrow(error.message);
      expect(() => decoder.end()).toThrow(error.message);
    });
  }

  it('an event larger than the bound is refused before it is buffered whole', () => {
    const decoder = decoderOf(openAiChatWire);
    decoder.push(bytes('data: "'));
    const mebibyte = bytes('x'.repeat(1024 * 1024));
    expect(() => {
      for (let i = 0; i < 9; i++) decoder.push(mebibyte);
    }).toThrow(/exceeds/);
  });

  it('pushing after the end is refused', () => {
    const decoder = decoderOf(openAiChatWire);
    decoder.push(bytes(OPENAI_STREAM));
    decoder.end();
    expect(() => decoder.push(bytes('data: [DONE]\n\n'))).toThrow('already ended');
  });
});

describe('SSE reader', () => {
  it('dispatches on blank lines, joins data lines, keeps event names, ignores comments, unknown fields and a BOM', () => {
    const reader = createSseReader();
    const events = reader.push(bytes('\uFEFF: hello\nevent: a\ndata: 1\ndata:2\nid: 7\nretry: x\nfoo: bar\n\ndata: solo\n\n'));
    expect(events).toEqual([
      { event: 'a', data: '1\n2' },
      { event: undefined, data: 'solo' },
    ]);
    expect(reader.end()).toEqual([]);
  });

  it('an end between events passes; an end inside an event or a line does not', () => {
    const clean = createSseReader();
    clean.push(bytes('data: x\n\n: trailing comment'));
    expect(clean.end()).toEqual([]);
    // A final CR may be half of a CRLF until the body ends; then it is a line end, here the blank line.
    const crOnly = createSseReader();
    expect(crOnly.push(bytes('data: x\r\r'))).toEqual([]);
    expect(crOnly.end()).toEqual([{ event: undefined, data: 'x' }]);
    for (const tail of ['data: x\n', 'data: x', 'data: x\r\n', 'data: x\r']) {
      const reader = createSseReader();
      expect(reader.push(bytes(tail))).toEqual([]);
      expect(() => reader.end(), JSON.stringify(tail)).toThrow('ended inside an event');
    }
  });
});

describe('stream decoders over HTTP against the stand-ins', () => {
  const cases = [
    { dialect: 'openai' as const, adapter: openAiChatWire, modelId: 'gpt-4.1', stream: OPENAI_STREAM, whole: OPENAI_WHOLE },
    {
      dialect: 'anthropic' as const,
      adapter: anthropicMessagesWire,
      modelId: 'claude-sonnet-4-5-20250929',
      stream: ANTHROPIC_STREAM,
      whole: ANTHROPIC_WHOLE,
    },
    {
      dialect: 'gemini' as const,
      adapter: geminiGenerateContentWire,
      modelId: 'gemini-2.5-flash',
      stream: GEMINI_STREAM,
      whole: GEMINI_WHOLE,
    },
  ];

  for (const { dialect, adapter, modelId, stream, whole } of cases) {
    it(`${adapter.apiFormat}: a tool-call stream sent chunked decodes as it arrives; the same stream cut short fails at its end`, async () => {
      const s = await startStandin({ dialect });
      open.push(s);
      const model = composed(adapter.apiFormat as never, { model_id: modelId, capabilities: { workload: 'text_generation' } });
      const request = adapter.build(
        { baseUrl: s.baseUrl, model, credential: null },
        { messages: [{ role: 'user', content: 'hi' }], stream: true },
      );
      const sse = { 'content-type': 'text/event-stream' };
      s.respond({ status: 200, headers: sse, body: stream, chunked: true });
      s.respond({ status: 200, headers: sse, body: stream.slice(0, Math.floor(stream.length * 0.6)), chunked: true });
      const full = await send(request);
      const decoder = decoderOf(adapter);
      const deltas: TextDelta[] = [];
      for await (const chunk of full.body as AsyncIterable<Uint8Array>) deltas.push(...decoder.push(chunk));
      deltas.push(...decoder.end());
      const { finishes, usages, ...sum } = collapse(deltas);
      expect([sum, finishes, usages]).toEqual([whole, 1, 1]);
      const cut = await send(request);
      const cutDecoder = decoderOf(adapter);
      for await (const chunk of cut.body as AsyncIterable<Uint8Array>) cutDecoder.push(chunk);
      expect(() => cutDecoder.end()).toThrow(/ended/);
      // The stand-in received the streaming request the adapter built.
      expect(s.requests[0]?.path).toBe(
        dialect === 'openai'
          ? '/v1/chat/completions'
          : dialect === 'anthropic'
            ? '/v1/messages'
            : `/v1beta/models/${modelId}:streamGenerateContent`,
      );
      if (dialect === 'gemini') expect(s.requests[0]?.query).toEqual({ alt: 'sse' });
    });
  }
});
