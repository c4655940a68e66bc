/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- --json output and response bodies are untyped JSON; the assertions pin their shape */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from '../../src/admin/policy/policy.document.ts';
import { findPolicy } from '../../src/admin/policy/policy.store.ts';
import { CONFLICT_EXIT_CODE } from '../../src/admin/models.commands.ts';
import { narrowTables } from '../../src/core/db/database.ts';
import type { AdminTables } from '../../src/admin/admin.table.ts';
import { P } from '../admin/admin-harness.ts';
import { openProviderStandins, STANDIN_KEYS, type ProviderStandins } from '../admin/provider-standins.ts';
import { runCli } from '../support/cli.ts';
import { dialects } from '../support/databases.ts';
import { PROVIDER_ERRORS } from '../support/upstream/index.ts';

/**
 * `platform providers discover` and `platform models test` (issue 15 item 4) against the provider stand-ins, through
 * the same database the REST harness uses: human output, `--json`, exit codes 0 / 1 / 3, and nothing changed on a
 * conflict.
 */
describe.each(dialects)('platform providers discover and models test on %s', (dialect) => {
  let fx: ProviderStandins;
  let env: Record<string, string>;
  let account: string;

  beforeAll(async () => {
    fx = await openProviderStandins(dialect);
    account = fx.h.accountId;
    env = {
      DATABASE_URL: fx.h.platform.database.url,
      PLATFORM_DATA_DIR: mkdtempSync(join(tmpdir(), 'platform-cli-')),
      PLATFORM_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
      // PostgreSQL refuses private upstreams unless told otherwise; the stand-ins listen on loopback.
      PLATFORM_UPSTREAM_ALLOW_PRIVATE: 'true',
      // Each command opens its own context, whose logger writes to the test runner's stderr.
      LOG_LEVEL: 'error',
    };
  });
  afterEach(() => {
    for (const s of Object.values(fx.standins)) s.reset();
  });
  afterAll(async () => fx.close());

  async function policy(providerId: string) {
    const db: Kysely<AdminTables> = narrowTables(fx.h.platform.ctx.database.db);
    return findPolicy(db, { accountId: account, providerId });
  }

  const cli = (...argv: string[]) => runCli(argv, env);

  async function adminRow(ref: string) {
    const rows = (await fx.h.call('GET', '/api/v1/admin/models', { token: fx.h.token })).body.models as {
      ref: string;
      available: boolean;
      unavailable_reason: string | null;
    }[];
    return rows.find((r) => r.ref === ref);
  }

  describe('providers discover', () => {
    it('prints the directory read at the current version (exit 0) and sends one request with the saved key', async () => {
      const version = await fx.version('openai');
      const run = await cli('providers', 'discover', '--account', account, 'openai');
      expect(run.code, run.stderr).toBe(0);
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines[0]).toBe(`Provider openai lists 10 models (read at lock_version ${version}):`);
      expect(lines).toContain('  gpt-4o-2024-11-20');
      expect(fx.standins.openai.requests).toHaveLength(1);
      expect(fx.standins.openai.requests[0]?.headers.authorization).toBe(`Bearer ${STANDIN_KEYS.openai}`);
      // A directory listing every configured model changes nothing.
      expect(await fx.version('openai')).toBe(version);
      expect(run.stdout + run.stderr).not.toContain(STANDIN_KEYS.openai);
    });

    it('prints {models} with --json, display names included', async () => {
      const run = await cli('providers', 'discover', '--account', account, 'anthropic', '--json');
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({
        models: [
          { id: 'claude-opus-4-1-20250805', display_name: 'Claude Opus 4.1' },
          { id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5' },
          { id: 'claude-haiku-4-5-20251001', display_name: 'Claude Haiku 4.5' },
          { id: 'claude-3-5-haiku-20241022', display_name: 'Claude Haiku 3.5' },
        ],
      });
      const human = await cli('providers', 'discover', '--account', account, 'anthropic');
      expect(human.stdout).toContain('  claude-opus-4-1-20250805  Claude Opus 4.1\n');
    });

    it('writes the marks a directory calls for, bumping the version once, and clears them on the next complete read', async () => {
      const version = (await fx.version('openai')) ?? NaN;
      fx.standins.openai.setModels([{ id: 'gpt-4.1' }, { id: 'gpt-5' }]);
      const marking = await cli('providers', 'discover', '--account', account, 'openai');
      expect(marking.code, marking.stderr).toBe(0);
      expect(marking.stdout).toContain(`lists 2 models (read at lock_version ${version})`);
      expect(await fx.version('openai')).toBe(version + 1);
      expect(await adminRow('openai/gpt-4o')).toMatchObject({ available: false, unavailable_reason: 'model_unavailable' });

      fx.standins.openai.reset();
      expect((await cli('providers', 'discover', '--account', account, 'openai')).code).toBe(0);
      expect(await fx.version('openai')).toBe(version + 2);
      expect(await adminRow('openai/gpt-4o')).toMatchObject({ available: true, unavailable_reason: null });
    });

    it('reports a conflict for a wrong --expected-lock-version (exit 3) without a request or a change', async () => {
      const version = (await fx.version('openai')) ?? NaN;
      const before = await policy('openai');
      fx.standins.openai.setModels([]);
      const run = await cli('providers', 'discover', '--account', account, '--expected-lock-version', String(version + 5), 'openai');
      expect(run.code).toBe(CONFLICT_EXIT_CODE);
      expect(run.stderr).toContain(`conflict: the policy of provider openai is no longer at lock_version ${version + 5}`);
      expect(run.stdout).toBe('');
      expect(fx.standins.openai.requests).toEqual([]);
      expect(await policy('openai')).toEqual(before);
    });

    it('fails (exit 1) with the cause when the directory fails, and changes nothing', async () => {
      const before = await policy('google');
      fx.standins.gemini.fail(PROVIDER_ERRORS.gemini.internal(), 'always');
      const run = await cli('providers', 'discover', '--account', account, 'google');
      expect(run.code).toBe(1);
      expect(run.stderr).toBe('error: model discovery failed: the directory answered HTTP 500; nothing was changed\n');
      expect(fx.standins.gemini.requests).toHaveLength(1);
      expect(await policy('google')).toEqual(before);
    });
  });

  describe('models test', () => {
    it('prints a succeeded probe (exit 0) after one request with the saved key and the 16-token budget', async () => {
      const version = await fx.version('openai');
      const run = await cli('models', 'test', '--account', account, 'openai/gpt-4.1');
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(
        new RegExp(
          `^Model openai/gpt-4\\.1: succeeded \\(HTTP 200\\) in \\d+ ms; availability noop; provider openai is at lock_version ${version}\\.\\n$`,
        ),
      );
      const [request, ...more] = fx.standins.openai.requests;
      expect(more).toEqual([]);
      expect(request).toMatchObject({ method: 'POST', path: '/v1/chat/completions', json: { model: 'gpt-4.1', max_tokens: 16 } });
      expect(request?.headers.authorization).toBe(`Bearer ${STANDIN_KEYS.openai}`);
      expect(run.stdout + run.stderr).not.toContain(STANDIN_KEYS.openai);
    });

    it('clears an invalid mark on success and prints {model_test, model_provider} with --json', async () => {
      const version = (await fx.version('google')) ?? NaN;
      const marked = await fx.h.call('PUT', P('google', '/model_availability'), {
        token: fx.h.token,
        body: { command: { model: 'google/gemini-2.5-flash', available: false, expected_lock_version: version } },
      });
      expect(marked.status, marked.text).toBe(200);
      const run = await cli('models', 'test', '--account', account, 'google/gemini-2.5-flash', '--json');
      expect(run.code, run.stderr).toBe(0);
      const result = JSON.parse(run.stdout);
      expect(result.model_test).toEqual({
        outcome: 'succeeded',
        duration_ms: expect.any(Number),
        http_status: 200,
        availability_update: 'applied',
      });
      expect(result.model_provider).toMatchObject({ id: 'google', lock_version: version + 2, enabled: true });
      expect(fx.standins.gemini.requests.map((r) => r.path)).toEqual(['/v1beta/models/gemini-2.5-flash:generateContent']);
      expect(fx.standins.gemini.requests[0]?.headers['x-goog-api-key']).toBe(STANDIN_KEYS.gemini);
      expect(parseDocument((await policy('google'))?.document ?? '').invalid_models).toEqual([]);
    });

    it('exits 1 when the outcome is not succeeded, after one request and no retry', async () => {
      const version = await fx.version('anthropic');
      fx.standins.anthropic.fail(PROVIDER_ERRORS.anthropic.rateLimited(), 'always');
      const run = await cli('models', 'test', '--account', account, 'anthropic/claude-haiku-4-5');
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/^Model anthropic\/claude-haiku-4-5: rate_limited \(HTTP 429\) in \d+ ms; availability unchanged;/);
      expect(run.stderr).toBe('error: the model test did not succeed: rate_limited\n');
      expect(fx.standins.anthropic.requests).toHaveLength(1);
      expect(await fx.version('anthropic')).toBe(version);
    });

    it('exits 1 and marks the model invalid when the upstream says the model does not exist', async () => {
      const version = (await fx.version('openai')) ?? NaN;
      fx.standins.openai.fail(PROVIDER_ERRORS.openai.modelNotExist('gpt-4o-2024-11-20'));
      const run = await cli('models', 'test', '--account', account, 'openai/gpt-4o', '--json');
      expect(run.code).toBe(1);
      expect(JSON.parse(run.stdout).model_test).toMatchObject({
        outcome: 'model_not_found',
        http_status: 404,
        availability_update: 'applied',
      });
      expect(fx.standins.openai.requests[0]?.json).toMatchObject({ model: 'gpt-4o-2024-11-20' });
      expect(await fx.version('openai')).toBe(version + 1);
      expect(await adminRow('openai/gpt-4o')).toMatchObject({ available: false, unavailable_reason: 'model_unavailable' });
      // A succeeded test clears it again.
      expect((await cli('models', 'test', '--account', account, 'openai/gpt-4o')).code).toBe(0);
      expect(await adminRow('openai/gpt-4o')).toMatchObject({ available: true });
    });

    it('reports a stale availability write (exit 3) for a wrong --expected-lock-version and changes nothing', async () => {
      const version = (await fx.version('openai')) ?? NaN;
      const marked = await fx.h.call('PUT', P('openai', '/model_availability'), {
        token: fx.h.token,
        body: { command: { model: 'openai/gpt-4.1-mini', available: false, expected_lock_version: version } },
      });
      expect(marked.status, marked.text).toBe(200);
      const before = await policy('openai');
      const run = await cli(
        'models',
        'test',
        '--account',
        account,
        '--expected-lock-version',
        String(version),
        'openai/gpt-4.1-mini',
        '--json',
      );
      expect(run.code).toBe(CONFLICT_EXIT_CODE);
      expect(JSON.parse(run.stdout).model_test).toMatchObject({ outcome: 'succeeded', availability_update: 'stale' });
      expect(run.stderr).toBe('error: conflict: another change won while the test ran; its availability result was not saved.\n');
      expect(fx.standins.openai.requests).toHaveLength(1);
      expect(await policy('openai')).toEqual(before);
      expect(await adminRow('openai/gpt-4.1-mini')).toMatchObject({ available: false, unavailable_reason: 'model_unavailable' });
    });

    it('refuses an unknown model (exit 1) before any request', async () => {
      const run = await cli('models', 'test', '--account', account, 'openai/no-such-model');
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('provider openai has no model with this reference');
      expect(fx.standins.openai.requests).toEqual([]);
    });
  });
});
