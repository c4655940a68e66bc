/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- response bodies are untyped JSON; the assertions pin their shape */
// GET /api/v1/admin/usage (issue 16 item 6) on SQLite and PostgreSQL: rows written by real inference calls against
// the provider stand-ins, and rows inserted directly at day boundaries and with costs whose float sum would be wrong.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertUsage, type UsageRecord } from '../../src/admin/inference/usage.store.ts';
import { narrowTables } from '../../src/core/db/database.ts';
import { dialects } from '../support/databases.ts';
import { addHuman, P, type Reply } from './admin-harness.ts';
import { openProviderStandins, type ProviderStandins } from './provider-standins.ts';

const USAGE = '/api/v1/admin/usage';
const INFER = '/agent_api/v1/inference_requests';
const GPT = 'openai/gpt-4.1';
const CLAUDE = 'anthropic/claude-sonnet-4-5';
const USER = [{ role: 'user', content: 'Say ok.' }];

/** Directly inserted rows live in March 2025, far from the real calls (now), so a range isolates them. */
const at = (iso: string) => Date.parse(iso);

/** Exact decimal sum of `amounts`, for the expected figures (the test's own arithmetic, independent of the route). */
function decimalSum(amounts: string[]): string {
  const scale = 18;
  const total = amounts.reduce((sum, a) => {
    const [whole = '0', fraction = ''] = a.split('.');
    return sum + BigInt(whole + fraction.padEnd(scale, '0'));
  }, 0n);
  const text = total.toString().padStart(scale + 1, '0');
  const fraction = text.slice(-scale).replace(/0+$/, '');
  return fraction === '' ? text.slice(0, -scale) : `${text.slice(0, -scale)}.${fraction}`;
}

/** What the tests read of an inference answer (JSON, or the streamed `done` event). */
interface Answer {
  usage: { input_tokens: number; output_tokens: number; cached_input_tokens?: number };
  cost: { amount: string };
}

describe.each(dialects)('GET /api/v1/admin/usage on %s', (dialect) => {
  let f: ProviderStandins;
  let member: Awaited<ReturnType<typeof addHuman>>;
  let admin: Awaited<ReturnType<typeof addHuman>>;
  beforeAll(async () => {
    f = await openProviderStandins(dialect, { standin: { reply: 'OK' } });
    member = await addHuman(f.h, 'member');
    admin = await addHuman(f.h, 'admin');
    const set = await f.h.call('PUT', '/api/v1/admin/account/cost_unit', { token: f.h.token, body: { command: { cost_unit: 'USD' } } });
    expect(set.status, set.text).toBe(200);
  });
  afterAll(async () => f.close());

  const usage = (query: Record<string, string> = {}, token = f.h.token): Promise<Reply> =>
    f.h.call('GET', `${USAGE}?${new URLSearchParams(query).toString()}`, { token });

  async function insert(row: Partial<UsageRecord> & { startedAt: number }): Promise<void> {
    await insertUsage(narrowTables(f.h.platform.ctx.database.db), {
      id: randomUUID(),
      accountId: f.h.accountId,
      humanId: member.humanId,
      credentialId: 'credential-1',
      model: GPT,
      modelIdentity: null,
      workload: 'text_generation',
      inputTokens: 10,
      outputTokens: 5,
      cachedInputTokens: 0,
      cost: null,
      durationMs: 12,
      outcome: 'succeeded',
      streamed: false,
      ...row,
    });
  }

  it('counts real inference calls per day and model with their exact cost; model tests are not counted', async () => {
    const before = new Date().toISOString();
    const replies = [
      await f.h.call('POST', INFER, { token: member.member, body: { model: GPT, messages: USER } }),
      await f.h.call('POST', INFER, { token: member.member, body: { model: GPT, messages: USER, stream: true } }),
      await f.h.call('POST', INFER, { token: member.executor, body: { model: CLAUDE, messages: USER } }),
    ];
    for (const r of replies) expect(r.status, r.text).toBe(200);
    const probe = await f.h.call('POST', P('openai', '/model_test'), {
      token: f.h.token,
      body: { command: { model: GPT, expected_lock_version: await f.version('openai') } },
    });
    expect(probe.body.model_test?.outcome, probe.text).toBe('succeeded');

    const read = await usage({ from: before });
    expect(read.status, read.text).toBe(200);
    const { rows } = { rows: read.body.usage.by_day_and_model as Record<string, unknown>[] };
    const [plain, streamed, claude] = replies;
    // The streamed answer carries its usage and cost in the last event; the stored row is the same figure.
    const streamedDone = JSON.parse(
      streamed?.text
        .split('\n\n')
        .filter((b) => b.includes('event: done'))[0]
        ?.split('\n')
        .find((l) => l.startsWith('data: '))
        ?.slice(6) ?? 'null',
    );
    const gpt = [plain?.body, streamedDone] as Answer[];
    const day = new Date().toISOString().slice(0, 10);
    expect(rows).toEqual([
      {
        day,
        model: CLAUDE,
        requests: 1,
        failed: 0,
        input_tokens: claude?.body.usage.input_tokens,
        output_tokens: claude?.body.usage.output_tokens,
        cached_input_tokens: claude?.body.usage.cached_input_tokens ?? 0,
        cost: claude?.body.cost.amount,
      },
      {
        day,
        model: GPT,
        requests: 2,
        failed: 0,
        input_tokens: gpt.reduce((n, b) => n + b.usage.input_tokens, 0),
        output_tokens: gpt.reduce((n, b) => n + b.usage.output_tokens, 0),
        cached_input_tokens: gpt.reduce((n, b) => n + (b.usage.cached_input_tokens ?? 0), 0),
        cost: decimalSum(gpt.map((b) => b.cost.amount)),
      },
    ]);
    expect(read.body.usage.cost_unit).toBe('USD');
    expect(read.body.usage.totals).toMatchObject({
      requests: 3,
      cost: decimalSum([(claude?.body as Answer).cost.amount, ...gpt.map((b) => b.cost.amount)]),
    });
  });

  it('groups by UTC day at the exact boundary, sums decimal costs exactly, and reads [from, to)', async () => {
    await insert({ startedAt: at('2025-03-01T00:00:00.000Z'), cost: { amount: '0.1', unit: 'USD' } });
    await insert({ startedAt: at('2025-03-01T23:59:59.999Z'), cost: { amount: '0.2', unit: 'USD' } });
    await insert({ startedAt: at('2025-03-02T00:00:00.000Z'), cost: { amount: '0.000000000000000001', unit: 'USD' } });
    await insert({ startedAt: at('2025-03-02T12:00:00.000Z'), cost: { amount: '12345678901.999999999999999999', unit: 'USD' } });
    // Exactly at `to`: outside the range.
    await insert({ startedAt: at('2025-03-03T00:00:00.000Z'), cost: { amount: '7', unit: 'USD' } });
    const read = await usage({ from: '2025-03-01T00:00:00Z', to: '2025-03-03T00:00:00Z' });
    expect(read.status, read.text).toBe(200);
    expect(read.body.usage).toEqual({
      from: '2025-03-01T00:00:00.000Z',
      to: '2025-03-03T00:00:00.000Z',
      cost_unit: 'USD',
      totals: { requests: 4, input_tokens: 40, output_tokens: 20, cached_input_tokens: 0, cost: '12345678902.3' },
      by_day_and_model: [
        { day: '2025-03-01', model: GPT, requests: 2, failed: 0, input_tokens: 20, output_tokens: 10, cached_input_tokens: 0, cost: '0.3' },
        {
          day: '2025-03-02',
          model: GPT,
          requests: 2,
          failed: 0,
          input_tokens: 20,
          output_tokens: 10,
          cached_input_tokens: 0,
          cost: '12345678902',
        },
      ],
    });
    // The float sum would say 0.30000000000000004.
    expect(0.1 + 0.2).not.toBe(0.3);
  });

  it('leaves a cost unknown when a call that reached the provider has none; refusals add nothing but count as failed', async () => {
    const day = { from: '2025-04-01T00:00:00Z', to: '2025-04-02T00:00:00Z' };
    await insert({ startedAt: at('2025-04-01T01:00:00Z'), model: CLAUDE, cost: { amount: '1.5', unit: 'USD' } });
    await insert({ startedAt: at('2025-04-01T02:00:00Z'), model: CLAUDE, inputTokens: null, outputTokens: null, outcome: 'not_found' });
    await insert({ startedAt: at('2025-04-01T03:00:00Z'), model: GPT, cost: { amount: '2', unit: 'USD' } });
    await insert({ startedAt: at('2025-04-01T04:00:00Z'), model: GPT, outcome: 'aborted' });
    const read = await usage(day);
    expect(read.status, read.text).toBe(200);
    const rows = read.body.usage.by_day_and_model;
    expect(rows).toMatchObject([
      { model: CLAUDE, requests: 2, failed: 1, input_tokens: 10, cost: '1.5' },
      { model: GPT, requests: 2, failed: 1, input_tokens: 20, cost: null },
    ]);
    expect(read.body.usage.totals).toMatchObject({ requests: 4, cost: null });
  });

  it('filters by model and Human, and never shows another Account', async () => {
    const range = { from: '2025-05-01T00:00:00Z', to: '2025-05-02T00:00:00Z' };
    await insert({ startedAt: at('2025-05-01T01:00:00Z'), model: GPT, cost: { amount: '1', unit: 'USD' } });
    await insert({ startedAt: at('2025-05-01T02:00:00Z'), model: CLAUDE, humanId: admin.humanId, cost: { amount: '2', unit: 'USD' } });
    await insert({ startedAt: at('2025-05-01T03:00:00Z'), model: GPT, accountId: 'another-account', cost: { amount: '40', unit: 'USD' } });
    expect((await usage(range)).body.usage.totals).toMatchObject({ requests: 2, cost: '3' });
    const byModel = await usage({ ...range, model: GPT });
    expect(byModel.body.usage.by_day_and_model).toMatchObject([{ model: GPT, requests: 1, cost: '1' }]);
    const byHuman = await usage({ ...range, human_id: admin.humanId });
    expect(byHuman.body.usage.by_day_and_model).toMatchObject([{ model: CLAUDE, requests: 1, cost: '2' }]);
    const nobody = await usage({ ...range, human_id: 'no-such-human' });
    expect(nobody.body.usage).toMatchObject({ totals: { requests: 0, cost: '0' }, by_day_and_model: [] });
  });

  it('reads the last 30 days by default and refuses a malformed, reversed or too long range (400 naming the field)', async () => {
    const read = await usage();
    expect(read.status).toBe(200);
    const { from, to } = read.body.usage as { from: string; to: string };
    expect(Date.parse(to) - Date.parse(from)).toBe(30 * 86_400_000);
    expect(Math.abs(Date.parse(to) - Date.now())).toBeLessThan(60_000);
    expect(read.body.usage.totals.requests).toBeGreaterThanOrEqual(3);

    const cases: [Record<string, string>, RegExp][] = [
      [{ from: 'yesterday' }, /from/],
      [{ to: '2025-03-01' }, /to/],
      [{ from: '2025-03-02T00:00:00Z', to: '2025-03-01T00:00:00Z' }, /to: must not be before from/],
      [{ from: '2024-01-01T00:00:00Z', to: '2025-01-02T00:00:00Z' }, /366 days/],
    ];
    for (const [query, message] of cases) {
      const r = await usage(query);
      expect(r.status, JSON.stringify(query)).toBe(400);
      expect(r.body.error.code).toBe('parameter_invalid');
      expect(r.body.error.message).toMatch(message);
    }
    // 366 days exactly is allowed.
    expect((await usage({ from: '2024-01-01T00:00:00Z', to: '2025-01-01T00:00:00Z' })).status).toBe(200);
  });

  it('is for owners and admins: member-plane tokens 401, a member session 403, an admin 200', async () => {
    expect((await usage({}, member.member)).status).toBe(401);
    expect((await usage({}, member.executor)).status).toBe(401);
    const session = await f.h.call('GET', USAGE, { cookie: member.session });
    expect(session.status).toBe(403);
    expect(session.body.error.code).toBe('administrator_required');
    expect((await usage({}, admin.platform)).status).toBe(200);
    expect((await f.h.call('GET', USAGE, { cookie: admin.session })).status).toBe(200);
  });
});
