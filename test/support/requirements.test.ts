import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defineRequirements, requirementGaps } from './requirements.ts';

// The coverage test every service uses must be able to fail: each gap it looks for is found here.
describe('requirement coverage', () => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-requirements-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'x.test.ts');
  writeFileSync(file, "it('[XR-ONE] does one thing', () => {});\nit('[XR-GONE] cites a removed rule', () => {});\n");
  const pattern = /\[(XR-[A-Z]+)\]/g;

  it('finds a requirement no test cites and an unknown cited id', () => {
    const requirements = defineRequirements([
      { id: 'XR-ONE', source: 'here', rule: 'one' },
      { id: 'XR-TWO', source: 'here', rule: 'two' },
    ]);
    expect(requirementGaps({ requirements, files: [file], pattern })).toEqual({
      duplicates: [],
      uncited: ['XR-TWO: two'],
      unknown: ['XR-GONE'],
    });
  });

  it('finds an id listed twice', () => {
    const requirements = defineRequirements([
      { id: 'XR-ONE', source: 'here', rule: 'one' },
      { id: 'XR-GONE', source: 'here', rule: 'gone' },
      { id: 'XR-ONE', source: 'there', rule: 'one again' },
    ]);
    expect(requirementGaps({ requirements, files: [file], pattern })).toEqual({ duplicates: ['XR-ONE'], uncited: [], unknown: [] });
  });
});
