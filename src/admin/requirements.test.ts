import { describe, expect, it } from 'vitest';
import { citedRequirements, testFiles } from '../../test/support/requirements.ts';
import { REQUIREMENTS } from './requirements.ts';

const FOLDERS = ['src/admin', 'src/member', 'test/admin', 'test/member'];

describe('admin API requirements', () => {
  const files = FOLDERS.flatMap((f) => testFiles(f, { exclude: ['requirements.test.ts'] }));
  const cited = citedRequirements(files, /\[(ADM-[A-Z]+-\d+)\]/g);

  it('has a citing test for every requirement', () => {
    const uncovered = Object.keys(REQUIREMENTS).filter((id) => !cited.has(id));
    expect(uncovered, 'requirements without a test citing them').toEqual([]);
  });

  it('cites only known requirement ids', () => {
    const unknown = [...cited.keys()].filter((id) => !Object.hasOwn(REQUIREMENTS, id));
    expect(unknown, 'cited ids missing from src/admin/requirements.ts').toEqual([]);
  });
});
