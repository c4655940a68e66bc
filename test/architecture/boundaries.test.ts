import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { boundariesConfig } from '../../eslint.boundaries.js';
import { repoRoot } from '../support/shared.ts';

// The boundary rule checked on imports written for the test, linted as if they were files at the given paths: the
// rule must refuse the crossings the README's design notes forbid and accept the ones they allow.
const eslint = new ESLint({
  cwd: repoRoot,
  overrideConfigFile: true,
  overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: (await import('typescript-eslint')).parser } }, boundariesConfig],
});

async function boundaryErrors(filePath: string, source: string): Promise<string[]> {
  // An import the resolver cannot follow is not checked at all, so a fixture naming a missing file would pass.
  for (const [, target] of source.matchAll(/from '([^']+)'/g))
    expect(existsSync(join(repoRoot, dirname(filePath), target ?? '')), target).toBe(true);
  const [result] = await eslint.lintText(source, { filePath });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`);
}

describe('service boundaries (eslint.boundaries.js)', () => {
  it('refuses core importing a service', async () => {
    const errors = await boundaryErrors(
      'src/core/boundary-fixture.ts',
      "import { REQUIREMENTS } from '../admin/admin.routes.ts';\nexport const x = REQUIREMENTS;\n",
    );
    expect(errors).toEqual([expect.stringContaining('boundaries/dependencies')]);
  });

  it('refuses a service importing another service it does not use', async () => {
    const errors = await boundaryErrors(
      'src/osv/boundary-fixture.ts',
      "import { createAdminRoutes } from '../admin/admin.routes.ts';\nexport const x = createAdminRoutes;\n",
    );
    expect(errors).toEqual([expect.stringContaining('boundaries/dependencies')]);
  });

  it('refuses a used service reached past its index.ts', async () => {
    const errors = await boundaryErrors(
      'src/member/boundary-fixture.ts',
      "import { x } from '../admin/model-plane.ts';\nexport const y = x;\n",
    );
    expect(errors).toEqual([expect.stringContaining('boundaries/dependencies')]);
  });

  it('refuses a service importing the composition root or the CLI', async () => {
    for (const target of ['../app/context.ts', '../cli/io.ts']) {
      const errors = await boundaryErrors('src/admin/boundary-fixture.ts', `import { x } from '${target}';\nexport const y = x;\n`);
      expect(errors, target).toEqual([expect.stringContaining('boundaries/dependencies')]);
    }
  });

  it('refuses production code importing test support', async () => {
    const errors = await boundaryErrors(
      'src/osv/boundary-fixture.ts',
      "import { repoRoot } from '../../test/support/shared.ts';\nexport const y = repoRoot;\n",
    );
    expect(errors).toEqual([expect.stringContaining('boundaries/dependencies')]);
  });

  it('accepts core from a service, a used service through its index.ts, and anything from the entry points', async () => {
    expect(
      await boundaryErrors('src/osv/boundary-fixture.ts', "import { AppError } from '../core/errors.ts';\nexport const y = AppError;\n"),
    ).toEqual([]);
    expect(await boundaryErrors('src/member/boundary-fixture.ts', "import { x } from '../admin/index.ts';\nexport const y = x;\n")).toEqual(
      [],
    );
    expect(await boundaryErrors('src/app/boundary-fixture.ts', "import { x } from '../osv/osv.store.ts';\nexport const y = x;\n")).toEqual(
      [],
    );
  });
});
