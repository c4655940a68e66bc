import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects, openTestDatabase, type TestDatabase } from '../support/databases.ts';
import { runCli } from '../support/cli.ts';

describe.each(dialects)('identity commands on %s', (dialect) => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  async function env() {
    database = await openTestDatabase(dialect, { migrate: false });
    return {
      DATABASE_URL: database.url,
      PLATFORM_DATA_DIR: mkdtempSync(join(tmpdir(), 'platform-cli-')),
      PLATFORM_SECRET_KEY: Buffer.alloc(32, 9).toString('base64'),
      PLATFORM_PASSWORD_COST: '14',
    };
  }

  it('bootstraps, adds Humans, manages roles and tokens, with --json objects as ARCHITECTURE.md specifies', async () => {
    const e = await env();
    const boot = await runCli(['bootstrap', '--json', '--email', 'root@example.test'], e);
    expect(boot.code).toBe(0);
    const b = JSON.parse(boot.stdout) as Record<string, string>;
    expect(Object.keys(b).sort()).toEqual(['account_id', 'email', 'human_id', 'password', 'platform_token', 'session_bearer']);
    expect(b.email).toBe('root@example.test');

    const added = await runCli(['humans', 'add', '--account', b.account_id!, '--email', 'dev@example.test', '--role', 'admin', '--json'], e);
    expect(added.code).toBe(0);
    const h = JSON.parse(added.stdout) as Record<string, string>;
    expect(h).toMatchObject({ email: 'dev@example.test', role: 'admin', account_id: b.account_id });
    expect(h.human_id).toBeTruthy();
    expect(h.password?.length).toBeGreaterThanOrEqual(12);

    const listed = JSON.parse((await runCli(['humans', 'list', '--account', b.account_id!, '--json'], e)).stdout) as unknown[];
    expect(listed).toHaveLength(2);
    expect(JSON.stringify(listed)).not.toContain('password');

    expect((await runCli(['humans', 'set-role', h.human_id!, 'member'], e)).stdout).toContain('is now member');

    const token = await runCli(['tokens', 'create', '--human', h.human_id!, '--capability', 'CAP_PLATFORM_OSV_READ', '--capability', 'CAP_PLATFORM_DOCUMENTS_LIST', '--json'], e);
    expect(token.code).toBe(0);
    const t = JSON.parse(token.stdout) as { token: string; id: string; plane: string; capabilities: string[] };
    expect(t.token).toMatch(/^pplat_/);
    expect(t.capabilities).toEqual(['CAP_PLATFORM_DOCUMENTS_LIST', 'CAP_PLATFORM_OSV_READ']);
    const member = JSON.parse((await runCli(['tokens', 'create', '--human', h.human_id!, '--plane', 'member', '--json'], e)).stdout) as { token: string };
    expect(member.token).toMatch(/^pmem_/);

    const tokens = await runCli(['tokens', 'list', '--human', h.human_id!], e);
    expect(tokens.stdout).toContain(t.id);
    expect(tokens.stdout).not.toContain(t.token);
    expect((await runCli(['tokens', 'revoke', t.id], e)).stdout).toContain('revoked');
    expect((await runCli(['tokens', 'list', '--human', h.human_id!], e)).stdout).toMatch(new RegExp(`${t.id}\\s+platform\\s+revoked`));
    expect((await runCli(['humans', 'deactivate', h.human_id!], e)).stdout).toContain('deactivated');
  });

  it('prints one clear line and exits non-zero on user errors', async () => {
    const e = await env();
    const cases: [string[], RegExp][] = [
      [['tokens', 'create', '--human', 'nope', '--capability', 'CAP_PLATFORM_OSV_READ'], /^error: no Human with id nope\n$/],
      [['tokens', 'create', '--human', 'x', '--capability', 'CAP_NOPE'], /^error: unknown capability CAP_NOPE/],
      [['tokens', 'create', '--human', 'x'], /^error: a platform-plane token needs at least one --capability/],
      [['tokens', 'revoke', 'missing-id'], /^error: no credential with id missing-id\n$/],
      [['humans', 'set-role', 'x', 'emperor'], /^error: unknown role emperor/],
      [['humans', 'add', '--account', 'nope', '--email', 'a@b.c'], /^error: no Account with id nope\n$/],
    ];
    for (const [argv, pattern] of cases) {
      const run = await runCli(argv, e);
      expect(run.code, argv.join(' ')).not.toBe(0);
      expect(run.stderr, argv.join(' ')).toMatch(pattern);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
    const unknown = await runCli(['frobnicate'], e);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
  });

  it('reports configuration errors per variable', async () => {
    const run = await runCli(['migrate'], { DATABASE_URL: 'mysql://nope', PLATFORM_HTTP_PORT: '99999' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('config error: PLATFORM_HTTP_PORT: expected an integer from 0 to 65535, got "99999"');
    expect(run.stderr).toContain('config error: DATABASE_URL: expected sqlite:<path> or postgres://user@host:port/database, got "mysql://nope"');
  });

  it('has --help for every command', async () => {
    for (const argv of [['--help'], ['serve', '--help'], ['migrate', '--help'], ['bootstrap', '--help'], ['humans', 'add', '--help'], ['tokens', 'create', '--help']]) {
      const run = await runCli(argv, {});
      expect(run.code, argv.join(' ')).toBe(0);
      expect(run.stdout).toMatch(/Usage: platform/);
    }
  });

  it('migrates explicitly and reports status', async () => {
    const e = await env();
    expect((await runCli(['migrate', '--status'], e)).stdout).toMatch(/^Pending: /);
    expect((await runCli(['migrate'], e)).stdout).toMatch(/^Applied /);
    expect((await runCli(['migrate'], e)).stdout).toMatch(/is up to date/);
  });
});
