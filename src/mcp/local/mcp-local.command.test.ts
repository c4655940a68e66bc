/**
 * `platform mcp login | logout | --stdio` in process, against the real dev forge, with an injected "browser" and
 * in-memory stdio: the output channels (MCP on stdout only), the token file and revocation.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Command, CommanderError } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadPlatformConfig } from '../../app/config.ts';
import { CliError } from '../../core/cli-io.ts';
import { ConfigError, type Env } from '../../core/config.ts';
import { isAppError } from '../../core/errors.ts';
import { createForgeBrowser, devForgeSeed, startDevForge, type StartedDevForge } from '../../devforge/index.ts';
import { silentLogger } from '../../core/logger.ts';
import type { BrowserOpener } from './mcp-local.browser.ts';
import { registerMcpLocalCommands, type McpLocalCommandDeps } from './mcp-local.command.ts';
import { createTokenFile } from './mcp-local.token-file.ts';
import { fetchOpener, StreamClientTransport, tempDir } from './mcp-local.test-support.ts';

async function run(argv: string[], env: Env, deps: McpLocalCommandDeps, onErr?: (line: string) => void) {
  const out: string[] = [];
  const err: string[] = [];
  const program = new Command('platform').exitOverride().configureOutput({ writeOut: (s) => out.push(s), writeErr: (s) => err.push(s) });
  registerMcpLocalCommands(program, { env, out: (t) => out.push(t), err: (t) => (err.push(t), onErr?.(t)) }, loadPlatformConfig, deps);
  let code = 0;
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CliError) {
      err.push(`error: ${error.message}`);
      code = error.exitCode;
    } else if (error instanceof ConfigError) {
      err.push(...error.problems.map((p) => `config error: ${p}`));
      code = 1;
    } else if (isAppError(error)) {
      err.push(`error: ${error.message}`);
      code = 1;
    } else if (error instanceof CommanderError) {
      code = error.exitCode;
    } else {
      throw error;
    }
  }
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('platform mcp commands', () => {
  const seed = devForgeSeed(['http://127.0.0.1/callback']);
  const user = { username: seed.users[0]!.username, password: seed.users[0]!.password };
  const appId = seed.applications[0]!.uid;
  let forge: StartedDevForge;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let env: Env;
  let tokenPath: string;

  beforeEach(async () => {
    forge = await startDevForge(seed);
    tmp = await tempDir();
    tokenPath = join(tmp.dir, 'forge-token.json');
    env = {
      FORGE_USE_OAUTH: 'true',
      FORGE_URL: forge.url,
      FORGE_OAUTH_APP_ID: appId,
      FORGE_OAUTH_REDIRECT_URI: 'http://127.0.0.1:0/callback',
      FORGE_OAUTH_TOKEN_PATH: tokenPath,
      LOG_LEVEL: 'silent',
      HOME: tmp.dir,
    };
  });
  afterEach(async () => {
    await forge.close();
    await tmp.remove();
  });

  async function userStatus(token: string): Promise<number> {
    const response = await fetch(`${forge.url}/api/v4/user`, { headers: { authorization: `Bearer ${token}` } });
    await response.body?.cancel();
    return response.status;
  }

  it('login signs in through the browser, stores a 0600 file and names the user; the URL goes to stderr only', async () => {
    const opener = fetchOpener(user);
    const result = await run(['mcp', 'login'], env, { openBrowser: opener.open });
    expect(result.code).toBe(0);
    expect(result.out).toBe(`Signed in to ${forge.url} as @dev; the token is stored in ${tokenPath}`);
    expect(result.err).toContain(opener.visits[0]!.url);
    const stored = await createTokenFile({ path: tokenPath, log: silentLogger() }).read();
    expect(stored?.forge_url).toBe(forge.url);
    expect(result.out + result.err).not.toContain(stored!.access_token);
    if (process.platform !== 'win32') expect((await stat(tokenPath)).mode & 0o777).toBe(0o600);
  });

  it('login prints the URL when no browser can be opened, and the user can finish from it', async () => {
    const noBrowser: BrowserOpener = async () => false;
    let visit: Promise<void> | undefined;
    const result = await run(['mcp', 'login'], env, { openBrowser: noBrowser }, (line) => {
      // The user copies the printed link into a browser elsewhere.
      const link = /(http:\/\/\S+\/oauth\/authorize\?\S+)/.exec(line)?.[1];
      if (link)
        visit = createForgeBrowser()
          .authorize(link, user)
          .then(async (callback) => void (await fetch(callback)).body?.cancel());
    });
    await visit;
    expect(result.err).toMatch(/Open this URL in a browser to sign in to the forge:\n {2}http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?/);
    expect(result).toMatchObject({ code: 0, out: `Signed in to ${forge.url} as @dev; the token is stored in ${tokenPath}` });
  });

  it('login gives up when nobody signs in', async () => {
    const result = await run(['mcp', 'login'], env, { openBrowser: async () => false, signInTimeoutMs: 300 });
    expect(result.code).toBe(1);
    expect(result.err).toContain('error: no sign-in arrived');
    await expect(stat(tokenPath)).rejects.toThrow();
  });

  it('login refuses to run without FORGE_USE_OAUTH, and bad settings give one line each', async () => {
    const off = await run(['mcp', 'login'], { ...env, FORGE_USE_OAUTH: 'false' }, {});
    expect(off.code).toBe(1);
    expect(off.err).toContain('FORGE_USE_OAUTH is not true');
    const bad = await run(['mcp', 'login'], { ...env, FORGE_OAUTH_REDIRECT_URI: 'http://example.com/cb' }, {});
    expect(bad.err).toMatch(/config error: FORGE_OAUTH_REDIRECT_URI: must point to a loopback address/);
  });

  it('logout revokes at the forge and deletes the file; a second logout says there is nothing to do', async () => {
    await run(['mcp', 'login'], env, { openBrowser: fetchOpener(user).open });
    const stored = await createTokenFile({ path: tokenPath, log: silentLogger() }).read();
    expect(await userStatus(stored!.access_token)).toBe(200);
    const result = await run(['mcp', 'logout'], env, {});
    expect(result).toMatchObject({ code: 0, out: `Signed out of ${forge.url}: the token was revoked and ${tokenPath} deleted` });
    expect(await userStatus(stored!.access_token)).toBe(401);
    expect(forge.counters.revoke).toBe(2);
    const again = await run(['mcp', 'logout'], env, {});
    expect(again.out).toBe(`Not signed in (no token file at ${tokenPath})`);
  });

  it('logout deletes the file but reports failure when the forge cannot be reached', async () => {
    await run(['mcp', 'login'], env, { openBrowser: fetchOpener(user).open });
    await forge.close();
    const result = await run(['mcp', 'logout'], env, {});
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/could not be revoked/);
    await expect(stat(tokenPath)).rejects.toThrow();
    forge = await startDevForge(seed); // for afterEach
  });

  it('mcp without --stdio or a subcommand is a usage error', async () => {
    expect((await run(['mcp'], env, {})).code).toBe(2);
  });

  it('--stdio without credentials says what to set', async () => {
    const result = await run(['mcp', '--stdio'], { FORGE_URL: forge.url, HOME: tmp.dir }, {});
    expect(result.code).toBe(1);
    expect(result.err).toContain('set FORGE_USE_OAUTH=true');
  });

  it('--stdio signs in on start, answers tool calls, writes only MCP to stdout, and signs in again after a revocation', async () => {
    const opener = fetchOpener(user);
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const running = run(['mcp', '--stdio'], env, { openBrowser: opener.open, stdin, stdout });
    const transport = new StreamClientTransport(stdin, stdout);
    const client = new Client({ name: 'test', version: '0' });
    await client.connect(transport);

    const tools = await client.listTools();
    // get_current_user is get_user's old name: unlisted, still callable.
    expect(tools.tools.map((t) => t.name)).toContain('get_user');
    const first = await client.callTool({ name: 'get_current_user', arguments: {} });
    expect(first.isError).toBeFalsy();
    expect(JSON.stringify(first.content)).toContain('"username\\":\\"dev\\"');
    expect(opener.visits).toHaveLength(1);

    // The user revokes the application at the forge: the call fails once, the next one signs in again.
    forge.revokeAllTokensOf('dev');
    const denied = await client.callTool({ name: 'get_current_user', arguments: {} });
    expect(denied.isError).toBe(true);
    const again = await client.callTool({ name: 'get_current_user', arguments: {} });
    expect(again.isError).toBeFalsy();
    expect(opener.visits).toHaveLength(2);

    await client.close();
    const result = await running;
    expect(result.code).toBe(0);
    // Every byte on stdout is a JSON-RPC message; the sign-in link went to stderr.
    const lines = transport.written.join('').split('\n').filter(Boolean);
    for (const line of lines) expect((JSON.parse(line) as { jsonrpc: string }).jsonrpc).toBe('2.0');
    expect(transport.written.join('')).not.toContain('/oauth/authorize');
    expect(result.err).toContain('/oauth/authorize');
    expect(result.out).toBe('');
  });
});
