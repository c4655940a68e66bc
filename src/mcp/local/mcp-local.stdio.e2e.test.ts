/**
 * End to end through the real CLI: the official MCP SDK `Client` with `StdioClientTransport` spawning
 * `node bin/platform.js mcp --stdio` against the dev forge on 127.0.0.1:0 (issue 3 item 11), and the spawned
 * `platform mcp login` finished by headless Chromium from the URL it prints when no browser can be opened.
 */
import { spawn } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../core/clock.ts';
import { silentLogger } from '../../core/logger.ts';
import { devForgeSeed, startDevForge, type StartedDevForge } from '../../devforge/index.ts';
import { repoRoot } from '../../../test/support/shared.ts';
import { parseLoopbackRedirect } from './mcp-local.redirect-uri.ts';
import { browserSignIn } from './mcp-local.stdio.ts';
import { createTokenFile, type StoredTokenSet } from './mcp-local.token-file.ts';
import { fetchOpener, launchChromium, tempDir } from './mcp-local.test-support.ts';

const PLATFORM = join(repoRoot, 'bin', 'platform.js');

describe('platform mcp through the real CLI', () => {
  const seed = devForgeSeed(['http://127.0.0.1/callback']);
  const user = { username: seed.users[0]!.username, password: seed.users[0]!.password };
  const appId = seed.applications[0]!.uid;
  let forge: StartedDevForge;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let tokenPath: string;
  const clients: Client[] = [];

  beforeEach(async () => {
    forge = await startDevForge(seed);
    tmp = await tempDir();
    tokenPath = join(tmp.dir, 'forge-token.json');
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await forge.close();
    await tmp.remove();
  });

  /** Only what the child needs: no DISPLAY (so no real browser is ever opened), a private HOME, our forge. */
  function childEnv(extra: Record<string, string>): Record<string, string> {
    return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp.dir, LOG_LEVEL: 'warn', FORGE_URL: forge.url, ...extra };
  }

  function oauthEnv(): Record<string, string> {
    return childEnv({
      FORGE_USE_OAUTH: 'true',
      FORGE_OAUTH_APP_ID: appId,
      FORGE_OAUTH_REDIRECT_URI: 'http://127.0.0.1:0/callback',
      FORGE_OAUTH_TOKEN_PATH: tokenPath,
    });
  }

  async function signedIn(): Promise<StoredTokenSet> {
    const redirect = parseLoopbackRedirect('http://127.0.0.1:0/callback');
    if (typeof redirect === 'string') throw new Error(redirect);
    const settings = { mode: 'oauth' as const, forgeUrl: forge.url, clientId: appId, scopes: ['api'], redirect, tokenPath };
    const set = await browserSignIn(settings, {
      fetch,
      clock: systemClock,
      log: silentLogger(),
      openBrowser: fetchOpener(user).open,
      notify: () => undefined,
    }).signIn();
    await createTokenFile({ path: tokenPath, log: silentLogger() }).write(set);
    return set;
  }

  async function connect(env: Record<string, string>): Promise<{ client: Client; stderr: () => string }> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [PLATFORM, 'mcp', '--stdio'],
      cwd: tmp.dir,
      env,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Client({ name: 'e2e', version: '0' });
    await client.connect(transport);
    clients.push(client);
    return { client, stderr: () => stderr };
  }

  function text(result: Awaited<ReturnType<Client['callTool']>>): string {
    return (result.content as { type: string; text: string }[]).map((c) => c.text).join('');
  }

  it('answers tools/call with the token from the token file', async () => {
    const set = await signedIn();
    const { client, stderr } = await connect(oauthEnv());
    const result = await client.callTool({ name: 'get_current_user', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ username: 'dev' });
    expect(text(result)).toContain('<forge-data untrusted="true">');
    expect(stderr()).not.toContain(set.access_token);
    expect(forge.counters.token).toBe(1); // the sign-in only: no refresh, no new sign-in
  });

  it('refreshes an expired stored token at start and stores the rotated pair', async () => {
    const set = await signedIn();
    await createTokenFile({ path: tokenPath, log: silentLogger() }).write({ ...set, expires_at: Date.now() - 1000 });
    const { client } = await connect(oauthEnv());
    const result = await client.callTool({ name: 'get_current_user', arguments: {} });
    expect(result.structuredContent).toMatchObject({ username: 'dev' });
    expect(text(result)).toContain('<forge-data untrusted="true">');
    const renewed = await createTokenFile({ path: tokenPath, log: silentLogger() }).read();
    expect(renewed?.refresh_token).not.toBe(set.refresh_token);
    expect(renewed!.expires_at).toBeGreaterThan(Date.now() + 7000 * 1000);
    const old = await fetch(`${forge.url}/api/v4/user`, { headers: { authorization: `Bearer ${set.access_token}` } });
    expect(old.status).toBe(401);
  });

  it('uses FORGE_PERSONAL_ACCESS_TOKEN without OAuth', async () => {
    const token = forge.createPersonalAccessToken('dev', ['api']);
    const { client } = await connect(childEnv({ FORGE_PERSONAL_ACCESS_TOKEN: token }));
    const result = await client.callTool({ name: 'get_current_user', arguments: {} });
    expect(result.structuredContent).toMatchObject({ username: 'dev' });
    expect(text(result)).toContain('<forge-data untrusted="true">');
    expect(forge.counters.token).toBe(0);
  });

  it('[SURFACE-ENV] [SURFACE-READONLY] honours FORGE_TOOLSETS and FORGE_READ_ONLY: only those tools are listed, a hidden one is refused', async () => {
    const token = forge.createPersonalAccessToken('dev', ['api']);
    const { client } = await connect(
      childEnv({ FORGE_PERSONAL_ACCESS_TOKEN: token, FORGE_TOOLSETS: 'issues,core', FORGE_READ_ONLY: 'true' }),
    );
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('list_issues');
    expect(names).toContain('get_user');
    expect(names).not.toContain('save_issue');
    expect(names).not.toContain('list_merge_requests');
    const before = forge.counters.api;
    const refused = await client
      .callTool({ name: 'create_issue', arguments: { project_id: '1', title: 'x' } })
      .catch((error: Error) => error);
    expect(refused instanceof Error ? refused.message : JSON.stringify(refused)).toMatch(/not found|create_issue/i);
    expect(forge.counters.api).toBe(before);
  });

  it('`platform mcp login` prints the URL on stderr when no browser can be opened; Chromium finishes the sign-in', async (ctx) => {
    const browser = await launchChromium();
    if (!browser) return ctx.skip();
    try {
      const child = spawn(process.execPath, [PLATFORM, 'mcp', 'login'], {
        cwd: tmp.dir,
        env: oauthEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      const link = new Promise<string>((resolve) => {
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString('utf8');
          const found = /(http:\/\/\S+\/oauth\/authorize\?\S+)/.exec(stderr)?.[1];
          if (found) resolve(found);
        });
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      const url = await link;
      expect(stdout).toBe('');
      const page = await browser.newPage();
      await page.goto(url);
      await page.fill('#user_login', user.username);
      await page.fill('#user_password', user.password);
      await page.click('[data-testid="sign-in-button"]');
      await page.getByRole('button', { name: 'Authorize', exact: true }).click();
      await page.getByRole('heading', { name: 'Signed in' }).waitFor();
      expect(await exited).toBe(0);
      expect(stdout.trim()).toBe(`Signed in to ${forge.url} as @dev; the token is stored in ${tokenPath}`);
      if (process.platform !== 'win32') expect((await stat(tokenPath)).mode & 0o777).toBe(0o600);
      const stored = JSON.parse(await readFile(tokenPath, 'utf8')) as StoredTokenSet;
      expect(stdout + stderr).not.toContain(stored.access_token);
      expect(stdout + stderr).not.toContain(stored.refresh_token);
    } finally {
      await browser.close();
    }
  });
});
