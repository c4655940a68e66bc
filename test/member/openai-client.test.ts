import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addHuman } from '../admin/admin-harness.ts';
import { openProviderStandins, type ProviderStandins } from '../admin/provider-standins.ts';
import { dialects } from '../support/databases.ts';

/**
 * Issue 16 item 2: the official `openai` client, unchanged, pointed at `${url}/agent_api/v1` with a member token,
 * through the whole path (admission, the OpenAI wire, the stand-in as OpenAI) and back. Needs the inference engine
 * wired into the app (registerOpenAiRoutes in the member routes).
 */
describe.each(dialects)('the official OpenAI client on the Agent API on %s', (dialect) => {
  let s: ProviderStandins;
  let client: OpenAI;

  beforeAll(async () => {
    s = await openProviderStandins(dialect, { standin: { reply: 'Hello from the stand-in' } });
    const member = await addHuman(s.h, 'member');
    client = new OpenAI({ apiKey: member.member, baseURL: `${s.h.url}/agent_api/v1`, maxRetries: 0 });
  });
  afterAll(async () => s.close());
  beforeEach(() => s.standins.openai.reset());

  const sentTo = (path: string) => s.standins.openai.requests.filter((r) => r.path.endsWith(path));

  it('does a chat completion', async () => {
    const completion = await client.chat.completions.create({
      model: 'openai/gpt-4.1',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello' },
      ],
      max_tokens: 32,
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('openai/gpt-4.1');
    expect(completion.choices[0]?.message.content).toBe('Hello from the stand-in');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
    expect(sentTo('/chat/completions')).toHaveLength(1);
  });

  it('streams a chat completion with include_usage', async () => {
    const stream = await client.chat.completions.create({
      model: 'openai/gpt-4.1',
      messages: [{ role: 'user', content: 'hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello from the stand-in');
    expect(finish).toBe('stop');
    expect(usage?.prompt_tokens).toBeGreaterThan(0);
    expect(usage?.total_tokens).toBe((usage?.prompt_tokens ?? 0) + (usage?.completion_tokens ?? 0));
  });

  it('does a tool call round trip', async () => {
    s.standins.openai.respond({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'chatcmpl-tool',
        object: 'chat.completion',
        created: 1_735_689_600,
        model: 'gpt-4.1',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_w', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
            },
            finish_reason: 'tool_calls',
            logprobs: null,
          },
        ],
        usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 },
      }),
    });
    const tools: OpenAI.Chat.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ];
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'weather in Paris?' }];
    const first = await client.chat.completions.create({ model: 'openai/gpt-4.1', messages, tools });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call).toEqual({ id: 'call_w', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } });
    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: 'call_w', content: '{"sky":"clear"}' });
    const second = await client.chat.completions.create({ model: 'openai/gpt-4.1', messages, tools });
    expect(second.choices[0]?.message.content).toBe('Hello from the stand-in');
    const upstream = sentTo('/chat/completions').at(-1)?.json as { messages: unknown[]; tools: unknown[] };
    expect(upstream.messages.slice(-2)).toMatchObject([
      { role: 'assistant', tool_calls: [{ id: 'call_w', type: 'function', function: { name: 'weather' } }] },
      { role: 'tool', tool_call_id: 'call_w', content: '{"sky":"clear"}' },
    ]);
    expect(upstream.tools).toHaveLength(1);
  });

  it('creates embeddings (the client asks for base64 and decodes it)', async () => {
    const answer = await client.embeddings.create({ model: 'openai/text-embedding-3-small', input: ['one', 'two'] });
    expect(answer.object).toBe('list');
    expect(answer.data.map((d) => d.index)).toEqual([0, 1]);
    for (const d of answer.data) {
      expect(d.embedding.length).toBeGreaterThan(0);
      expect(d.embedding.every((x) => Number.isFinite(x))).toBe(true);
    }
    expect(answer.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('lists models in OpenAI’s shape', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) {
      expect(model.object).toBe('model');
      ids.push(model.id);
    }
    expect(ids).toContain('openai/gpt-4.1');
    expect(ids).toContain('openai/text-embedding-3-small');
  });

  it('answers an unknown model with the client’s typed error and its status', async () => {
    const error = await client.chat.completions
      .create({ model: 'openai/no-such-model', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error).toMatchObject({ status: 404, code: 'not_found', type: 'invalid_request_error' });
    expect(sentTo('/chat/completions')).toHaveLength(0);
  });
});
