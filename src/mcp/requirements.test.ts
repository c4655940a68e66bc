import { describe, expect, it } from 'vitest';
import { citedRequirements, testFiles } from '../../test/support/requirements.ts';
import { REQUIREMENTS } from './requirements.ts';

describe('requirements list', () => {
  // The remote MCP server: src/mcp without the local flow in src/mcp/local, and test/mcp.
  const files = [
    ...testFiles('src/mcp', { skipDirs: ['local'], exclude: ['requirements.test.ts'] }),
    ...testFiles('test/mcp', { exclude: ['requirements.test.ts'] }),
  ];
  const cited = citedRequirements(files, /\[([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)\]/g);

  it('has unique ids', () => {
    const ids = REQUIREMENTS.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('every requirement is cited by at least one test', () => {
    const uncited = REQUIREMENTS.filter((r) => !cited.has(r.id)).map((r) => `${r.id}: ${r.rule}`);
    expect(uncited, 'requirements without a test citing them').toEqual([]);
  });

  it('tests cite only known requirements', () => {
    const known = new Set(REQUIREMENTS.map((r) => r.id));
    expect([...cited.keys()].filter((id) => !known.has(id))).toEqual([]);
  });
});
