import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REQUIREMENTS } from './requirements.ts';

const root = resolve(import.meta.dirname, '..', '..');
const FOLDERS = ['src/admin', 'src/member', 'test/admin', 'test/member'];

function testFiles(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith('.test.ts') && name !== 'requirements.test.ts' ? [path] : [];
  });
}

/** `[ADM-…]` citations per test file. */
function citations(): Map<string, Set<string>> {
  const cited = new Map<string, Set<string>>();
  for (const file of FOLDERS.flatMap((f) => testFiles(join(root, f)))) {
    for (const match of readFileSync(file, 'utf8').matchAll(/\[(ADM-[A-Z]+-\d+)\]/g)) {
      const id = match[1] ?? '';
      if (!cited.has(id)) cited.set(id, new Set());
      cited.get(id)?.add(relative(root, file));
    }
  }
  return cited;
}

describe('admin API requirements', () => {
  const cited = citations();

  it('has a citing test for every requirement', () => {
    const uncovered = Object.keys(REQUIREMENTS).filter((id) => !cited.has(id));
    expect(uncovered, 'requirements without a test citing them').toEqual([]);
  });

  it('cites only known requirement ids', () => {
    const unknown = [...cited.keys()].filter((id) => !Object.hasOwn(REQUIREMENTS, id));
    expect(unknown, 'cited ids missing from src/admin/requirements.ts').toEqual([]);
  });
});
