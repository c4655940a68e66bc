import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { spawnPlatform, waitForExit, waitForOutput } from '../support/cli.ts';

/** The README's `npm start` path: `platform serve` as a separate process on embedded defaults. */
describe('platform serve', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    child = undefined;
  });

  it(
    'starts on embedded SQLite, prints the URL and the bootstrap credentials once, answers /healthz and stops on SIGTERM',
    { timeout: 120_000 },
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'platform-serve-'));
      const env = { PLATFORM_DATA_DIR: dataDir, PLATFORM_HTTP_PORT: '0', LOG_LEVEL: 'warn' };
      child = spawnPlatform(['serve', '--only', 'admin'], env);
      const { stdout } = await waitForOutput(child, (out) => /database\s+sqlite:/.test(out));
      expect(stdout).toMatch(/session bearer:\s+pses_/);
      expect(stdout).toMatch(/platform token:\s+pplat_/);
      const url = /rest\s+(http:\/\/\S+)/.exec(stdout)?.[1];
      expect(url).toBeTruthy();
      expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' });
      expect(await (await fetch(`${url}/readyz`)).json()).toEqual({ status: 'ready' });
      const bearer = /session bearer:\s+(\S+)/.exec(stdout)?.[1];
      const who = await fetch(`${url}/api/v1/sessions/current`, { headers: { authorization: `Bearer ${bearer}` } });
      expect(who.status).toBe(200);
      // The admin console's URL is printed under the REST listener's, and `npm start` serves it with no build step.
      const consoleUrl = /console\s+(http:\/\/\S+\/console\/)/.exec(stdout)?.[1];
      expect(consoleUrl).toBe(`${url}/console/`);
      const page = await fetch(consoleUrl ?? '');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");

      const exit = waitForExit(child);
      child.kill('SIGTERM');
      const stopped = await exit;
      expect(stopped.code, stopped.stderr).toBe(0);

      // Second start: the same database, no new bootstrap credentials.
      child = spawnPlatform(['serve', '--only', 'admin'], env);
      const again = await waitForOutput(child, (out) => /database\s+sqlite:/.test(out));
      expect(again.stdout).not.toMatch(/session bearer/);
      const exit2 = waitForExit(child);
      child.kill('SIGTERM');
      expect((await exit2).code).toBe(0);
    },
  );

  it(
    'ends the banner with next steps, and keeps the dev forge (user, application) across a restart on the same data dir',
    { timeout: 180_000 },
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'platform-serve-'));
      const env = { PLATFORM_DATA_DIR: dataDir, PLATFORM_HTTP_PORT: '0', MCP_PORT: '0', DEV_FORGE_PORT: '0', LOG_LEVEL: 'warn' };
      const ready = (out: string) => /docs:\s+README/.test(out);
      child = spawnPlatform(['serve', '--only', 'admin,mcp,devforge'], env);
      const { stdout } = await waitForOutput(child, ready, 90_000);
      const signIn = /sign in as:\s+(\S+ \/ \S+)/.exec(stdout)?.[1];
      const appId = /application id:\s+([0-9a-f]{64})/.exec(stdout)?.[1];
      expect(signIn).toMatch(/^dev \/ /);
      expect(appId).toBeTruthy();
      const mcpUrl = /mcp\s+(http:\/\/\S+)/.exec(stdout)?.[1];
      expect(stdout).toContain(`claude mcp add --transport http forge ${mcpUrl}/mcp`);
      // The printed first call works as printed.
      const curl = /curl -H 'Authorization: Bearer (pses_\S+)' (\S+)/.exec(stdout);
      expect(curl?.[2]).toMatch(/\/api\/v1\/sessions\/current$/);
      const who = await fetch(curl?.[2] ?? '', { headers: { authorization: `Bearer ${curl?.[1]}` } });
      expect(who.status).toBe(200);
      const exit = waitForExit(child, 60_000);
      child.kill('SIGTERM');
      expect((await exit).code).toBe(0);
      expect(statSync(join(dataDir, 'devforge.json')).mode & 0o777).toBe(0o600);

      child = spawnPlatform(['serve', '--only', 'admin,mcp,devforge'], env);
      const again = (await waitForOutput(child, ready, 90_000)).stdout;
      expect(/sign in as:\s+(\S+ \/ \S+)/.exec(again)?.[1]).toBe(signIn);
      expect(/application id:\s+([0-9a-f]{64})/.exec(again)?.[1]).toBe(appId);
      expect(again).not.toMatch(/Bearer pses_/);
      expect(again).toContain("curl -H 'Authorization: Bearer <bearer>'");
      expect(again).toContain('npx platform humans reset-password owner@platform.local');
      const exit2 = waitForExit(child, 60_000);
      child.kill('SIGTERM');
      expect((await exit2).code).toBe(0);
    },
  );

  it('refuses to start on a bad configuration, naming each variable, without listening', async () => {
    child = spawnPlatform(['serve'], { PLATFORM_HTTP_PORT: 'http', LOG_LEVEL: 'loud', PLATFORM_SECRET_KEY: 'short-secret' });
    const result = await waitForExit(child);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('config error: PLATFORM_HTTP_PORT: expected an integer from 0 to 65535, got "http"');
    expect(result.stderr).toContain('config error: LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"');
    expect(result.stderr).toContain('config error: PLATFORM_SECRET_KEY: expected base64 of at least 32 random bytes (value not shown');
    expect(result.stderr).not.toContain('short-secret');
    expect(result.stdout).toBe('');
  });
});
