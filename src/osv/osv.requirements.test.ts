import { describeRequirementCoverage, testFiles } from '../../test/support/requirements.ts';
import { OSV_REQUIREMENTS } from './osv.requirements.ts';

// PlatformOSV: the top of src/osv (the comparators in src/osv/ecosystems have their own tests) and test/osv.
describeRequirementCoverage('OSV requirements', 'src/osv/osv.requirements.ts', {
  requirements: OSV_REQUIREMENTS,
  files: ['src/osv', 'test/osv'].flatMap((f) => testFiles(f, { recursive: false, exclude: ['osv.requirements.test.ts'] })),
  pattern: /\[(OSV-[A-Z0-9-]+)\]/gu,
});
