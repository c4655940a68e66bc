// docs/osv.md, "Where the data comes from": the download URLs have OSV.dev's bucket layout, and the commands shown
// work on the file they download. This machine has no internet, so the `curl` is replaced by an OSV.dev-shaped
// `all.zip` made here (one `<id>.json` per record at the archive's root, as in the bucket), and the `npx platform`
// lines run as written, in the directory the download would land in.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { KNOWN_ECOSYSTEMS } from '../../src/osv/ecosystems/ecosystems.ts';
import { runCli } from '../support/cli.ts';
import { dialects, openTestDatabase, type TestDatabase } from '../support/databases.ts';
import { repoRoot } from '../support/shared.ts';

const BUCKET = 'https://osv-vulnerabilities.storage.googleapis.com/';

/** The shell lines of the first `sh` block under the section heading. */
function exampleLines(): string[] {
  const doc = readFileSync(join(repoRoot, 'docs', 'osv.md'), 'utf8');
  const section = doc.split('\n## Where the data comes from\n')[1]?.split('\n## ')[0] ?? '';
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** A ZIP archive of stored (uncompressed) entries: the smallest valid shape of OSV.dev's all.zip. */
function storedZip(entries: { name: string; data: Buffer }[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const crc = crc32(entry.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(entry.data.length, 18);
    local.writeUInt32LE(entry.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    parts.push(local, name, entry.data);
    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(20, 6);
    header.writeUInt16LE(0x0800, 8);
    header.writeUInt32LE(crc, 16);
    header.writeUInt32LE(entry.data.length, 20);
    header.writeUInt32LE(entry.data.length, 24);
    header.writeUInt16LE(name.length, 28);
    header.writeUInt32LE(offset, 42);
    central.push(header, name);
    offset += 30 + name.length + entry.data.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, directory, end]);
}

function record(id: string, name: string, fixed: string): { name: string; data: Buffer } {
  const body = {
    schema_version: '1.7.5',
    id,
    modified: '2025-01-02T03:04:05Z',
    summary: `a vulnerability in ${name}`,
    affected: [{ package: { ecosystem: 'PyPI', name }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed }] }] }],
  };
  return { name: `${id}.json`, data: Buffer.from(JSON.stringify(body)) };
}

describe.each(dialects)('docs/osv.md import example on %s', (dialect) => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  it('downloads from the OSV.dev bucket layout and imports the downloaded all.zip with the commands shown', async () => {
    const lines = exampleLines();
    const downloads = lines.filter((l) => l.startsWith('curl '));
    const commands = lines.filter((l) => l.startsWith('npx platform '));
    expect(downloads.length).toBeGreaterThan(0);
    expect(commands.map((c) => c.split(' ').slice(2, 4).join(' '))).toEqual(['osv import', 'osv status']);
    expect(lines).toHaveLength(downloads.length + commands.length);

    const dir = mkdtempSync(join(tmpdir(), 'osv-docs-'));
    for (const line of downloads) {
      const url = /(https:\/\/\S+)/.exec(line)?.[1] ?? '';
      // `curl -O` keeps the last path segment as the file name.
      expect(line).toMatch(/^curl -fLO /);
      expect(url.startsWith(BUCKET)).toBe(true);
      const path = url.slice(BUCKET.length).split('/');
      expect(path).toHaveLength(2);
      expect(KNOWN_ECOSYSTEMS).toContain(path[0]);
      expect(path[1]).toBe('all.zip');
      writeFileSync(
        join(dir, basename(url)),
        storedZip([record('PYSEC-0000-0001', 'examplepkg', '1.2.3'), record('PYSEC-0000-0002', 'otherpkg', '2.0')]),
      );
    }

    database = await openTestDatabase(dialect);
    const env = { DATABASE_URL: database.url, PLATFORM_DATA_DIR: dir, PLATFORM_SECRET_KEY: Buffer.alloc(32, 5).toString('base64') };
    const outputs: string[] = [];
    for (const line of commands) {
      // Relative paths are the download directory's, where a user runs the commands.
      const argv = line
        .split(/\s+/)
        .slice(2)
        .map((a) => (a.startsWith('./') ? join(dir, a) : a));
      const run = await runCli([...argv, ...(argv[1] === 'import' ? ['--quiet'] : [])], env);
      expect(run.code, `${line}: ${run.stderr}`).toBe(0);
      outputs.push(run.stdout);
    }
    expect(outputs[1]).toMatch(/^2 records \(0 withdrawn\)/);
  });
});
