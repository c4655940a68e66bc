import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../test/support/cli.ts';
import { dialects } from '../../test/support/databases.ts';
import { openTestPlatform, startRestApp, type TestPlatform } from '../../test/support/platform.ts';

/**
 * End to end (issue 5): the CLI encrypts a file, the database holds no byte sequence of its plaintext (nor its
 * name, nor the key), and the CLI decrypts it back identical.
 */

/** Every stored value of every column of the documents table, as bytes. */
async function storedBytes(platform: TestPlatform): Promise<Buffer[]> {
  const rows = await sql<Record<string, unknown>>`select * from documents`.execute(platform.ctx.database.db);
  const out: Buffer[] = [];
  for (const row of rows.rows) {
    for (const value of Object.values(row)) {
      if (value === null || value === undefined) continue;
      out.push(Buffer.isBuffer(value) ? value : Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)));
    }
  }
  return out;
}

/** The 8-byte windows of `haystacks` that also occur in `needle` (none, for a good encryption). */
function sharedWindows(needle: Buffer, haystacks: Buffer[], width = 8): string[] {
  const windows = new Set<string>();
  for (const h of haystacks) for (let i = 0; i + width <= h.length; i++) windows.add(h.toString('hex', i, i + width));
  const found: string[] = [];
  for (let i = 0; i + width <= needle.length; i++) {
    const w = needle.toString('hex', i, i + width);
    if (windows.has(w)) found.push(w);
  }
  return found;
}

for (const dialect of dialects) {
  describe(`platform documents CLI (${dialect})`, () => {
    let platform: TestPlatform;
    let rest: Awaited<ReturnType<typeof startRestApp>>;
    let env: Record<string, string>;
    const dir = mkdtempSync(join(tmpdir(), 'doc-cli-'));

    beforeAll(async () => {
      platform = await openTestPlatform(dialect);
      rest = await startRestApp(platform);
      env = { PLATFORM_URL: rest.url, PLATFORM_TOKEN: platform.owner.platform_token };
    });
    afterAll(async () => {
      await rest?.close();
      await platform?.close();
    });

    it('encrypts on put, stores no plaintext, and decrypts on get to identical bytes', async () => {
      const keyFile = join(dir, 'team.key');
      const keygen = await runCli(['documents', 'keygen', '--out', keyFile, '--json'], env);
      expect(keygen.code).toBe(0);
      const { key_id: keyId } = JSON.parse(keygen.stdout) as { key_id: string };
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      const key = Buffer.from((JSON.parse(readFileSync(keyFile, 'utf8')) as { key: string }).key, 'base64url');

      // Text (low entropy, with a recognisable phrase) followed by random bytes.
      const plaintext = Buffer.concat([
        Buffer.from('CONFIDENTIAL merger plan: acquire Initech for 12 million.\n'.repeat(200)),
        randomBytes(20_000),
      ]);
      const file = join(dir, 'merger-plan-secret.txt');
      writeFileSync(file, plaintext);

      const put = await runCli(['documents', 'put', file, '--key-file', keyFile, '--json'], env);
      expect(put.stderr).toBe('');
      expect(put.code).toBe(0);
      const created = JSON.parse(put.stdout) as { id: string; size_bytes: string; key_id: string };
      expect(created).toMatchObject({ key_id: keyId, size_bytes: String(plaintext.length + 16) });
      const plainPut = await runCli(['documents', 'put', file, '--key-file', keyFile], env);
      expect(plainPut.stdout.trim()).toMatch(/^[0-9a-f-]{36}$/);

      // The database: no 8-byte run of the plaintext, no file name, no key.
      const stored = await storedBytes(platform);
      expect(stored.length).toBeGreaterThan(0);
      expect(sharedWindows(plaintext, stored)).toEqual([]);
      expect(stored.some((b) => b.includes(Buffer.from('merger-plan')))).toBe(false);
      expect(sharedWindows(key, stored)).toEqual([]);
      if (dialect === 'sqlite') {
        // The raw database files too (main file and write-ahead log).
        const path = platform.database.url.slice('sqlite:'.length);
        const files = [path, `${path}-wal`].filter(existsSync).map((f) => readFileSync(f));
        expect(sharedWindows(plaintext.subarray(0, 4096), files)).toEqual([]);
        expect(files.some((b) => b.includes(Buffer.from('merger-plan')))).toBe(false);
      }

      const listed = await runCli(['documents', 'list', '--json', '--key-file', keyFile], env);
      expect(listed.code).toBe(0);
      const rows = JSON.parse(listed.stdout) as { id: string; name?: string; key_id: string }[];
      expect(rows.find((r) => r.id === created.id)).toMatchObject({ name: 'merger-plan-secret.txt', key_id: keyId });
      const listedPlain = await runCli(['documents', 'list'], env);
      expect(listedPlain.stdout).toContain(created.id);
      expect(listedPlain.stdout).not.toContain('merger-plan');

      const out = join(dir, 'decrypted.txt');
      const get = await runCli(['documents', 'get', created.id, '--key-file', keyFile, '--out', out], env);
      expect(get.code).toBe(0);
      expect(readFileSync(out).equals(plaintext)).toBe(true);
      expect(statSync(out).mode & 0o777).toBe(0o600);
      const again = await runCli(['documents', 'get', created.id, '--key-file', keyFile, '--out', out], env);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('already exists');

      const otherKey = join(dir, 'other.key');
      expect((await runCli(['documents', 'keygen', '--out', otherKey], env)).code).toBe(0);
      const wrong = await runCli(['documents', 'get', created.id, '--key-file', otherKey, '--out', join(dir, 'wrong.txt')], env);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain(`encrypted with key ${keyId}`);

      const deleted = await runCli(['documents', 'delete', created.id], env);
      expect(deleted.code).toBe(0);
      const gone = await runCli(['documents', 'get', created.id, '--key-file', keyFile, '--out', join(dir, 'gone.txt')], env);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toContain('no document');
    });

    it('explains missing configuration and server refusals in one line', async () => {
      const missing = await runCli(['documents', 'list'], { PLATFORM_URL: rest.url });
      expect(missing.code).toBe(1);
      expect(missing.stderr.trim()).toBe('error: PLATFORM_TOKEN is not set: export a platform-plane token with the document capabilities');
      const refused = await runCli(['documents', 'list'], { PLATFORM_URL: rest.url, PLATFORM_TOKEN: 'pplat_nope' });
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim()).toBe('error: the server answered 401: a valid credential is required');
      const unreachable = await runCli(['documents', 'delete', 'x'], { PLATFORM_URL: 'http://127.0.0.1:9', PLATFORM_TOKEN: 'pplat_nope' });
      expect(unreachable.code).toBe(1);
      expect(unreachable.stderr).toContain('cannot reach http://127.0.0.1:9');
      const keyless = await runCli(['documents', 'put', join(dir, 'nothing'), '--key-file', join(dir, 'absent.key')], env);
      expect(keyless.code).toBe(1);
      expect(keyless.stderr).toContain('cannot read key file');
    });
  });
}
