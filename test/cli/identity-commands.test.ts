import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.ts';
import { createAuthenticator } from '../../src/core/identity/auth.ts';
import { createIdentityService } from '../../src/core/identity/identity.service.ts';
import { dialects, openTestDatabase, type TestDatabase } from '../support/databases.ts';
import { runCli, spawnPlatform, waitForExit } from '../support/cli.ts';
import { narrowTables } from '../../src/core/db/database.ts';

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

    const added = await runCli(
      ['humans', 'add', '--account', b.account_id!, '--email', 'dev@example.test', '--role', 'admin', '--json'],
      e,
    );
    expect(added.code).toBe(0);
    const h = JSON.parse(added.stdout) as Record<string, string>;
    expect(h).toMatchObject({ email: 'dev@example.test', role: 'admin', account_id: b.account_id });
    expect(h.human_id).toBeTruthy();
    expect(h.password?.length).toBeGreaterThanOrEqual(12);

    const listed = JSON.parse((await runCli(['humans', 'list', '--account', b.account_id!, '--json'], e)).stdout) as unknown[];
    expect(listed).toHaveLength(2);
    expect(JSON.stringify(listed)).not.toContain('password');

    expect((await runCli(['humans', 'set-role', h.human_id!, 'member'], e)).stdout).toContain('is now member');

    const token = await runCli(
      [
        'tokens',
        'create',
        '--human',
        h.human_id!,
        '--capability',
        'CAP_PLATFORM_OSV_READ',
        '--capability',
        'CAP_PLATFORM_DOCUMENTS_LIST',
        '--json',
      ],
      e,
    );
    expect(token.code).toBe(0);
    const t = JSON.parse(token.stdout) as { token: string; id: string; plane: string; capabilities: string[] };
    expect(t.token).toMatch(/^pplat_/);
    expect(t.capabilities).toEqual(['CAP_PLATFORM_DOCUMENTS_LIST', 'CAP_PLATFORM_OSV_READ']);
    const member = JSON.parse((await runCli(['tokens', 'create', '--human', h.human_id!, '--plane', 'member', '--json'], e)).stdout) as {
      token: string;
    };
    expect(member.token).toMatch(/^pmem_/);

    const tokens = await runCli(['tokens', 'list', '--human', h.human_id!], e);
    expect(tokens.stdout).toContain(t.id);
    expect(tokens.stdout).not.toContain(t.token);
    expect((await runCli(['tokens', 'revoke', t.id], e)).stdout).toContain('revoked');
    expect((await runCli(['tokens', 'list', '--human', h.human_id!], e)).stdout).toMatch(new RegExp(`${t.id}\\s+platform\\s+revoked`));
    expect((await runCli(['humans', 'deactivate', h.human_id!], e)).stdout).toContain('deactivated');
  });

  /** Runs `platform …` as its own OS process, as a user would (the setup around it runs in-process: spawns are slow). */
  async function platform(argv: string[], e: Record<string, string>) {
    return waitForExit(spawnPlatform(argv, e), 120_000);
  }

  it(
    'humans reset-password (new password once, sessions signed out, tokens kept) and humans activate, as OS processes',
    { timeout: 300_000 },
    async () => {
      const e = await env();
      const boot = await runCli(['bootstrap', '--json', '--email', 'root@example.test'], e);
      expect(boot.code, boot.stderr).toBe(0);
      const b = JSON.parse(boot.stdout) as Record<string, string>;
      const added = await runCli(['humans', 'add', '--account', b.account_id!, '--email', 'lost@example.test', '--json'], e);
      const h = JSON.parse(added.stdout) as { human_id: string; email: string; password: string };
      // What the Human holds before the reset: a session from their password, and a platform token.
      const identity = createIdentityService({
        db: narrowTables(database!.db),
        dialect,
        clock: systemClock,
        sessionTtlMs: 3_600_000,
        passwordCost: 14,
      });
      const auth = createAuthenticator({ db: narrowTables(database!.db), clock: systemClock });
      const session = await identity.signIn(h.email, h.password);
      const token = await identity.createToken({ humanId: h.human_id, plane: 'platform', capabilities: ['CAP_PLATFORM_OSV_READ'] });
      expect((await auth.authenticate({ authorization: `Bearer ${session.token}` })).ok).toBe(true);

      const reset = await platform(['humans', 'reset-password', h.human_id, '--json'], e);
      expect(reset.code, reset.stderr).toBe(0);
      // One JSON object on stdout, like `humans add --json`.
      const r = JSON.parse(reset.stdout) as Record<string, unknown>;
      expect(r).toMatchObject({ human_id: h.human_id, email: h.email, account_id: b.account_id, active: true, sessions_revoked: 1 });
      expect(typeof r.password).toBe('string');
      expect((r.password as string).length).toBeGreaterThanOrEqual(12);
      expect(r.password).not.toBe(h.password);
      // Only the hash is stored.
      const stored = JSON.stringify(await database!.db.selectFrom('humans').selectAll().execute());
      expect(stored).not.toContain(r.password as string);

      await expect(identity.signIn(h.email, h.password)).rejects.toMatchObject({ code: 'unauthorized' });
      expect((await identity.signIn(h.email, r.password as string)).plane).toBe('session');
      expect((await auth.authenticate({ authorization: `Bearer ${session.token}` })).ok).toBe(false);
      expect((await auth.authenticate({ authorization: `Bearer ${token.token}` })).ok).toBe(true);

      // Deactivated: the reset still gives a password (text output, shown once) and says to activate first.
      expect((await runCli(['humans', 'deactivate', h.human_id], e)).code).toBe(0);
      const text = await platform(['humans', 'reset-password', h.human_id], e);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/new password \(shown once\): \S{12,}/);
      expect(text.stdout).toContain('API session(s) revoked');
      expect(text.stdout).toContain('platform humans activate');
      const password = /new password \(shown once\): (\S+)/.exec(text.stdout)?.[1] ?? '';
      await expect(identity.signIn(h.email, password)).rejects.toMatchObject({ code: 'unauthorized' });

      // Activated: signs in again; the tokens the deactivation ended stay revoked.
      const activated = await platform(['humans', 'activate', h.human_id, '--json'], e);
      expect(activated.code, activated.stderr).toBe(0);
      expect(JSON.parse(activated.stdout)).toMatchObject({ human_id: h.human_id, active: true });
      expect((await identity.signIn(h.email, password)).plane).toBe('session');
      expect((await auth.authenticate({ authorization: `Bearer ${token.token}` })).ok).toBe(false);
      const listed = JSON.parse((await runCli(['humans', 'list', '--account', b.account_id!, '--json'], e)).stdout) as {
        human_id: string;
        active: boolean;
      }[];
      expect(listed.find((x) => x.human_id === h.human_id)?.active).toBe(true);

      // The Human may be named by email (what is left when the banner with the ids is lost).
      const byEmail = await runCli(['humans', 'reset-password', 'LOST@example.test', '--json'], e);
      expect(byEmail.code, byEmail.stderr).toBe(0);
      expect(JSON.parse(byEmail.stdout)).toMatchObject({ human_id: h.human_id, sessions_revoked: 1 });
      const unknownEmail = await runCli(['humans', 'activate', 'nobody@example.test'], e);
      expect(unknownEmail.code).toBe(1);
      expect(unknownEmail.stderr).toBe('error: no Human with that email\n');

      // Unknown Humans: one clear line, non-zero exit, nothing on stdout.
      const unknownReset = await platform(['humans', 'reset-password', 'no-such-human'], e);
      expect(unknownReset.code).toBe(1);
      expect(unknownReset.stderr).toBe('error: no Human with id no-such-human\n');
      expect(unknownReset.stdout).toBe('');
      const unknownActivate = await runCli(['humans', 'activate', 'no-such-human'], e);
      expect(unknownActivate.code).toBe(1);
      expect(unknownActivate.stderr).toBe('error: no Human with id no-such-human\n');
      expect(unknownActivate.stdout).toBe('');
    },
  );

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
    expect(run.stderr).toContain(
      'config error: DATABASE_URL: expected sqlite:<path> or postgres://user@host:port/database, got "mysql://nope"',
    );
  });

  it('has --help for every command', async () => {
    for (const argv of [
      ['--help'],
      ['serve', '--help'],
      ['migrate', '--help'],
      ['bootstrap', '--help'],
      ['humans', 'add', '--help'],
      ['humans', 'activate', '--help'],
      ['humans', 'reset-password', '--help'],
      ['tokens', 'create', '--help'],
    ]) {
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
