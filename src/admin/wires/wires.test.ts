import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.ts';
import type { ComposedModel } from '../catalog/catalog.compose.ts';
import { DEFAULT_CATALOG_DIR, loadCatalog } from '../catalog/catalog.loader.ts';
import { API_FORMATS, WIRES, type ApiFormat } from '../catalog/wires.ts';
import { anthropicMessagesWire } from './anthropic-messages.wire.ts';
import { geminiEmbeddingsWire, geminiGenerateContentWire } from './gemini-generate-content.wire.ts';
import { openAiChatWire } from './openai-chat.wire.ts';
import { openAiEmbeddingsWire } from './openai-embeddings.wire.ts';
import { openAiImagesWire } from './openai-images.wire.ts';
import { openAiSpeechWire } from './openai-speech.wire.ts';
import { openAiTranscriptionWire } from './openai-transcription.wire.ts';
import { applyPromptFormat } from './prompt-format.ts';
import { composed } from './wire-answers.testkit.ts';
import type { ChatMessage, MultipartBody } from './wire.types.ts';
import { buildUpstreamRequest, ENDPOINT_ADAPTERS, endpointFor } from './wires.registry.ts';

const model = composed;

const key = { kind: 'api_key' as const, key: 'sk-test' };
const target = (m: ComposedModel, baseUrl = 'https://p.example/v1') => ({ baseUrl, model: m, credential: key });
const json = (body: unknown): Record<string, unknown> => JSON.parse(body as string) as Record<string, unknown>;

describe('wire adapters', () => {
  it('[ADM-WIRE-1] one adapter per wire and workload declares the profile the catalog inherits, a directory and a probe', () => {
    for (const format of API_FORMATS) {
      for (const [workload, profile] of Object.entries(WIRES[format].workloads)) {
        const adapter = endpointFor(format, workload as never);
        expect(adapter, `${format} ${workload}`).toBeDefined();
        expect(adapter?.profile).toBe(profile);
        expect(typeof adapter?.directory.request).toBe('function');
        expect(typeof adapter?.probe).toBe('function');
      }
    }
    expect(ENDPOINT_ADAPTERS.map((a) => `${a.apiFormat}/${a.workload}`).sort()).toEqual([
      'anthropic_messages/text_generation',
      'gemini_generate_content/embeddings',
      'gemini_generate_content/text_generation',
      'openai_chat/embeddings',
      'openai_chat/image_generation',
      'openai_chat/speech',
      'openai_chat/text_generation',
      'openai_chat/transcription',
    ]);
    expect(WIRES.anthropic_messages.credentials).toEqual(['api_key', 'oauth_tokens']);
    expect(WIRES.openai_chat.workloads.text_generation?.token_counter).toEqual({
      kind: 'anchored',
      encoding: 'o200k_base',
      safety_factor: '1.25',
    });
  });

  it("[ADM-WIRE-2] builds every shipped catalog model's probe request without sending it", () => {
    const state = loadCatalog(DEFAULT_CATALOG_DIR);
    if (!state.ok) throw new Error(state.reason);
    let built = 0;
    for (const composed of state.catalog.composed.values()) {
      const provider = state.catalog.providers.get(composed.provider_id);
      if (!provider) throw new Error('provider');
      const adapter = endpointFor(provider.declaration.api_format, composed.workload);
      if (!adapter) throw new Error(`no adapter for ${composed.ref}`);
      const probe = adapter.probe(composed);
      if (!probe.ok) {
        expect(composed.workload, composed.ref).toBe('speech');
        continue;
      }
      const request = adapter.build({ baseUrl: provider.declaration.base_url, model: composed, credential: key }, probe.input);
      expect(request.method).toBe('POST');
      expect(request.url.startsWith(provider.declaration.base_url.replace(/\/$/, '')), composed.ref).toBe(true);
      built++;
    }
    expect(built).toBeGreaterThan(10);
  });

  it('[ADM-WIRE-3] a shipped Claude model sent top_p alone gets no temperature beside it (those models refuse the pair)', () => {
    const state = loadCatalog(DEFAULT_CATALOG_DIR);
    if (!state.ok) throw new Error(state.reason);
    const claude = [...state.catalog.composed.values()].filter((m) => m.provider_id === 'anthropic' && m.workload === 'text_generation');
    expect(claude.length).toBeGreaterThan(0);
    for (const m of claude) {
      const body = json(
        anthropicMessagesWire.build(target(m), { messages: [{ role: 'user', content: 'hi' }], parameters: { top_p: 0.5 } }).body,
      );
      expect(body.top_p, m.ref).toBe(0.5);
      expect(body.temperature, m.ref).toBeUndefined();
    }
  });

  it('[ADM-WIRE-3] openai_chat maps the model id, parameters, tools, structured output and streaming, and refuses what the model does not offer', () => {
    const m = model('openai_chat', {
      model_id: 'gpt-x-2025',
      capabilities: {
        generation_parameters: { max_output_tokens: {}, temperature: { kind: 'number', minimum: 0, maximum: 2, default: 1 } },
      },
    });
    const request = openAiChatWire.build(target(m, 'https://p.example/v1/'), {
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      parameters: { max_output_tokens: 50 },
      tools: [{ name: 'lookup', parameters: { type: 'object' } }],
      output_schema: { type: 'object' },
      stream: true,
    });
    expect(request.url).toBe('https://p.example/v1/chat/completions');
    expect(request.headers).toMatchObject({ authorization: 'Bearer sk-test', 'content-type': 'application/json' });
    expect(json(request.body)).toEqual({
      model: 'gpt-x-2025',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      max_tokens: 50,
      temperature: 1,
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      response_format: { type: 'json_schema', json_schema: { name: 'output', strict: true, schema: { type: 'object' } } },
      stream: true,
      stream_options: { include_usage: true },
    });
    const reasoning = model('openai_chat', {
      capabilities: { reasoning: { efforts: ['low'] }, generation_parameters: { max_output_tokens: {} } },
    });
    expect(
      json(
        openAiChatWire.build(target(reasoning), { messages: [], parameters: { max_output_tokens: 5 }, reasoning: { effort: 'low' } }).body,
      ),
    ).toMatchObject({ max_completion_tokens: 5, reasoning_effort: 'low' });
    const refusals: [ComposedModel, Parameters<typeof openAiChatWire.build>[1], RegExp][] = [
      [m, { messages: [], parameters: { top_k: 3 } }, /parameters\.top_k: the model declares no such generation parameter/],
      [m, { messages: [], parameters: { temperature: 3 } }, /parameters\.temperature: out of bounds/],
      [m, { messages: [], parameters: { max_output_tokens: 1.5 } }, /expected an integer/],
      [model('openai_chat', { capabilities: { tool_calls: false } }), { messages: [], tools: [{ name: 't', parameters: {} }] }, /tools/],
      [
        model('openai_chat', { capabilities: { generation_parameters: { output_format: false } } }),
        { messages: [], output_schema: {} },
        /output_schema/,
      ],
      [m, { messages: [], reasoning: { effort: 'low' } }, /reasoning: the model declares no reasoning/],
      [m, { messages: [{ role: 'user', content: [{ type: 'image', media_type: 'image/png', data: 'AA==' }] }] }, /image input/],
    ];
    for (const [which, input, message] of refusals) {
      expect(() => openAiChatWire.build(target(which), input)).toThrow(message);
      expect(() => openAiChatWire.build(target(which), input)).toThrow(AppError);
    }
  });

  it('[ADM-WIRE-4] prompt_format model3_5 merges leading instructions, sends later ones as user messages in place, and keeps the stored roles', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'developer', content: 'Answer in French.' },
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Bonjour' },
      { role: 'system', content: 'Now be verbose.' },
      { role: 'user', content: 'Why?' },
    ];
    const stored = structuredClone(messages);
    const m = model('openai_chat', { capabilities: { wire_options: { prompt_format: 'model3_5' } } });
    const sent = json(openAiChatWire.build(target(m), { messages }).body).messages;
    expect(sent).toEqual([
      { role: 'system', content: 'Be brief.\n\nAnswer in French.' },
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Bonjour' },
      { role: 'user', content: 'Now be verbose.' },
      { role: 'user', content: 'Why?' },
    ]);
    expect(messages).toEqual(stored);
    // Omission adds no transformation.
    const plain = model('openai_chat', {});
    expect(json(openAiChatWire.build(target(plain), { messages }).body).messages).toEqual(
      messages.map((x) => ({ role: x.role, content: x.content })),
    );
    expect(applyPromptFormat(messages, null)).toEqual(messages);
  });

  it('[ADM-WIRE-3] anthropic_messages puts instructions in system, requires max_tokens and maps tools', () => {
    const m = model('anthropic_messages', { model_id: 'claude-x', capabilities: { limits: { output_tokens: 8000 } } });
    const request = anthropicMessagesWire.build(target(m), {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' }] },
        { role: 'tool', tool_call_id: 'c1', content: 'rain' },
      ],
      tools: [{ name: 'weather', description: 'forecast', parameters: { type: 'object' } }],
    });
    expect(request.url).toBe('https://p.example/v1/messages');
    expect(request.headers).toMatchObject({ 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01' });
    expect(request.headers.authorization).toBeUndefined();
    expect(json(request.body)).toEqual({
      model: 'claude-x',
      max_tokens: 8000,
      system: 'Be brief.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'weather', input: { city: 'Oslo' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'rain' }] },
      ],
      tools: [{ name: 'weather', description: 'forecast', input_schema: { type: 'object' } }],
    });
    expect(
      json(
        anthropicMessagesWire.build(target(model('anthropic_messages', {})), { messages: [], parameters: { max_output_tokens: 12 } }).body,
      ).max_tokens,
    ).toBe(12);
  });

  it('[ADM-WIRE-3] gemini_generate_content addresses the model in the path and maps instructions and parameters', () => {
    const m = model('gemini_generate_content', {
      model_id: 'gemini-x',
      capabilities: { reasoning: { budget_tokens: { minimum: 1, maximum: 100 } } },
    });
    const request = geminiGenerateContentWire.build(target(m, 'https://g.example/v1beta'), {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello' },
      ],
      parameters: { temperature: 0.5, max_output_tokens: 9 },
      reasoning: { budget_tokens: 50 },
      output_schema: { type: 'object' },
    });
    expect(request.url).toBe('https://g.example/v1beta/models/gemini-x:generateContent');
    expect(request.headers['x-goog-api-key']).toBe('sk-test');
    expect(json(request.body)).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Hello' }] },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: {
        maxOutputTokens: 9,
        temperature: 0.5,
        responseMimeType: 'application/json',
        responseJsonSchema: { type: 'object' },
        thinkingConfig: { thinkingBudget: 50 },
      },
    });
    expect(geminiGenerateContentWire.build(target(m, 'https://g.example/v1beta'), { messages: [], stream: true }).url).toBe(
      'https://g.example/v1beta/models/gemini-x:streamGenerateContent?alt=sse',
    );
    const embed = geminiEmbeddingsWire.build(
      target(model('gemini_generate_content', { capabilities: { workload: 'embeddings' } }, 'e-1'), 'https://g.example/v1beta'),
      { input: ['a', 'b'] },
    );
    expect(embed.url).toBe('https://g.example/v1beta/models/e-1:batchEmbedContents');
    expect(json(embed.body)).toEqual({
      requests: [
        { model: 'models/e-1', content: { parts: [{ text: 'a' }] } },
        { model: 'models/e-1', content: { parts: [{ text: 'b' }] } },
      ],
    });
  });

  it('[ADM-WIRE-3] OpenAI-compatible embeddings, images, speech and transcription endpoints', () => {
    const emb = openAiEmbeddingsWire.build(target(model('openai_chat', { capabilities: { workload: 'embeddings' } })), { input: ['x'] });
    expect([emb.url, json(emb.body)]).toEqual([
      'https://p.example/v1/embeddings',
      { model: 'm-1', input: ['x'], encoding_format: 'float' },
    ]);
    const image = openAiImagesWire.build(
      target(
        model('openai_chat', {
          capabilities: { workload: 'image_generation', generation_parameters: { size: { kind: 'string', allowed_values: ['256x256'] } } },
        }),
      ),
      { prompt: 'p', parameters: { size: '256x256' } },
    );
    expect([image.url, json(image.body)]).toEqual([
      'https://p.example/v1/images/generations',
      { model: 'm-1', prompt: 'p', n: 1, size: '256x256' },
    ]);
    const voiceless = model('openai_chat', { capabilities: { workload: 'speech' } });
    expect(openAiSpeechWire.probe(voiceless)).toMatchObject({ ok: false, outcome: 'test_input_unavailable' });
    const voiced = model('openai_chat', {
      capabilities: { workload: 'speech', generation_parameters: { voice: { kind: 'string', allowed_values: ['alloy', 'verse'] } } },
    });
    const probe = openAiSpeechWire.probe(voiced);
    if (!probe.ok) throw new Error('expected a probe');
    const speech = openAiSpeechWire.build(target(voiced), probe.input);
    expect([speech.url, json(speech.body)]).toEqual([
      'https://p.example/v1/audio/speech',
      { model: 'm-1', input: 'ok', response_format: 'wav', voice: 'alloy' },
    ]);
    const hearing = model('openai_chat', { capabilities: { workload: 'transcription', input_modalities: ['audio'] } });
    const tprobe = openAiTranscriptionWire.probe(hearing);
    if (!tprobe.ok) throw new Error('expected a probe');
    const transcription = openAiTranscriptionWire.build(target(hearing), tprobe.input);
    expect(transcription.url).toBe('https://p.example/v1/audio/transcriptions');
    const body = transcription.body as MultipartBody;
    const file = body.parts.find((p) => p.name === 'file');
    expect(file && 'data' in file ? Buffer.from(file.data).subarray(0, 4).toString('ascii') : '').toBe('RIFF');
    expect(file && 'data' in file ? Buffer.from(file.data).readUInt32LE(24) : 0).toBe(16000);
    expect(body.parts).toContainEqual({ name: 'model', value: 'm-1' });
    // The registry dispatches by the model's workload.
    expect(
      buildUpstreamRequest('openai_chat', target(model('openai_chat', { capabilities: { workload: 'embeddings' } })), { input: ['x'] }).url,
    ).toBe('https://p.example/v1/embeddings');
  });

  it('[ADM-WIRE-5] reads each directory format, following pages, and refuses a body of another shape', () => {
    expect(openAiChatWire.directory.request('https://p.example/v1', key, null)).toMatchObject({
      method: 'GET',
      url: 'https://p.example/v1/models',
      headers: { authorization: 'Bearer sk-test' },
    });
    expect(openAiChatWire.directory.parse({ object: 'list', data: [{ id: 'a' }, { id: 'org/b' }] })).toEqual({
      models: [
        { id: 'a', display_name: null },
        { id: 'org/b', display_name: null },
      ],
      next: null,
    });
    expect(() => openAiChatWire.directory.parse({ models: [] })).toThrow();
    expect(anthropicMessagesWire.directory.request('https://a.example/v1', key, 'claude-1').url).toBe(
      'https://a.example/v1/models?limit=1000&after_id=claude-1',
    );
    expect(
      anthropicMessagesWire.directory.parse({ data: [{ id: 'claude-1', display_name: 'Claude 1' }], has_more: true, last_id: 'claude-1' }),
    ).toEqual({ models: [{ id: 'claude-1', display_name: 'Claude 1' }], next: 'claude-1' });
    expect(() => anthropicMessagesWire.directory.parse({ data: [], has_more: true })).toThrow();
    expect(geminiGenerateContentWire.directory.request('https://g.example/v1beta', key, 't2').url).toBe(
      'https://g.example/v1beta/models?pageSize=1000&pageToken=t2',
    );
    expect(
      geminiGenerateContentWire.directory.parse({ models: [{ name: 'models/gemini-x', displayName: 'Gemini X' }], nextPageToken: 't2' }),
    ).toEqual({ models: [{ id: 'gemini-x', display_name: 'Gemini X' }], next: 't2' });
    expect(geminiGenerateContentWire.directory.parse({})).toEqual({ models: [], next: null });
    expect(() => geminiGenerateContentWire.directory.parse({ models: [{ name: 'gemini-x' }] })).toThrow();
    // The none lane sends no credential.
    expect(openAiChatWire.directory.request('http://127.0.0.1:11434/v1', null, null).headers.authorization).toBeUndefined();
  });
  it('[ADM-WIRE-3] each text wire names the tool choice its own way, and only when tools are sent', () => {
    const tools = [{ name: 'lookup', parameters: { type: 'object' } }];
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const sent = (format: ApiFormat, choice: 'auto' | 'none' | 'required' | { name: string }, withTools = true) => {
      const adapter = endpointFor(format, 'text_generation');
      if (!adapter) throw new Error(`no text endpoint on ${format}`);
      return json(adapter.build(target(model(format, {})), { messages, tool_choice: choice, ...(withTools ? { tools } : {}) }).body);
    };
    expect(sent('openai_chat', 'required').tool_choice).toBe('required');
    expect(sent('openai_chat', { name: 'lookup' }).tool_choice).toEqual({ type: 'function', function: { name: 'lookup' } });
    expect(sent('anthropic_messages', 'required').tool_choice).toEqual({ type: 'any' });
    expect(sent('anthropic_messages', 'none').tool_choice).toEqual({ type: 'none' });
    expect(sent('anthropic_messages', { name: 'lookup' }).tool_choice).toEqual({ type: 'tool', name: 'lookup' });
    expect(sent('gemini_generate_content', 'required').toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(sent('gemini_generate_content', 'auto').toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(sent('gemini_generate_content', { name: 'lookup' }).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] },
    });
    // Providers refuse a tool choice without tools, so none is sent.
    for (const format of API_FORMATS) {
      const body = sent(format, 'required', false);
      expect(body.tool_choice ?? body.toolConfig, format).toBeUndefined();
    }
  });
  it('[ADM-WIRE-3] answers to parallel tool calls go back together, and Gemini names each answer by its call', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Weather in Oslo and Rome?' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' },
          { id: 'c2', name: 'weather', arguments: '{"city":"Rome"}' },
        ],
      },
      // The platform's tool messages carry the call's id, not the tool's name (OpenAI's shape).
      { role: 'tool', tool_call_id: 'c1', content: 'rain' },
      { role: 'tool', tool_call_id: 'c2', content: 'sun' },
      { role: 'user', content: 'Thanks' },
    ];
    const tools = [{ name: 'weather', parameters: { type: 'object' } }];
    const gemini = json(geminiGenerateContentWire.build(target(model('gemini_generate_content', {})), { messages, tools }).body);
    expect(gemini.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Oslo and Rome?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'weather', args: { city: 'Oslo' } } },
          { functionCall: { name: 'weather', args: { city: 'Rome' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'weather', response: { content: 'rain' } } },
          { functionResponse: { name: 'weather', response: { content: 'sun' } } },
        ],
      },
      { role: 'user', parts: [{ text: 'Thanks' }] },
    ]);
    const anthropic = json(anthropicMessagesWire.build(target(model('anthropic_messages', {})), { messages, tools }).body);
    expect((anthropic.messages as unknown[])[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'c1', content: 'rain' },
        { type: 'tool_result', tool_use_id: 'c2', content: 'sun' },
      ],
    });
    expect(anthropic.messages as unknown[]).toHaveLength(4);
    // A tool answer Gemini cannot name is the caller's mistake, refused before anything is sent.
    const orphan = () =>
      geminiGenerateContentWire.build(target(model('gemini_generate_content', {})), {
        messages: [{ role: 'tool', tool_call_id: 'nowhere', content: 'x' }],
      });
    expect(orphan).toThrowError(expect.objectContaining({ code: 'validation_failed' }) as Error);
  });

  it('[ADM-WIRE-3] a tool call whose arguments are not a JSON object is refused on every text wire, naming where, never quoting it', () => {
    const secret = 'the-prompt-text-7f3a';
    for (const [index, broken] of [`{"city": "Paris ${secret}`, `["${secret}"]`, '42'].entries()) {
      const messages: ChatMessage[] = [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'weather', arguments: broken }] },
      ];
      for (const format of API_FORMATS) {
        const adapter = endpointFor(format, 'text_generation');
        if (!adapter) continue;
        let refusal: unknown;
        try {
          adapter.build(target(model(format, {})), { messages, tools: [{ name: 'weather', parameters: { type: 'object' } }] });
        } catch (error) {
          refusal = error;
        }
        expect(refusal, `${format} #${index}`).toBeInstanceOf(AppError);
        expect((refusal as AppError).code).toBe('validation_failed');
        expect((refusal as AppError).message).toContain('messages[1].tool_calls[0].arguments');
        expect((refusal as AppError).message).not.toContain(secret);
      }
    }
  });
});
