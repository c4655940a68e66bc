import type { Reporter, SerializedError, TestModule } from 'vitest/node';

/**
 * Ends a run with one plain line, `tests: N passed, N failed, N skipped`, that CI tooling reads to tell a run
 * that executed tests from one that ran none. A run with unhandled errors counts them as failures, and so
 * does a file that failed outside its tests.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failedHere += 1;
        else skipped += 1;
      }
      // A file that failed with no failing test (an import error, a failing beforeAll/afterAll) counts once, so
      // the line never says 0 failed for a run that exits non-zero.
      failed += module.state() === 'failed' && failedHere === 0 ? 1 : failedHere;
    }
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
