import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { repoRoot } from './shared.ts';

export interface TestFileOptions {
  /** Descend into sub-folders (default true). */
  recursive?: boolean;
  /** Sub-folder names not to descend into. */
  skipDirs?: readonly string[];
  /** File names to leave out (the coverage test itself). */
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
 * that cite it: what the requirements-coverage tests of the OAuth modes, the admin API and OSV matching check.
 */
export function citedRequirements(files: readonly string[], pattern: RegExp): Map<string, Set<string>> {
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
