/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return -- response bodies are untyped JSON (Reply.body); the assertions pin their shape */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFLICT_EXIT_CODE } from '../../src/admin/models.commands.ts';
import type { CliIo } from '../../src/core/cli-io.ts';
import { main } from '../../src/cli/main.ts';
import { dialects } from '../support/databases.ts';
import { openHarness, P, TEST_CATALOG, writeCatalog, type Harness } from './admin-harness.ts';

describe.each(dialects)('platform models … on %s', (dialect) => {
  let h: Harness;
  let env: Record<string, string>;
  beforeAll(async () => {
    const catalog = writeCatalog(TEST_CATALOG);
    h = await openHarness(dialect, { catalog });
    env = {
      DATABASE_URL: h.platform.database.url,
      PLATFORM_DATA_DIR: catalog,
      PLATFORM_CATALOG_DIR: catalog,
      PLATFORM_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    };
  });
  afterAll(async () => h.close());

  async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = { env, out: (t) => out.push(t), err: (t) => err.push(t) };
    const code = await main(argv, io);
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  async function row(ref: string) {
    const models = (await h.call('GET', '/api/v1/admin/models', { token: h.token })).body.models;
    return models.find((m: { ref: string }) => m.ref === ref);
  }

  it('[ADM-CLI-1] [ADM-READ-2] hides and unhides a model whose upstream id contains "/", reading the version first', async () => {
    const account = h.accountId;
    const hidden = await cli('models', 'hide', '--account', account, 'alpha/org/a-3', '--json');
    expect(hidden.code, hidden.err).toBe(0);
    expect(JSON.parse(hidden.out)).toMatchObject({
      model: 'alpha/org/a-3',
      action: 'hide',
      model_provider: { id: 'alpha', enabled: false, lock_version: 0 },
    });
    expect((await row('alpha/org/a-3')).visible).toBe(false);
    // Another administrator moves the version on; the CLI reads it and still applies its change.
    await h.call('PUT', P('alpha', '/lane'), { token: h.token, body: { command: { enabled: true, expected_lock_version: 0 } } });
    const shown = await cli('models', 'unhide', '--account', account, 'alpha/org/a-3');
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toBe('Model alpha/org/a-3 shown; provider alpha is at lock_version 2.');
    expect((await row('alpha/org/a-3')).visible).toBe(true);
  });

  it('[ADM-CLI-1] invalidates and restores, keeping a manual hide', async () => {
    const account = h.accountId;
    expect((await cli('models', 'hide', '--account', account, 'alpha/a-2')).code).toBe(0);
    expect((await cli('models', 'invalidate', '--account', account, 'alpha/a-2')).code).toBe(0);
    expect(await row('alpha/a-2')).toMatchObject({ visible: false, unavailable_reason: 'model_unavailable' });
    const restored = await cli('models', 'restore', '--account', account, 'alpha/a-2');
    expect(restored.out).toMatch(/^Model alpha\/a-2 restored/);
    expect(await row('alpha/a-2')).toMatchObject({ visible: false, unavailable_reason: 'model_hidden' });
  });

  it('[ADM-CLI-1] [ADM-LOCK-2] reports a conflict with exit code 3 and changes nothing (no retry)', async () => {
    const account = h.accountId;
    const current = (await h.call('GET', P('alpha'), { token: h.token })).body.model_provider.lock_version as number;
    const conflict = await cli('models', 'hide', '--account', account, 'alpha/a-1', '--expected-lock-version', String(current - 1));
    expect(conflict.code).toBe(CONFLICT_EXIT_CODE);
    expect(conflict.err).toMatch(/^error: conflict: the policy of provider alpha is no longer at lock_version \d+/);
    expect((await h.call('GET', P('alpha'), { token: h.token })).body.model_provider.lock_version).toBe(current);
    expect((await row('alpha/a-1')).visible).toBe(true);
  });

  it('[ADM-LIM-2] [ADM-CLI-1] regression: unhides a model that left the catalog after it was hidden (the stale ref would otherwise stay forever)', async () => {
    const owner = await h.platform.ctx.identity.bootstrap({
      accountName: 'CLI stale',
      email: `stale-${Math.random().toString(36).slice(2)}@example.test`,
    });
    const account = owner.account_id;
    expect((await cli('models', 'hide', '--account', account, 'alpha/a-2')).code).toBe(0);
    // The deployment drops alpha/a-2 from its catalog; each CLI run loads the catalog afresh.
    const smaller = writeCatalog({
      ...TEST_CATALOG,
      'alpha.yaml': (TEST_CATALOG['alpha.yaml'] ?? '').replace(/\n {6}a-2:\n {8}inherit: chat/, ''),
    });
    const withSmaller = async (...argv: string[]) => {
      const saved = env;
      env = { ...env, PLATFORM_CATALOG_DIR: smaller };
      try {
        return await cli(...argv);
      } finally {
        env = saved;
      }
    };
    expect(await withSmaller('models', 'hide', '--account', account, 'alpha/a-1')).toMatchObject({ code: 0 });
    // Hiding needs a live model; showing may clear what the policy still lists.
    expect(await withSmaller('models', 'hide', '--account', account, 'alpha/a-2')).toMatchObject({
      code: 1,
      err: 'error: unknown model alpha/a-2',
    });
    const shown = await withSmaller('models', 'unhide', '--account', account, 'alpha/a-2', '--json');
    expect(shown.code, shown.err).toBe(0);
    expect(JSON.parse(shown.out).model_provider.lock_version).toBe(2);
    const models = (await h.call('GET', '/api/v1/admin/models', { token: owner.platform_token })).body.models;
    expect(models.find((m: { ref: string }) => m.ref === 'alpha/a-2')).toMatchObject({ visible: true });
  });

  it('[ADM-CLI-1] refuses bad references, unknown accounts, providers and models with one-line errors', async () => {
    const account = h.accountId;
    expect(await cli('models', 'hide', '--account', account, 'no-slash')).toMatchObject({ code: 2 });
    expect(await cli('models', 'hide', '--account', 'nope', 'alpha/a-1')).toMatchObject({ code: 1, err: 'error: no Account with id nope' });
    expect(await cli('models', 'hide', '--account', account, 'ghost/x')).toMatchObject({
      code: 1,
      err: 'error: unknown model provider ghost',
    });
    expect(await cli('models', 'hide', '--account', account, 'alpha/ghost')).toMatchObject({
      code: 1,
      err: 'error: unknown model alpha/ghost',
    });
    // invalidate needs a policy: the local provider has none yet.
    expect(await cli('models', 'invalidate', '--account', account, 'local/l-1')).toMatchObject({
      code: 1,
      err: expect.stringMatching(/has no policy/),
    });
    expect(await cli('models', 'hide', '--account', account, 'alpha/a-1', '--expected-lock-version', '-1')).toMatchObject({ code: 2 });
  });
});
