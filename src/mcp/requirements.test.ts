import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../test/support/shared.ts';
import { REQUIREMENTS } from './requirements.ts';

/** Test files of the remote MCP server (src/mcp, not the local flow in src/mcp/local, and test/mcp). */
function testFiles(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'local' ? [] : testFiles(path);
    return name.endsWith('.test.ts') && name !== 'requirements.test.ts' ? [path] : [];
  });
}

describe('requirements list', () => {
  const files = [...testFiles(join(repoRoot, 'src', 'mcp')), ...testFiles(join(repoRoot, 'test', 'mcp'))];
  const text = files.map((f) => readFileSync(f, 'utf8')).join('\n');

  it('has unique ids', () => {
    const ids = REQUIREMENTS.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('every requirement is cited by at least one test', () => {
    const uncited = REQUIREMENTS.filter((r) => !text.includes(`[${r.id}]`)).map((r) => `${r.id}: ${r.rule}`);
    expect(uncited, `requirements without a test citing them (in ${files.map((f) => relative(repoRoot, f)).join(', ')})`).toEqual([]);
  });

  it('tests cite only known requirements', () => {
    const known = new Set(REQUIREMENTS.map((r) => r.id));
    const cited = [...text.matchAll(/\[([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)\]/g)].map((m) => m[1] ?? '');
    expect(cited.filter((id) => !known.has(id))).toEqual([]);
  });
});
