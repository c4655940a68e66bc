import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Root of the repository checkout. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The shared reference folder that sits beside the checkout (`../shared`), or `PLATFORM_SHARED_DIR`.
 * Tests read specifications and OSV data from there instead of copying them into the repository.
 */
export const sharedDir = process.env.PLATFORM_SHARED_DIR ?? resolve(repoRoot, '..', 'shared');

/** A path inside the shared folder; throws a clear error when the folder is missing. */
export function sharedPath(...parts: string[]): string {
  const path = join(sharedDir, ...parts);
  if (!existsSync(path)) throw new Error(`shared reference data not found at ${path} (set PLATFORM_SHARED_DIR)`);
  return path;
}
