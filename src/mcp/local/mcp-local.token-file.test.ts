import { mkdtemp, readdir, readFile, rm, stat, symlink, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.ts';
import { createTokenFile, defaultTokenPath, type StoredTokenSet } from './mcp-local.token-file.ts';

const posix = process.platform !== 'win32';

function sample(overrides: Partial<StoredTokenSet> = {}): StoredTokenSet {
  return {
    version: 1,
    forge_url: 'http://127.0.0.1:1',
    client_id: 'app-1',
    access_token: 'access-1',
    refresh_token: 'refresh-1',
    expires_at: 1_000_000,
    scope: 'api',
    ...overrides,
  };
}

function captureLog() {
  const lines: string[] = [];
  const log = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } });
  return { log, text: () => lines.join('') };
}

describe('token file', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mcp-local-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('defaults to ~/.config/platform/forge-token.json', () => {
    expect(defaultTokenPath('/home/u')).toBe(join('/home/u', '.config', 'platform', 'forge-token.json'));
  });

  it.runIf(posix)('creates the directory 0700 and the file 0600, and reads back exactly what was written', async () => {
    const path = join(dir, 'nested', 'platform', 'forge-token.json');
    const file = createTokenFile({ path, log: captureLog().log });
    expect(await file.read()).toBeUndefined();
    await file.write(sample());
    expect((await stat(join(dir, 'nested', 'platform'))).mode & 0o777).toBe(0o700);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await file.read()).toEqual(sample());
    expect(Object.keys(JSON.parse(await readFile(path, 'utf8')) as object).sort()).toEqual([
      'access_token',
      'client_id',
      'expires_at',
      'forge_url',
      'refresh_token',
      'scope',
      'version',
    ]);
  });

  it.runIf(posix)('replaces the file by rename, leaves no temporary file and keeps 0600 under a permissive umask', async () => {
    const path = join(dir, 'forge-token.json');
    const file = createTokenFile({ path, log: captureLog().log });
    const previous = process.umask(0);
    try {
      await file.write(sample());
      const before = (await stat(path)).ino;
      await file.write(sample({ access_token: 'access-2', refresh_token: 'refresh-2' }));
      expect((await stat(path)).ino).not.toBe(before);
      expect((await stat(path)).mode & 0o777).toBe(0o600);
    } finally {
      process.umask(previous);
    }
    expect(await readdir(dir)).toEqual(['forge-token.json']);
    expect((await file.read())?.access_token).toBe('access-2');
  });

  it.runIf(posix)('replaces a symlink at the path instead of writing through it', async () => {
    const target = join(dir, 'elsewhere.txt');
    await writeFile(target, 'keep me');
    const path = join(dir, 'forge-token.json');
    await symlink(target, path);
    await createTokenFile({ path, log: captureLog().log }).write(sample());
    expect(await readFile(target, 'utf8')).toBe('keep me');
    expect((await stat(path)).isFile()).toBe(true);
  });

  it('treats unreadable content as no token, without logging the content', async () => {
    const path = join(dir, 'forge-token.json');
    const { log, text } = captureLog();
    const file = createTokenFile({ path, log });
    await writeFile(path, '{"access_token":"leaky-secret"', { mode: 0o600 });
    expect(await file.read()).toBeUndefined();
    await writeFile(path, JSON.stringify({ ...sample(), access_token: 'leaky-secret', extra: 'x' }), { mode: 0o600 });
    expect(await file.read()).toBeUndefined();
    expect(text()).toContain('unexpected shape');
    expect(text()).not.toContain('leaky-secret');
  });

  it.runIf(posix)('warns when the file mode lets others read it', async () => {
    const path = join(dir, 'forge-token.json');
    const { log, text } = captureLog();
    const file = createTokenFile({ path, log });
    await file.write(sample());
    await chmod(path, 0o644);
    expect(await file.read()).toEqual(sample());
    expect(text()).toContain('readable by other users');
  });

  it('removes the file and reports whether there was one', async () => {
    const path = join(dir, 'forge-token.json');
    const file = createTokenFile({ path, log: captureLog().log });
    expect(await file.remove()).toBe(false);
    await file.write(sample());
    expect(await file.remove()).toBe(true);
    expect(await file.read()).toBeUndefined();
  });
});
