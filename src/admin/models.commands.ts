import type { Command } from 'commander';
import { CliError, printJson, type CliIo, type WithService } from '../core/cli-io.ts';
import { isAppError } from '../core/errors.ts';
import type { ModelPlane } from './model-plane.ts';
import { commandRef, MAX_LOCK_VERSION } from './policy/policy.service.ts';

/** Exit code of a version conflict, so scripts can tell "someone else changed it" from other failures. */
export const CONFLICT_EXIT_CODE = 3;

type Action = 'hide' | 'unhide' | 'invalidate' | 'restore';

const ACTIONS: Record<Action, { description: string; done: string }> = {
  hide: { description: 'hide a model from every Agent of the Account (PUT model_visibility visible=false)', done: 'hidden' },
  unhide: { description: 'show a hidden model again; does not enable the provider or clear an invalid mark', done: 'shown' },
  invalidate: {
    description: 'mark a model invalid (PUT model_availability available=false); needs a provider policy',
    done: 'marked invalid',
  },
  restore: { description: 'clear the invalid mark of a model; a manual hide is kept', done: 'restored (invalid mark cleared)' },
};

/** `--expected-lock-version`: an integer from 0 through the spec's highest version. */
export function parseVersion(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) > MAX_LOCK_VERSION)
    throw new CliError(`--expected-lock-version must be an integer from 0 to ${MAX_LOCK_VERSION}`, 2);
  return Number(raw);
}

/** A version conflict as every versioned command reports it: exit 3, nothing changed, no retry. */
export function versionConflict(providerId: string, version: number | null): CliError {
  return new CliError(
    `conflict: the policy of provider ${providerId} is no longer at lock_version ${version ?? 'null'} (another change won); nothing was changed. Read the provider again and re-run.`,
    CONFLICT_EXIT_CODE,
  );
}

/** What the `models` commands work with, built by the composition root. */
export interface ModelsCommandDeps {
  plane: ModelPlane;
  accountExists: (accountId: string) => Promise<boolean>;
}

/**
 * `platform models hide|unhide|invalidate|restore --account ID <ref>`: the operator equivalents of the visibility
 * and availability commands (spec: Endpoints rule 12). Each reads the provider's lock_version first (or takes
 * `--expected-lock-version`), issues one command with it, and on a conflict reports it and exits 3 without
 * retrying. `test` is in model-test/model-test.command.ts.
 */
export function registerModelsCommands(program: Command, io: CliIo, withModelPlane: WithService<ModelsCommandDeps>): void {
  const models = program.command('models').description("manage an Account's models (hide, unhide, invalidate, restore)");
  for (const action of Object.keys(ACTIONS) as Action[]) {
    models
      .command(action)
      .description(ACTIONS[action].description)
      .requiredOption('--account <id>', 'Account id')
      .option('--expected-lock-version <n>', 'use this provider lock_version instead of reading the current one')
      .option('--json', 'print {model, action, model_provider} as JSON')
      .argument('<ref>', 'complete model reference <provider_id>/<upstream_model_id>')
      .action(async (ref: string, opts: { account: string; expectedLockVersion?: string; json?: boolean }) => {
        const slash = ref.indexOf('/');
        if (slash <= 0 || slash === ref.length - 1)
          throw new CliError(`model reference ${JSON.stringify(ref)} must look like <provider_id>/<upstream_model_id>`, 2);
        const providerId = ref.slice(0, slash);
        const pinned = opts.expectedLockVersion === undefined ? undefined : parseVersion(opts.expectedLockVersion);
        const result = await withModelPlane(async ({ plane, accountExists }) => {
          if (!(await accountExists(opts.account))) throw new CliError(`no Account with id ${opts.account}`);
          if (!plane.catalogState.ok)
            throw new CliError(`the model plane is unavailable: catalog file ${plane.catalogState.file}: ${plane.catalogState.reason}`);
          const provider = (await plane.providersOf(opts.account)).find((p) => p.id === providerId && p.source !== 'removed');
          if (!provider) throw new CliError(`unknown model provider ${providerId}`);
          // The operator's own terminal may repeat the ref; API responses never do (policy.service.ts).
          if (commandRef(provider, ref, action === 'unhide' || action === 'restore') === undefined)
            throw new CliError(`unknown model ${ref}`);
          const version = pinned !== undefined ? pinned : (provider.policy?.lockVersion ?? null);
          try {
            if (action === 'hide' || action === 'unhide')
              return await plane.setVisibility(opts.account, providerId, ref, action === 'unhide', version);
            return await plane.setAvailability(opts.account, providerId, ref, action === 'restore', version);
          } catch (error) {
            if (isAppError(error) && error.code === 'stale_object') {
              if (version === MAX_LOCK_VERSION) throw new CliError(`conflict: ${error.message}; nothing was changed.`, CONFLICT_EXIT_CODE);
              throw versionConflict(providerId, version);
            }
            throw error;
          }
        });
        if (opts.json) return printJson(io, { model: ref, action, model_provider: result.model_provider });
        io.out(
          `Model ${ref} ${ACTIONS[action].done}; provider ${providerId} is at lock_version ${result.model_provider.lock_version ?? 'null'}.`,
        );
      });
  }
}
