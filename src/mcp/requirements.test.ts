import { describeRequirementCoverage, testFiles } from '../../test/support/requirements.ts';
import { REQUIREMENTS } from './requirements.ts';

// The remote MCP server: src/mcp without the local flow in src/mcp/local, and test/mcp.
describeRequirementCoverage('MCP requirements', 'src/mcp/requirements.ts', {
  requirements: REQUIREMENTS,
  files: [
    ...testFiles('src/mcp', { skipDirs: ['local'], exclude: ['requirements.test.ts'] }),
    ...testFiles('test/mcp', { exclude: ['requirements.test.ts'] }),
  ],
  pattern: /\[([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)\]/g,
});
