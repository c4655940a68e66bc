// Runs once in the main vitest process, so the notice about skipped bulk tests is one line, not one per file.
import { bulkMissing, skipWithoutBulk } from './shared.ts';

export default function setup(): void {
  if (skipWithoutBulk) {
    console.warn(
      `\n!!! OSV bulk archives not found at ${bulkMissing ?? ''}: the tests that import them are SKIPPED ` +
        `(put the shared folder beside the checkout as ../shared or set PLATFORM_SHARED_DIR; under CI=true they fail instead)\n`,
    );
  }
}
