/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-explicit-any -- response bodies and SSE event data are untyped JSON; the assertions pin their shape */
// The inference execution path (issue 16 items 1, 3–6) end to end over real HTTP against the provider stand-ins, on
// SQLite and PostgreSQL: admission refusals and the selector, parameter and fit refusals before any upstream call,
// JSON and streamed calls with their usage rows and cost, an upstream 429 moving the admission floor, a client leaving
// mid-stream, and the member-plane boundary.
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { endpointFor } from '../../src/admin/wires/wires.registry.ts';
import { dialects } from '../support/databases.ts';
import { PROVIDER_ERRORS } from '../support/upstream/index.ts';
import { addHuman, P, type Reply } from './admin-harness.ts';
import { openProviderStandins, type ProviderStandins } from './provider-standins.ts';

const CHAT = { openai: 'openai/gpt-4.1', anthropic: 'anthropic/claude-sonnet-4-5', gemini: 'google/gemini-2.5-flash' } as const;
const PATH = '/agent_api/v1/inference_requests';
const USER = [{ role: 'user', content: 'Say ok.' }];

interface UsageRow {
  id: string;
  human_id: string;
  credential_id: string;
  model: string;
  model_identity: string | null;
  workload: string;
  input_tokens: number | null;
  output_tokens: number | null;
  cost: string | null;
  cost_unit: string | null;
  duration_ms: number;
  outcome: string;
  streamed: number;
}

/** SSE events of a text/event-stream body. */
function events(text: string): { event: string; data: any }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? '';
      const data = lines.find((l) => l.startsWith('data: '))?.slice(6) ?? 'null';
      return { event, data: JSON.parse(data) };
    });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(dialects)('inference requests on %s', (dialect) => {
  let f: ProviderStandins;
  let member: Awaited<ReturnType<typeof addHuman>>;
  beforeAll(async () => {
    f = await openProviderStandins(dialect, { standin: { reply: 'GENERATED-TEXT' } });
    member = await addHuman(f.h, 'member');
  });
  afterAll(async () => f.close());
  beforeEach(async () => {
    for (const s of Object.values(f.standins)) s.reset();
    await sql`delete from model_provider_admission`.execute(f.h.platform.ctx.database.db);
  });

  const db = () => f.h.platform.ctx.database.db;
  const infer = (body: Record<string, unknown>, token = member.member): Promise<Reply> => f.h.call('POST', PATH, { token, body });
  async function usageRow(id: string): Promise<UsageRow> {
    const { rows } = await sql<UsageRow>`select * from inference_usage where id = ${id}`.execute(db());
    const row = rows[0];
    if (!row) throw new Error(`no usage row ${id}`);
    return {
      ...row,
      input_tokens: row.input_tokens === null ? null : Number(row.input_tokens),
      output_tokens: row.output_tokens === null ? null : Number(row.output_tokens),
      duration_ms: Number(row.duration_ms),
    };
  }
  async function lastRows(n: number): Promise<UsageRow[]> {
    const { rows } = await sql<UsageRow>`select * from inference_usage order by started_at desc, id limit ${n}`.execute(db());
    return rows;
  }
  async function command(provider: string, suffix: string, fields: Record<string, unknown>): Promise<void> {
    const put = await f.h.call('PUT', P(provider, suffix), {
      token: f.h.token,
      body: { command: { ...fields, expected_lock_version: await f.version(provider) } },
    });
    expect(put.status, put.text).toBe(200);
  }

  it('answers a chat completion as JSON with the usage the provider reported, and writes one usage row', async () => {
    const reply = await infer({ model: CHAT.openai, messages: USER, max_output_tokens: 64 });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({
      model: CHAT.openai,
      workload: 'text_generation',
      text: 'GENERATED-TEXT',
      finish_reason: 'stop',
      cost: null,
    });
    expect(reply.body.usage.input_tokens).toBeGreaterThan(0);
    const sent = f.standins.openai.requests[0]?.json as Record<string, unknown>;
    expect(sent).toMatchObject({ model: 'gpt-4.1', max_tokens: 64 });
    const row = await usageRow(reply.body.request_id);
    expect(row).toMatchObject({
      human_id: member.humanId,
      model: CHAT.openai,
      workload: 'text_generation',
      outcome: 'succeeded',
      cost: null,
    });
    expect(row.input_tokens).toBe(reply.body.usage.input_tokens);
    expect(Number(row.streamed)).toBe(0);
  });

  it('streams a chat completion as Server-Sent Events and settles its usage row', async () => {
    const reply = await infer({ model: CHAT.openai, messages: USER, stream: true });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const list = events(reply.text);
    expect(list[0]).toMatchObject({ event: 'start', data: { model: CHAT.openai } });
    expect(
      list
        .filter((e) => e.event === 'delta')
        .map((e) => e.data.text)
        .join(''),
    ).toBe('GENERATED-TEXT');
    const done = list.at(-1);
    expect(done).toMatchObject({ event: 'done', data: { finish_reason: 'stop' } });
    expect(done?.data.usage.output_tokens).toBeGreaterThan(0);
    const row = await usageRow(list[0]?.data.request_id);
    expect(row).toMatchObject({ outcome: 'succeeded' });
    expect(Number(row.streamed)).toBe(1);
    expect(row.output_tokens).toBe(done?.data.usage.output_tokens);
  });

  it("takes an image of a few MiB inline (above the JSON APIs' 1 MiB body limit) to the provider", async () => {
    const data = Buffer.alloc(3 * 1024 * 1024, 7).toString('base64');
    const reply = await infer({
      model: CHAT.anthropic,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', media_type: 'image/png', data },
          ],
        },
      ],
      max_output_tokens: 64,
    });
    expect(reply.status, reply.text.slice(0, 300)).toBe(200);
    const sent = f.standins.anthropic.requests.at(-1)?.json as { messages: { content: { source?: { data: string } }[] }[] };
    expect(sent.messages[0]?.content[1]?.source?.data).toBe(data);
  });

  it('answers embeddings', async () => {
    const reply = await infer({ model: 'openai/text-embedding-3-small', workload: 'embeddings', input: ['a', 'b'] });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.embeddings).toHaveLength(2);
    expect((await usageRow(reply.body.request_id)).workload).toBe('embeddings');
  });

  for (const wire of ['anthropic', 'gemini'] as const) {
    const format = wire === 'anthropic' ? 'anthropic_messages' : 'gemini_generate_content';
    it.skipIf(endpointFor(format, 'text_generation')?.streamDecoder === undefined)(
      `calls the ${wire} wire, JSON and streamed`,
      async () => {
        const json = await infer({ model: CHAT[wire], messages: USER, max_output_tokens: 32 });
        expect(json.status, json.text).toBe(200);
        expect(json.body.text).toBe('GENERATED-TEXT');
        expect((await usageRow(json.body.request_id)).outcome).toBe('succeeded');
        const streamed = await infer({ model: CHAT[wire], messages: USER, stream: true });
        const list = events(streamed.text);
        expect(
          list
            .filter((e) => e.event === 'delta')
            .map((e) => e.data.text)
            .join(''),
        ).toBe('GENERATED-TEXT');
        expect(list.at(-1)?.event).toBe('done');
        expect((await usageRow(list[0]?.data.request_id)).outcome).toBe('succeeded');
      },
    );
  }

  it('refuses each unadmissible candidate with its reason, and the selector skips refused ones', async () => {
    const refused = async (ref: string, reason: string) => {
      const reply = await infer({ model: ref, messages: USER });
      expect(reply.status, reply.text).toBe(409);
      expect(reply.body.error.code).toBe('model_unavailable');
      expect(reply.body.error.message).toContain(`${ref}: ${reason}`);
    };
    // disabled
    await command('anthropic', '/lane', { enabled: false });
    await refused(CHAT.anthropic, 'provider_disabled');
    await command('anthropic', '/lane', { enabled: true });
    // hidden, and the selector passing over it
    await command('openai', '/model_visibility', { model: CHAT.openai, visible: false });
    await refused(CHAT.openai, 'model_hidden');
    const selected = await infer({ models: ['nobody/none', CHAT.openai, 'openai/gpt-4.1-mini'], messages: USER });
    expect(selected.status, selected.text).toBe(200);
    expect(selected.body.model).toBe('openai/gpt-4.1-mini');
    await command('openai', '/model_visibility', { model: CHAT.openai, visible: true });
    // invalid
    await command('openai', '/model_availability', { model: CHAT.openai, available: false });
    await refused(CHAT.openai, 'model_unavailable');
    await command('openai', '/model_availability', { model: CHAT.openai, available: true });
    // no credential
    const del = await f.h.call('DELETE', P('google', '/api_key'), { token: f.h.token });
    expect(del.status, del.text).toBe(200);
    await refused(CHAT.gemini, 'missing_credential');
    const all = await infer({ models: [CHAT.gemini, 'openai/no-such-model'], messages: USER });
    expect(all.status).toBe(409);
    const put = await f.h.call('PUT', P('google', '/api_key'), {
      token: f.h.token,
      body: { command: { api_key: 'AIzaStandinGemini0123456789abcdef' } },
    });
    expect(put.status).toBe(200);
    // unknown only
    expect((await infer({ models: ['openai/no-such-model'], messages: USER })).status).toBe(404);
    expect(f.standins.openai.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(1);
    expect(f.standins.gemini.requests).toHaveLength(0);
    expect((await lastRows(1))[0]?.outcome).toBe('model_unavailable');
  });

  it('refuses an undeclared parameter and a request that cannot fit, before any upstream request', async () => {
    const undeclared = await infer({ model: CHAT.openai, messages: USER, parameters: { top_k: 3 } });
    expect(undeclared.status).toBe(400);
    expect(undeclared.body.error).toMatchObject({ code: 'parameter_invalid' });
    expect(undeclared.body.error.message).toContain('top_k');
    const over = await infer({ model: CHAT.openai, messages: USER, max_output_tokens: 40_000 });
    expect(over.status).toBe(400);
    expect(over.body.error.code).toBe('context_length_exceeded');
    expect(over.body.error.message).toMatch(/40000.*32768/);
    const long = await infer({ model: 'openai/text-embedding-3-small', workload: 'embeddings', input: 'word '.repeat(9000) });
    expect(long.status).toBe(400);
    expect(long.body.error.message).toMatch(/estimated at \d+ tokens.*8191/);
    expect(f.standins.openai.requests).toHaveLength(0);
    // Anthropic's wire must send max_tokens: with none set, it sends the model's output limit (64,000 here), so an
    // input that fits the 200,000-token window alone but not beside that budget is refused here, not upstream.
    const near = { model: CHAT.anthropic, messages: [{ role: 'user', content: 'word '.repeat(110_000) }] };
    const budget = await infer(near);
    expect(budget.status, budget.text).toBe(400);
    expect(budget.body.error.code).toBe('context_length_exceeded');
    expect(budget.body.error.message).toMatch(/max_output_tokens is 64000.*200000/);
    expect(f.standins.anthropic.requests).toHaveLength(0);
    const smaller = await infer({ ...near, max_output_tokens: 1000 });
    expect(smaller.status, smaller.text).toBe(200);
    expect((f.standins.anthropic.requests[0]?.json as { max_tokens?: number }).max_tokens).toBe(1000);
  });

  it('an upstream 429 moves the provider admission floor from retry-after, shown on the provider row', async () => {
    f.standins.openai.fail({ dialect: 'openai', status: 429, type: 'rate_limit_exceeded', headers: { 'retry-after': '120' } });
    const before = Date.now();
    const reply = await infer({ model: CHAT.openai, messages: USER });
    expect(reply.status, reply.text).toBe(429);
    expect(reply.body.error.code).toBe('rate_limited');
    expect(reply.headers.get('retry-after')).toBe('120');
    const row = await f.h.call('GET', P('openai'), { token: f.h.token });
    const until = Date.parse(row.body.model_provider.unavailable_until as string);
    expect(until).toBeGreaterThanOrEqual(before + 119_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 121_000);
    const next = await infer({ model: CHAT.openai, messages: USER });
    expect(next.status).toBe(409);
    expect(next.body.error.message).toContain('provider_unavailable');
    expect(f.standins.openai.requests).toHaveLength(1);
  });

  it("a provider's refusal of the request's content is the caller's 4xx; its own failure is a 502; each writes a failed row", async () => {
    f.standins.anthropic.fail(PROVIDER_ERRORS.anthropic.invalidRequest('messages.0.content.0.image.source: invalid base64 data'));
    const invalid = await infer({ model: CHAT.anthropic, messages: USER });
    expect(invalid.status, invalid.text).toBe(400);
    expect(invalid.body.error.code).toBe('parameter_invalid');
    expect(invalid.body.error.message).toContain('HTTP 400');
    expect(invalid.body.error.message).not.toContain('base64');
    expect((await lastRows(1))[0]?.outcome).toBe('failed');
    f.standins.anthropic.fail(PROVIDER_ERRORS.anthropic.requestTooLarge());
    expect((await infer({ model: CHAT.anthropic, messages: USER })).status).toBe(413);
    f.standins.anthropic.fail(PROVIDER_ERRORS.anthropic.overloaded());
    const overloaded = await infer({ model: CHAT.anthropic, messages: USER });
    expect(overloaded.status, overloaded.text).toBe(502);
    expect(overloaded.body.error.code).toBe('provider_error');
    expect((await lastRows(1))[0]?.outcome).toBe('failed');
  });

  it('a client leaving mid-stream aborts the upstream call and still records its usage', async () => {
    f.standins.openai.delay(3_000, { phase: 'body' });
    const controller = new AbortController();
    const response = await fetch(`${f.h.url}${PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.executor}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: CHAT.openai, messages: USER, stream: true }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const id = events(first)[0]?.data.request_id as string;
    controller.abort();
    let row: UsageRow | undefined;
    for (let i = 0; i < 50 && !row; i++) {
      await sleep(50);
      row = (await sql<UsageRow>`select * from inference_usage where id = ${id}`.execute(db())).rows[0];
    }
    expect(row).toMatchObject({ outcome: 'aborted', input_tokens: null });
    expect(Number(row?.duration_ms)).toBeLessThan(3_000);
  });

  it('a model hidden mid-stream finishes its stream', async () => {
    f.standins.openai.delay(400, { phase: 'body' });
    const pending = infer({ model: CHAT.openai, messages: USER, stream: true });
    await sleep(100);
    await command('openai', '/model_visibility', { model: CHAT.openai, visible: false });
    const reply = await pending;
    await command('openai', '/model_visibility', { model: CHAT.openai, visible: true });
    const list = events(reply.text);
    expect(list.at(-1)?.event).toBe('done');
    expect((await usageRow(list[0]?.data.request_id)).outcome).toBe('succeeded');
  });

  it('estimates the cost in the Account cost unit from the catalog prices, and leaves it absent when unknown', async () => {
    const unknownUnit = await infer({ model: CHAT.openai, messages: USER });
    expect(unknownUnit.body.cost).toBeNull();
    const set = await f.h.call('PUT', '/api/v1/admin/account/cost_unit', { token: f.h.token, body: { command: { cost_unit: 'USD' } } });
    expect(set.status, set.text).toBe(200);
    const reply = await infer({ model: CHAT.openai, messages: USER });
    const { input_tokens: input, output_tokens: output } = reply.body.usage as { input_tokens: number; output_tokens: number };
    // gpt-4.1: 2.00 USD per million input tokens, 8.00 per million output tokens.
    const micro = input * 2 + output * 8;
    expect(reply.body.cost).toEqual({ amount: `0.${String(micro).padStart(6, '0')}`.replace(/0+$/, ''), unit: 'USD' });
    expect(await usageRow(reply.body.request_id)).toMatchObject({ cost: reply.body.cost.amount, cost_unit: 'USD' });
  });

  it('a call the provider refused costs nothing; a stream cut short keeps the usage reported before the cut', async () => {
    const set = await f.h.call('PUT', '/api/v1/admin/account/cost_unit', { token: f.h.token, body: { command: { cost_unit: 'USD' } } });
    expect(set.status, set.text).toBe(200);
    f.standins.anthropic.fail(PROVIDER_ERRORS.anthropic.overloaded());
    expect((await infer({ model: CHAT.anthropic, messages: USER })).status).toBe(502);
    expect((await lastRows(1))[0]).toMatchObject({ outcome: 'failed', cost: '0', cost_unit: 'USD', input_tokens: null });
    // Anthropic reports the input tokens in message_start and the output so far in message_delta; the connection
    // breaks before message_stop.
    const sse = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const body = Buffer.from(
      sse('message_start', {
        message: {
          id: 'msg_cut',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5-20250929',
          content: [],
          usage: { input_tokens: 1000, output_tokens: 1 },
        },
      }) +
        sse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
        sse('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hel' } }) +
        sse('message_delta', { delta: { stop_reason: null }, usage: { output_tokens: 500 } }),
    );
    f.standins.anthropic.respond({
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body,
      chunked: true,
      truncateAt: body.length,
    });
    const cut = await infer({ model: CHAT.anthropic, messages: USER, stream: true });
    expect(cut.status).toBe(200);
    const row = (await lastRows(1))[0];
    expect(row).toMatchObject({ outcome: 'failed', cost_unit: 'USD' });
    expect(Number(row?.input_tokens)).toBe(1000);
    expect(Number(row?.output_tokens)).toBe(500);
    // claude-sonnet-4-5: 3.00 USD per million input tokens, 15.00 per million output tokens.
    expect(row?.cost).toBe('0.0105');
  });

  it('refuses platform tokens and sessions (401); executor tokens are accepted', async () => {
    expect((await infer({ model: CHAT.openai, messages: USER }, member.platform)).status).toBe(401);
    expect((await infer({ model: CHAT.openai, messages: USER }, member.session)).status).toBe(401);
    expect((await infer({ model: CHAT.openai, messages: USER }, f.h.token)).status).toBe(401);
    expect((await infer({ model: CHAT.openai, messages: USER }, member.executor)).status).toBe(200);
  });
});
