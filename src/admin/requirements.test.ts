import { describeRequirementCoverage, testFiles } from '../../test/support/requirements.ts';
import { REQUIREMENTS } from './requirements.ts';

// The admin API and the member plane.
describeRequirementCoverage('admin API requirements', 'src/admin/requirements.ts', {
  requirements: REQUIREMENTS,
  files: ['src/admin', 'src/member', 'test/admin', 'test/member'].flatMap((f) => testFiles(f, { exclude: ['requirements.test.ts'] })),
  pattern: /\[(ADM-[A-Z]+-\d+)\]/g,
});
