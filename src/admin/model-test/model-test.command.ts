import type { Command } from 'commander';
import { CliError, printJson, type CliIo, type WithService } from '../../core/cli-io.ts';
import { planeFor, splitRef, versionOf } from '../definitions/definitions.commands.ts';
import { CONFLICT_EXIT_CODE, type ModelsCommandDeps } from '../models.commands.ts';

/**
 * `platform models test --account ID REF`: the operator equivalent of `POST …/model_test` (spec rule 12). Reads the
 * provider's lock_version first (or takes `--expected-lock-version`), sends the one fixed probe, prints the outcome,
 * and exits 3 when the availability write lost to another change (`stale`), 1 when the outcome is not `succeeded`;
 * it never retries. The operator's terminal is not a Human session, so the per-Human rate limit does not apply.
 */
export function registerModelTestCommand(program: Command, io: CliIo, withModelPlane: WithService<ModelsCommandDeps>): void {
  const models = program.commands.find((c) => c.name() === 'models') ?? program.command('models');
  models
    .command('test')
    .description('send one fixed diagnostic request to the model and report the outcome (30 s deadline, no retry)')
    .requiredOption('--account <id>', 'Account id')
    .option('--expected-lock-version <n>', 'use this provider lock_version instead of reading the current one')
    .option('--json', 'print {model_test, model_provider} as JSON')
    .argument('<ref>', 'complete model reference <provider_id>/<upstream_model_id>')
    .action(async (ref: string, opts: { account: string; expectedLockVersion?: string; json?: boolean }) => {
      const providerId = splitRef(ref);
      const result = await withModelPlane(async (deps) => {
        const plane = await planeFor(deps, opts.account);
        const version = await versionOf(plane, opts.account, providerId, opts.expectedLockVersion);
        return plane.testModel(opts.account, null, providerId, ref, version);
      });
      const { model_test: test, model_provider: row } = result;
      if (opts.json) printJson(io, result);
      else
        io.out(
          `Model ${ref}: ${test.outcome}${test.http_status === null ? '' : ` (HTTP ${test.http_status})`} in ${test.duration_ms} ms; availability ${test.availability_update}; provider ${row.id} is at lock_version ${row.lock_version ?? 'null'}.`,
        );
      if (test.availability_update === 'stale')
        throw new CliError('conflict: another change won while the test ran; its availability result was not saved.', CONFLICT_EXIT_CODE);
      if (test.outcome !== 'succeeded') throw new CliError(`the model test did not succeed: ${test.outcome}`);
    });
}
