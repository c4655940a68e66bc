import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Root of the repository checkout. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The reference data the suite reads, kept in the repository (`test/fixtures/SOURCE.md` names the origin and licence
 * of every file) so that a fresh clone tests itself with nothing beside it.
 */
const fixturesDir = join(repoRoot, 'test', 'fixtures');

/** A path inside `test/fixtures`; throws when it is missing, which is a bug of the checkout, never of the machine. */
export function fixturePath(...parts: string[]): string {
  const path = join(fixturesDir, ...parts);
  if (!existsSync(path)) throw new Error(`test fixture not found at ${path} (see test/fixtures/SOURCE.md)`);
  return path;
}

/**
 * The shared reference folder beside the checkout (`../shared`), or `PLATFORM_SHARED_DIR`. Only the bulk OSV archives
 * (~10 MB) are read from there; they are too large to carry in the repository.
 */
const sharedDir = process.env.PLATFORM_SHARED_DIR ?? resolve(repoRoot, '..', 'shared');

export type BulkFile = 'go-vulndb.jsonl' | 'pypa-pysec.jsonl';
const BULK_FILES: readonly BulkFile[] = ['go-vulndb.jsonl', 'pypa-pysec.jsonl'];

/** Where a bulk archive is expected; throws a clear error naming the path when it is missing. */
export function bulkPath(file: BulkFile): string {
  const path = join(sharedDir, 'osv-data', 'bulk', file);
  if (!existsSync(path))
    throw new Error(`OSV bulk archive not found at ${path} (set PLATFORM_SHARED_DIR to the folder holding osv-data/bulk)`);
  return path;
}

/** The first bulk archive that is missing, or undefined when all are there. */
export const bulkMissing: string | undefined = BULK_FILES.map((f) => join(sharedDir, 'osv-data', 'bulk', f)).find((p) => !existsSync(p));

/**
 * Tests that need the bulk archives skip without them (`describe.skipIf(skipWithoutBulk)`), so a fresh clone passes
 * on its own; `test/support/global-setup.ts` prints the one line saying so. Under CI=true they never skip: they run
 * and fail on `bulkPath`'s error, because CI has the shared folder and must prove the corpus tests.
 */
export const skipWithoutBulk = bulkMissing !== undefined && process.env.CI !== 'true';
