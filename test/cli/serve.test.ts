import { mkdtempSync } from 'node:fs';
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

  it('starts on embedded SQLite, prints the URL and the bootstrap credentials once, answers /healthz and stops on SIGTERM', async () => {
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
  });

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
