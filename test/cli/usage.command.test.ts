/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- --json output and response bodies are untyped JSON; the assertions pin their shape */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import type { AdminTables } from '../../src/admin/admin.table.ts';
import { insertUsage } from '../../src/admin/inference/usage.store.ts';
import { narrowTables } from '../../src/core/db/database.ts';
import { openHarness, type Harness } from '../admin/admin-harness.ts';
import { runCli } from '../support/cli.ts';
import { dialects } from '../support/databases.ts';

/** `platform usage` (issue 16 item 6) on the database the REST harness uses: the table, `--json`, filters, errors. */
describe.each(dialects)('platform usage on %s', (dialect) => {
  let h: Harness;
  let env: Record<string, string>;
  const range = ['--from', '2025-06-01T00:00:00Z', '--to', '2025-06-03T00:00:00Z'];

  beforeAll(async () => {
    h = await openHarness(dialect);
    env = {
      DATABASE_URL: h.platform.database.url,
      PLATFORM_DATA_DIR: mkdtempSync(join(tmpdir(), 'platform-cli-')),
      PLATFORM_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
      LOG_LEVEL: 'error',
    };
    expect(
      (await h.call('PUT', '/api/v1/admin/account/cost_unit', { token: h.token, body: { command: { cost_unit: 'USD' } } })).status,
    ).toBe(200);
    const db: Kysely<AdminTables> = narrowTables(h.platform.ctx.database.db);
    const rows: [string, string, string, string][] = [
      // started_at, model, human, cost
      ['2025-06-01T08:00:00Z', 'openai/gpt-4.1', 'human-a', '0.1'],
      ['2025-06-01T09:00:00Z', 'openai/gpt-4.1', 'human-b', '0.2'],
      ['2025-06-02T10:00:00Z', 'anthropic/claude-sonnet-4-5', 'human-a', '1.25'],
    ];
    for (const [started, model, human, cost] of rows)
      await insertUsage(db, {
        id: randomUUID(),
        accountId: h.accountId,
        humanId: human,
        credentialId: 'credential-1',
        model,
        modelIdentity: null,
        workload: 'text_generation',
        inputTokens: 100,
        outputTokens: 20,
        cachedInputTokens: 10,
        cost: { amount: cost, unit: 'USD' },
        startedAt: Date.parse(started),
        durationMs: 5,
        outcome: 'succeeded',
        streamed: false,
      });
  });
  afterAll(async () => h.close());

  const cli = (...argv: string[]) => runCli(argv, env);

  it('prints one line per UTC day and model and the totals', async () => {
    const run = await cli('usage', '--account', h.accountId, ...range);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`Usage of Account ${h.accountId} from 2025-06-01T00:00:00.000Z to 2025-06-03T00:00:00.000Z (cost unit: USD):`);
    expect(lines[1]).toMatch(/^DAY\s+MODEL\s+REQUESTS\s+FAILED\s+INPUT\s+OUTPUT\s+CACHED\s+COST$/);
    expect(lines[2]?.split(/\s+/)).toEqual(['2025-06-01', 'openai/gpt-4.1', '2', '0', '200', '40', '20', '0.3']);
    expect(lines[3]?.split(/\s+/)).toEqual(['2025-06-02', 'anthropic/claude-sonnet-4-5', '1', '0', '100', '20', '10', '1.25']);
    expect(lines[4]).toBe('Total: 3 requests, 300 input tokens (30 cached), 60 output tokens, cost 1.55 USD.');
  });

  it('prints with --json what GET /api/v1/admin/usage answers, and applies --model and --human', async () => {
    const run = await cli('usage', '--account', h.accountId, ...range, '--json');
    expect(run.code, run.stderr).toBe(0);
    const http = await h.call('GET', '/api/v1/admin/usage?from=2025-06-01T00:00:00Z&to=2025-06-03T00:00:00Z', { token: h.token });
    expect(JSON.parse(run.stdout)).toEqual(http.body);

    const byModel = JSON.parse((await cli('usage', '--account', h.accountId, ...range, '--model', 'openai/gpt-4.1', '--json')).stdout);
    expect(byModel.usage.totals).toMatchObject({ requests: 2, cost: '0.3' });
    const byHuman = JSON.parse((await cli('usage', '--account', h.accountId, ...range, '--human', 'human-a', '--json')).stdout);
    expect(byHuman.usage.totals).toMatchObject({ requests: 2, cost: '1.35' });
  });

  it('says so when the range is empty', async () => {
    const run = await cli('usage', '--account', h.accountId, '--from', '2020-01-01T00:00:00Z', '--to', '2020-01-02T00:00:00Z');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('no inference requests in this range');
    expect(run.stdout).toContain('Total: 0 requests');
  });

  it('refuses a bad timestamp or range (exit 2) and an unknown Account (exit 1)', async () => {
    const bad = await cli('usage', '--account', h.accountId, '--from', 'last week');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/from: expected an ISO-8601 timestamp/);
    const reversed = await cli('usage', '--account', h.accountId, '--from', '2025-06-03T00:00:00Z', '--to', '2025-06-01T00:00:00Z');
    expect(reversed.code).toBe(2);
    expect(reversed.stderr).toMatch(/to: must not be before from/);
    const unknown = await cli('usage', '--account', 'no-such-account');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no Account with id no-such-account/);
  });
});
