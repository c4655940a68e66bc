import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../test/support/shared.ts';
import { OSV_REQUIREMENTS } from './osv.requirements.ts';

/** Test files of PlatformOSV (src/osv without the comparators, and test/osv). */
function testFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.test.ts') && name !== 'osv.requirements.test.ts')
    .map((name) => join(dir, name));
}

describe('OSV requirements list', () => {
  const text = [...testFiles(join(repoRoot, 'src', 'osv')), ...testFiles(join(repoRoot, 'test', 'osv'))].map((f) => readFileSync(f, 'utf8')).join('\n');

  it('has unique ids', () => {
    const ids = OSV_REQUIREMENTS.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('every requirement is cited by at least one test', () => {
    expect(OSV_REQUIREMENTS.filter((r) => !text.includes(`[${r.id}]`)).map((r) => `${r.id}: ${r.rule}`)).toEqual([]);
  });

  it('tests cite only known requirements', () => {
    const known = new Set(OSV_REQUIREMENTS.map((r) => r.id));
    const cited = [...text.matchAll(/\[(OSV-[A-Z0-9-]+)\]/gu)].map((m) => m[1] ?? '');
    expect(cited.filter((id) => !known.has(id))).toEqual([]);
  });
});
