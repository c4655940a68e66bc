import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openerCommand, systemBrowserOpener } from './mcp-local.browser.ts';

const url = 'https://forge.example/oauth/authorize?client_id=a&state=b';

describe('browser opener', () => {
  it('picks the platform opener', () => {
    expect(openerCommand('darwin', {}, url)).toEqual({ command: 'open', args: [url] });
    expect(openerCommand('win32', {}, url)).toEqual({ command: 'rundll32.exe', args: ['url.dll,FileProtocolHandler', url] });
    expect(openerCommand('linux', { DISPLAY: ':0' }, url)).toEqual({ command: 'xdg-open', args: [url] });
    expect(openerCommand('linux', { WAYLAND_DISPLAY: 'wayland-0' }, url)).toEqual({ command: 'xdg-open', args: [url] });
  });

  it('does not try a text browser when there is no display (the URL is printed instead)', async () => {
    expect(openerCommand('linux', {}, url)).toBeUndefined();
    await expect(systemBrowserOpener({ env: {}, platform: 'linux' })(url)).resolves.toBe(false);
  });

  describe.runIf(process.platform !== 'win32')('with a stand-in xdg-open on PATH', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'mcp-local-opener-'));
    });
    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    async function fakeOpener(script: string) {
      const path = join(dir, 'xdg-open');
      await writeFile(path, `#!/bin/sh\n${script}\n`);
      await chmod(path, 0o755);
    }

    it('reports success when the opener exits 0 and passes the URL as one argument', async () => {
      await fakeOpener(`printf '%s' "$1" > "${dir}/opened"; exit 0`);
      const opened = await systemBrowserOpener({ env: { PATH: dir, DISPLAY: ':0' }, platform: 'linux' })(url);
      expect(opened).toBe(true);
      expect(await readFile(join(dir, 'opened'), 'utf8')).toBe(url);
    });

    it('reports failure when the opener exits non-zero', async () => {
      await fakeOpener('exit 3');
      await expect(systemBrowserOpener({ env: { PATH: dir, DISPLAY: ':0' }, platform: 'linux' })(url)).resolves.toBe(false);
    });

    it('reports failure when there is no opener at all', async () => {
      await expect(systemBrowserOpener({ env: { PATH: dir, DISPLAY: ':0' }, platform: 'linux' })(url)).resolves.toBe(false);
    });

    it('takes an opener still running after the wait as a browser that is opening', async () => {
      await fakeOpener('exec /bin/sleep 2');
      await expect(systemBrowserOpener({ env: { PATH: dir, DISPLAY: ':0' }, platform: 'linux', waitMs: 100 })(url)).resolves.toBe(true);
    });
  });
});
