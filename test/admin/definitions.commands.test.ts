/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call -- response bodies and --json output are untyped JSON; the assertions pin their shape */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFLICT_EXIT_CODE } from '../../src/admin/models.commands.ts';
import type { CliIo } from '../../src/core/cli-io.ts';
import { main } from '../../src/cli/main.ts';
import { dialects } from '../support/databases.ts';
import { openHarness, P, TEST_CATALOG, writeCatalog, type Harness } from './admin-harness.ts';

describe.each(dialects)('platform providers|models definition commands on %s', (dialect) => {
  let h: Harness;
  let env: Record<string, string>;
  let dir: string;
  beforeAll(async () => {
    dir = writeCatalog(TEST_CATALOG);
    h = await openHarness(dialect, { catalog: dir });
    env = {
      DATABASE_URL: h.platform.database.url,
      PLATFORM_DATA_DIR: dir,
      PLATFORM_CATALOG_DIR: dir,
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

  it('[ADM-CLI-2] defines, shows and removes a custom provider and its models, reading the version first', async () => {
    const owner = await h.platform.ctx.identity.bootstrap({
      accountName: 'CLI',
      email: `cli-${Math.random().toString(36).slice(2)}@example.test`,
    });
    const account = owner.account_id;
    const file = join(mkdtempSync(join(tmpdir(), 'platform-declaration-')), 'acme.yml');
    writeFileSync(file, 'display_name: Acme\nbase_url: https://acme.example/v1\napi_format: openai_chat\ncredentials: none\n');
    const defined = await cli('providers', 'define', '--account', account, 'acme', '--file', file, '--json');
    expect(defined.code, defined.err).toBe(0);
    expect(JSON.parse(defined.out)).toMatchObject({
      model_provider: { id: 'acme', enabled: false, lock_version: 0 },
      configuration: { source: 'custom', definition: { display_name: 'Acme' } },
    });

    const model = await cli(
      'models',
      'define',
      '--account',
      account,
      'acme/org/m-1',
      '--definition',
      '{"display_name":"M1","capabilities":{"tool_calls":false}}',
    );
    expect(model.code, model.err).toBe(0);
    expect(model.out).toBe('Model acme/org/m-1 defined; provider acme is at lock_version 1 (source custom).');
    const rows = (await h.call('GET', '/api/v1/admin/models', { token: owner.platform_token })).body.models;
    expect(rows.find((m: { ref: string }) => m.ref === 'acme/org/m-1')).toMatchObject({
      display_name: 'M1',
      model_id: 'org/m-1',
      capabilities: { tool_calls: false },
    });

    const shown = await cli('providers', 'show', '--account', account, 'acme');
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toContain('acme (Acme): source custom, disabled, lock_version 1, 1 models');
    expect(shown.out).toContain('acme/org/m-1  custom');

    expect((await cli('models', 'remove', '--account', account, 'acme/org/m-1')).out).toBe(
      'Model acme/org/m-1 removed; provider acme is at lock_version 2 (source custom).',
    );
    expect((await cli('providers', 'show', '--account', account, 'acme')).out).toContain('acme/org/m-1  custom removed');
    expect((await cli('models', 'reset', '--account', account, 'acme/org/m-1')).code).toBe(0);
    const removed = await cli('providers', 'remove', '--account', account, 'acme', '--json');
    expect(removed.code, removed.err).toBe(0);
    expect(JSON.parse(removed.out).configuration).toMatchObject({ source: 'removed', definition: null });
    // Recreating reads the removed provider's version first.
    expect((await cli('providers', 'define', '--account', account, 'acme', '--file', file)).code).toBe(0);
  });

  it('[ADM-CLI-2] [ADM-MDEF-5] reports a conflict with exit 3 without retrying, and refuses invalid definitions naming the field', async () => {
    const owner = await h.platform.ctx.identity.bootstrap({
      accountName: 'CLI',
      email: `cli-${Math.random().toString(36).slice(2)}@example.test`,
    });
    const account = owner.account_id;
    await h.call('PUT', P('alpha', '/lane'), { token: owner.platform_token, body: { command: { enabled: true } } });
    const stale = await cli('models', 'define', '--account', account, 'alpha/a-1', '--definition', '{}', '--expected-lock-version', '5');
    expect(stale.code).toBe(CONFLICT_EXIT_CODE);
    expect(stale.err).toMatch(/conflict: the policy of provider alpha is no longer at lock_version 5/);
    const badGrammar = await cli(
      'models',
      'define',
      '--account',
      account,
      'alpha/a-1',
      '--definition',
      '{"capabilities":{"tool_calls":"yes"}}',
    );
    expect([badGrammar.code, badGrammar.err]).toEqual([
      1,
      expect.stringMatching(/invalid definition: definition\.capabilities\.tool_calls/),
    ]);
    const badInherit = await cli('models', 'define', '--account', account, 'alpha/a-1', '--definition', '{"inherit":"nope"}');
    expect([badInherit.code, badInherit.err]).toEqual([1, expect.stringMatching(/command\.definition\.inherit: unknown model definition/)]);
    expect((await cli('models', 'define', '--account', account, 'alpha/a-1')).code).toBe(2);
    expect((await cli('providers', 'show', '--account', account, 'nobody')).code).toBe(1);
    const provider = await h.call('GET', P('alpha'), { token: owner.platform_token });
    expect(provider.body.model_provider.lock_version).toBe(0);
  });
});
