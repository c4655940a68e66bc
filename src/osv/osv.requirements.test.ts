import { describe, expect, it } from 'vitest';
import { citedRequirements, testFiles } from '../../test/support/requirements.ts';
import { OSV_REQUIREMENTS } from './osv.requirements.ts';

describe('OSV requirements list', () => {
  // PlatformOSV: the top of src/osv (the comparators in src/osv/ecosystems have their own tests) and test/osv.
  const options = { recursive: false, exclude: ['osv.requirements.test.ts'] };
  const cited = citedRequirements([...testFiles('src/osv', options), ...testFiles('test/osv', options)], /\[(OSV-[A-Z0-9-]+)\]/gu);

  it('has unique ids', () => {
    const ids = OSV_REQUIREMENTS.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('every requirement is cited by at least one test', () => {
    expect(OSV_REQUIREMENTS.filter((r) => !cited.has(r.id)).map((r) => `${r.id}: ${r.rule}`)).toEqual([]);
  });

  it('tests cite only known requirements', () => {
    const known = new Set(OSV_REQUIREMENTS.map((r) => r.id));
    expect([...cited.keys()].filter((id) => !known.has(id))).toEqual([]);
  });
});
