import type { Command } from 'commander';
import { printJson, type CliIo, type WithService } from '../../core/cli-io.ts';
import { planeFor, versioned, versionOf } from '../definitions/definitions.commands.ts';
import type { ModelsCommandDeps } from '../models.commands.ts';

/**
 * `platform providers discover --account ID PROVIDER`: the operator equivalent of `POST …/model_discovery`. Reads the
 * provider's lock_version first (or takes `--expected-lock-version`), runs one discovery, prints the directory, and on
 * a conflict reports it and exits 3; it never retries.
 */
export function registerDiscoveryCommand(program: Command, io: CliIo, withModelPlane: WithService<ModelsCommandDeps>): void {
  const providers = program.commands.find((c) => c.name() === 'providers') ?? program.command('providers');
  providers
    .command('discover')
    .description("read the provider's model directory; configured models it does not list are marked invalid, listed ones cleared")
    .requiredOption('--account <id>', 'Account id')
    .option('--expected-lock-version <n>', 'use this provider lock_version instead of reading the current one')
    .option('--json', 'print {models: [{id, display_name}]} as JSON')
    .argument('<provider_id>', 'provider id')
    .action(async (providerId: string, opts: { account: string; expectedLockVersion?: string; json?: boolean }) => {
      const { result, version } = await withModelPlane(async (deps) => {
        const plane = await planeFor(deps, opts.account);
        const version = await versionOf(plane, opts.account, providerId, opts.expectedLockVersion);
        return { result: await versioned(providerId, version, () => plane.discoverModels(opts.account, providerId, version)), version };
      });
      if (opts.json) return printJson(io, result);
      io.out(`Provider ${providerId} lists ${result.models.length} models (read at lock_version ${version ?? 'null'}):`);
      for (const m of result.models) io.out(`  ${m.id}${m.display_name ? `  ${m.display_name}` : ''}`);
    });
}
