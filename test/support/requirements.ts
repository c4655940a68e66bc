import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './shared.ts';

/**
 * One rule of a protocol or API pinned by tests (STYLE.md 12): a stable id, where the rule comes from (a spec
 * section, an issue item, a review) and the rule itself. Tests cite the id in brackets in their name, for example
 * `it('[ADM-LOCK-2] a stale version is 409 stale_object', …)`.
 */
export interface Requirement {
  readonly id: string;
  /** Where the rule is stated. */
  readonly source: string;
  readonly rule: string;
}

/**
 * The one shape of a service's requirement list. The list is kept as written (ids as literal types, so a typo in a
 * programmatic lookup fails to compile); `describeRequirementCoverage` checks it against the tests.
 */
export function defineRequirements<const L extends readonly Requirement[]>(list: L): L {
  return list;
}

export interface TestFileOptions {
  /** Descend into sub-folders (default true). */
  recursive?: boolean;
  /** Sub-folder names not to descend into. */
  skipDirs?: readonly string[];
  /** File names to leave out (the coverage test itself, whose pattern may read as a citation). */
  exclude?: readonly string[];
}

/** The `*.test.ts` files under a folder of the repository; a missing folder has none. */
export function testFiles(dir: string, options: TestFileOptions = {}): string[] {
  const absolute = join(repoRoot, dir);
  let entries: string[];
  try {
    entries = readdirSync(absolute);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const path = join(absolute, name);
    if (statSync(path).isDirectory()) {
      return options.recursive === false || options.skipDirs?.includes(name) ? [] : testFiles(join(dir, name), options);
    }
    return name.endsWith('.test.ts') && !options.exclude?.includes(name) ? [path] : [];
  });
}

/**
 * Requirement ids cited in the given files (`[ID]`, the first capture group of `pattern`), each with the files
 * that cite it.
 */
function citedRequirements(files: readonly string[], pattern: RegExp): Map<string, Set<string>> {
  const cited = new Map<string, Set<string>>();
  for (const file of files) {
    for (const match of readFileSync(file, 'utf8').matchAll(pattern)) {
      const id = match[1] ?? '';
      if (!cited.has(id)) cited.set(id, new Set());
      cited.get(id)?.add(relative(repoRoot, file));
    }
  }
  return cited;
}

/** What a service's requirement list and its tests check against each other. */
export interface CoverageScope {
  requirements: readonly Requirement[];
  /** The test files that may cite the service's requirements. */
  files: readonly string[];
  /** Matches a citation; the first capture group is the id. Global. */
  pattern: RegExp;
}

/** What is wrong between a list and its tests: ids listed twice, requirements no test cites, cited unknown ids. */
export interface CoverageGaps {
  duplicates: string[];
  /** `ID: rule` of each requirement without a citing test. */
  uncited: string[];
  unknown: string[];
}

export function requirementGaps(scope: CoverageScope): CoverageGaps {
  const cited = citedRequirements(scope.files, scope.pattern);
  const ids = scope.requirements.map((r) => r.id);
  const known = new Set(ids);
  return {
    duplicates: ids.filter((id, i) => ids.indexOf(id) !== i),
    uncited: scope.requirements.filter((r) => !cited.has(r.id)).map((r) => `${r.id}: ${r.rule}`),
    unknown: [...cited.keys()].filter((id) => !known.has(id)),
  };
}

/**
 * The one coverage test of a service's requirement list: unique ids, every requirement cited by at least one test,
 * and tests citing only listed ids. `listFile` names the list in failure messages.
 */
export function describeRequirementCoverage(title: string, listFile: string, scope: CoverageScope): void {
  describe(title, () => {
    const gaps = requirementGaps(scope);

    it('has unique ids', () => {
      expect(gaps.duplicates, `ids listed twice in ${listFile}`).toEqual([]);
    });

    it('every requirement is cited by at least one test', () => {
      expect(gaps.uncited, 'requirements without a test citing them').toEqual([]);
    });

    it('tests cite only known requirements', () => {
      expect(gaps.unknown, `cited ids missing from ${listFile}`).toEqual([]);
    });
  });
}
