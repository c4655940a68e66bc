import { spawn } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../test/support/shared.ts';
import { freePort } from '../core/http/free-port.ts';
import { defaultRedirectUris, runDevForge } from './devforge.command.ts';

interface SeedJson {
  url: string;
  username: string;
  password: string;
  application_id: string;
  redirect_uris: string[];
  personal_access_token: string;
  state_file: string | null;
}

/** Runs `platform devforge …` (through commander, in a child process) and collects its output. */
function startCli(args: string[], env: Record<string, string> = {}) {
  const script = `
import { Command } from 'commander';
import { registerDevForgeCommand } from './src/devforge/devforge.command.ts';
import { createLogger, stderrDestination } from './src/core/logger.ts';
const program = new Command('platform');
program.exitOverride();
registerDevForgeCommand(program, { env: process.env, out: (text) => process.stdout.write(text) }, (config) =>
  createLogger({ name: 'devforge', level: config.LOG_LEVEL, destination: stderrDestination() }),
);
try {
  await program.parseAsync(${JSON.stringify(['devforge', ...args])}, { from: 'user' });
  process.stderr.write('CLOSED\\n');
} catch (err) {
  process.stderr.write(String(err && err.message) + '\\n');
  process.exitCode = 1;
}
`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: repoRoot,
    // A data directory of its own: the state file must never land in the checkout's ./data.
    env: { ...process.env, LOG_LEVEL: 'warn', PLATFORM_DATA_DIR: mkdtempSync(join(tmpdir(), 'devforge-cli-')), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const firstLine = async (): Promise<string> => {
    for (let i = 0; i < 1200 && !stdout.includes('\n'); i += 1) {
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    return stdout.split('\n')[0] ?? '';
  };
  return { child, exited, firstLine, output: () => ({ stdout, stderr }) };
}

describe('runDevForge', () => {
  it('prints the seed, serves until told to stop, then closes', async () => {
    let out = '';
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const running = runDevForge(
      { host: '127.0.0.1', port: 0, json: true, redirectUris: ['http://127.0.0.1:4000/callback'] },
      { out: (text) => (out += text), waitForStop: () => stopped },
    );
    for (let i = 0; i < 100 && !out.includes('\n'); i += 1) await new Promise((r) => setTimeout(r, 20));
    const seed = JSON.parse(out) as SeedJson;
    expect(seed.username).toBe('dev');
    expect(seed.password.length).toBeGreaterThanOrEqual(16);
    expect(seed.application_id).toMatch(/^[0-9a-f]{64}$/);
    expect(seed.redirect_uris).toEqual(['http://127.0.0.1:4000/callback']);
    const page = await fetch(`${seed.url}/users/sign_in`);
    expect(page.status).toBe(200);
    const user = await fetch(`${seed.url}/api/v4/user`, { headers: { 'private-token': seed.personal_access_token } });
    expect(((await user.json()) as { username: string }).username).toBe('dev');
    stop();
    await running;
    await expect(fetch(`${seed.url}/users/sign_in`)).rejects.toThrow();
  });

  it('defaults the redirect URI to the MCP server callback', () => {
    expect(defaultRedirectUris({})).toEqual(['http://127.0.0.1:3000/callback']);
    expect(defaultRedirectUris({ MCP_PORT: '3999' })).toEqual(['http://127.0.0.1:3999/callback']);
    expect(defaultRedirectUris({ MCP_SERVER_URL: 'https://mcp.example/base/' })).toEqual(['https://mcp.example/base/callback']);
  });
});

describe('platform devforge (child process)', () => {
  it('honours DEV_FORGE_PORT and --redirect-uri, and closes gracefully on SIGTERM', async () => {
    const port = await freePort();
    const cli = startCli(['--json', '--redirect-uri', 'http://127.0.0.1:5000/callback', '--redirect-uri', 'https://mcp.example/callback'], {
      DEV_FORGE_PORT: String(port),
    });
    const seed = JSON.parse(await cli.firstLine()) as SeedJson;
    expect(seed.url).toBe(`http://127.0.0.1:${port}`);
    expect(seed.redirect_uris).toEqual(['http://127.0.0.1:5000/callback', 'https://mcp.example/callback']);
    expect((await fetch(`${seed.url}/users/sign_in`)).status).toBe(200);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    expect(cli.output().stderr).toContain('CLOSED');
  });

  it('binds to PLATFORM_HOST from the parsed configuration when --host is not given', async () => {
    const port = await freePort();
    const cli = startCli(['--json', '--in-memory'], { PLATFORM_HOST: '127.0.0.2', DEV_FORGE_PORT: String(port) });
    const seed = JSON.parse(await cli.firstLine()) as SeedJson;
    expect(seed.url).toBe(`http://127.0.0.2:${port}`);
    expect((await fetch(`${seed.url}/users/sign_in`)).status).toBe(200);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });

  it('refuses an invalid DEV_FORGE_PORT with the configuration error line', async () => {
    const cli = startCli(['--json', '--in-memory'], { DEV_FORGE_PORT: 'eighty' });
    expect(await cli.exited).toBe(1);
    expect(cli.output().stderr).toContain('DEV_FORGE_PORT: expected');
  });

  it(
    'keeps its state in PLATFORM_DATA_DIR: a restart prints the same password, application id and token, which still work',
    { timeout: 120_000 },
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'devforge-cli-'));
      const first = startCli(['--port', '0', '--json'], { PLATFORM_DATA_DIR: dataDir });
      const seed1 = JSON.parse(await first.firstLine()) as SeedJson;
      expect(seed1.state_file).toBe(join(dataDir, 'devforge.json'));
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      expect(statSync(join(dataDir, 'devforge.json')).mode & 0o777).toBe(0o600);

      const second = startCli(['--port', '0', '--json'], { PLATFORM_DATA_DIR: dataDir });
      const seed2 = JSON.parse(await second.firstLine()) as SeedJson;
      try {
        expect(seed2.password).toBe(seed1.password);
        expect(seed2.application_id).toBe(seed1.application_id);
        expect(seed2.personal_access_token).toBe(seed1.personal_access_token);
        const user = await fetch(`${seed2.url}/api/v4/user`, { headers: { 'private-token': seed1.personal_access_token } });
        expect(user.status).toBe(200);
      } finally {
        second.child.kill('SIGTERM');
        await second.exited;
      }

      // --in-memory: a new forge every time, nothing written.
      const memory = startCli(['--port', '0', '--json', '--in-memory'], { PLATFORM_DATA_DIR: join(dataDir, 'unused') });
      const seed3 = JSON.parse(await memory.firstLine()) as SeedJson;
      memory.child.kill('SIGTERM');
      await memory.exited;
      expect(seed3.state_file).toBeNull();
      expect(seed3.application_id).not.toBe(seed1.application_id);
      expect(() => statSync(join(dataDir, 'unused'))).toThrow();
    },
  );

  it('prints readable text without --json and stops on SIGINT', async () => {
    const cli = startCli(['--port', '0']);
    expect(await cli.firstLine()).toMatch(/^Dev forge \(GitLab-compatible\) listening on http:\/\/127\.0\.0\.1:\d+$/);
    for (let i = 0; i < 100 && !cli.output().stdout.includes('Press Ctrl+C'); i += 1) await new Promise((r) => setTimeout(r, 20));
    const { stdout } = cli.output();
    expect(stdout).toMatch(/username: +dev/);
    expect(stdout).toMatch(/password: +\S{16}/);
    expect(stdout).toMatch(/application id: +[0-9a-f]{64}/);
    expect(stdout).toMatch(/state: +\S+devforge\.json +\(kept across restarts/);
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
  });

  it('refuses a bad port or redirect URI with a non-zero exit', async () => {
    for (const args of [
      ['--port', 'abc'],
      ['--port', '70000'],
      ['--redirect-uri', 'not a uri'],
    ]) {
      const cli = startCli(args);
      expect(await cli.exited).not.toBe(0);
      expect(cli.output().stderr).toMatch(/invalid/i);
    }
  });

  it('reports a port in use clearly', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const cli = startCli(['--port', String(port)]);
      expect(await cli.exited).not.toBe(0);
      expect(cli.output().stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
