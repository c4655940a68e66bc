import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { CliError, printJson, type CliIo, type WithService } from '../../core/cli-io.ts';
import { isAppError } from '../../core/errors.ts';
import { modelDefinitionSchema, providerDeclarationSchema } from '../catalog/catalog.schemas.ts';
import type { ModelPlane, ProviderEnvelope } from '../model-plane.ts';
import { parseVersion, versionConflict, type ModelsCommandDeps } from '../models.commands.ts';

interface CommonOptions {
  account: string;
  expectedLockVersion?: string;
  json?: boolean;
}

interface DefinitionOptions extends CommonOptions {
  file?: string;
  definition?: string;
}

/** The definition given by `--file` (JSON or YAML) or `--definition` (inline JSON), checked by the routes' grammar. */
function readDefinition<S extends z.ZodType>(opts: DefinitionOptions, schema: S): z.infer<S> {
  if ((opts.file === undefined) === (opts.definition === undefined))
    throw new CliError('give the definition with exactly one of --file PATH or --definition JSON', 2);
  let value: unknown;
  try {
    if (opts.file !== undefined) {
      const text = readFileSync(opts.file, 'utf8');
      value = opts.file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
    } else {
      value = JSON.parse(opts.definition ?? '');
    }
  } catch (error) {
    throw new CliError(
      `the definition is not valid ${opts.file?.endsWith('.json') || opts.file === undefined ? 'JSON' : 'YAML'}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
    );
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new CliError(
      `invalid definition: ${issue ? `${['definition', ...issue.path.map(String)].join('.')}: ${issue.message}` : 'invalid'}`,
    );
  }
  return result.data;
}

/** Opens the plane for an existing Account, or fails with one line. */
export async function planeFor(deps: ModelsCommandDeps, accountId: string): Promise<ModelPlane> {
  if (!(await deps.accountExists(accountId))) throw new CliError(`no Account with id ${accountId}`);
  const plane = deps.plane;
  if (!plane.catalogState.ok)
    throw new CliError(`the model plane is unavailable: catalog file ${plane.catalogState.file}: ${plane.catalogState.reason}`);
  return plane;
}

/** The provider's current lock_version (null without a policy), unless pinned with --expected-lock-version. */
export async function versionOf(
  plane: ModelPlane,
  accountId: string,
  providerId: string,
  pinned: string | undefined,
): Promise<number | null> {
  if (pinned !== undefined) return parseVersion(pinned);
  const provider = (await plane.providersOf(accountId)).find((p) => p.id === providerId);
  return provider?.policy?.lockVersion ?? null;
}

/** Runs one versioned command; a version conflict is reported, exit 3, never retried (spec rule 12's habit). */
export async function versioned<T>(providerId: string, version: number | null, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isAppError(error) && error.code === 'stale_object') throw versionConflict(providerId, version);
    throw error;
  }
}

export function splitRef(ref: string): string {
  const slash = ref.indexOf('/');
  if (slash <= 0 || slash === ref.length - 1)
    throw new CliError(`model reference ${JSON.stringify(ref)} must look like <provider_id>/<upstream_model_id>`, 2);
  return ref.slice(0, slash);
}

function report(io: CliIo, json: boolean | undefined, envelope: ProviderEnvelope, line: string): void {
  if (json) printJson(io, envelope);
  else
    io.out(
      `${line}; provider ${envelope.model_provider.id} is at lock_version ${envelope.model_provider.lock_version ?? 'null'} (source ${envelope.configuration.source}).`,
    );
}

/**
 * `platform providers show|define|remove` and `platform models define|remove|reset`: the operator equivalents of
 * the definition routes. Each reads the provider's lock_version first (or takes `--expected-lock-version`), issues one
 * command with it, and on a conflict reports it and exits 3 without retrying; `--json` prints the singular-read
 * envelope.
 */
export function registerDefinitionCommands(program: Command, io: CliIo, withModelPlane: WithService<ModelsCommandDeps>): void {
  const providers = program.command('providers').description("show, author and discover an Account's model providers");
  providers
    .command('show')
    .description('print a provider row and its configuration (definitions as authored, removed entries included)')
    .requiredOption('--account <id>', 'Account id')
    .option('--json', 'print {model_provider, configuration} as JSON')
    .argument('<provider_id>', 'provider id')
    .action(async (providerId: string, opts: CommonOptions) => {
      const envelope = await withModelPlane(async (deps) => (await planeFor(deps, opts.account)).adminProvider(opts.account, providerId));
      if (opts.json) return printJson(io, envelope);
      const { model_provider: row, configuration } = envelope;
      io.out(
        `${row.id} (${row.display_name ?? 'no declaration'}): source ${configuration.source}, ${row.enabled ? 'enabled' : 'disabled'}, lock_version ${row.lock_version ?? 'null'}, ${row.models} models`,
      );
      if (configuration.definition)
        io.out(
          `  ${configuration.definition.api_format} at ${configuration.definition.base_url}, credentials ${configuration.definition.credentials}${row.configured ? ' (configured)' : ''}`,
        );
      for (const m of configuration.models)
        io.out(`  ${m.model}  ${m.source}${m.removed ? ' removed' : ''}${m.definition.inherit ? `  inherit ${m.definition.inherit}` : ''}`);
    });
  providers
    .command('define')
    .description('save a complete provider declaration (a catalog provider gets an override; a new id is created disabled)')
    .requiredOption('--account <id>', 'Account id')
    .option('--file <path>', 'the declaration as a JSON or YAML file')
    .option('--definition <json>', 'the declaration as inline JSON')
    .option('--expected-lock-version <n>', 'use this provider lock_version instead of reading the current one')
    .option('--json', 'print {model_provider, configuration} as JSON')
    .argument('<provider_id>', 'provider id')
    .action(async (providerId: string, opts: DefinitionOptions) => {
      const declaration = readDefinition(opts, providerDeclarationSchema);
      const envelope = await withModelPlane(async (deps) => {
        const plane = await planeFor(deps, opts.account);
        const version = await versionOf(plane, opts.account, providerId, opts.expectedLockVersion);
        return versioned(providerId, version, () => plane.putProviderDefinition(opts.account, providerId, declaration, version));
      });
      report(io, opts.json, envelope, `Provider ${providerId} defined`);
    });
  providers
    .command('remove')
    .description('remove the stored declaration: a catalog provider returns to its file, a custom provider is removed and disabled')
    .requiredOption('--account <id>', 'Account id')
    .option('--expected-lock-version <n>', 'use this provider lock_version instead of reading the current one')
    .option('--json', 'print {model_provider, configuration} as JSON')
    .argument('<provider_id>', 'provider id')
    .action(async (providerId: string, opts: CommonOptions) => {
      const envelope = await withModelPlane(async (deps) => {
        const plane = await planeFor(deps, opts.account);
        const version = await versionOf(plane, opts.account, providerId, opts.expectedLockVersion);
        return versioned(providerId, version, () => plane.deleteProviderDefinition(opts.account, providerId, version));
      });
      report(io, opts.json, envelope, `Provider ${providerId} definition removed`);
    });

  const models = program.commands.find((c) => c.name() === 'models') ?? program.command('models');
  models.description("manage an Account's models (hide, unhide, invalidate, restore, define, remove, reset, test)");
  const modelCommand = (name: string, description: string) =>
    models
      .command(name)
      .description(description)
      .requiredOption('--account <id>', 'Account id')
      .option('--expected-lock-version <n>', 'use this provider lock_version instead of reading the current one')
      .option('--json', 'print {model_provider, configuration} as JSON')
      .argument('<ref>', 'complete model reference <provider_id>/<upstream_model_id>');
  modelCommand('define', "replace a model's whole stored entry (a catalog override or a custom model)")
    .option('--file <path>', 'the model definition as a JSON or YAML file')
    .option('--definition <json>', 'the model definition as inline JSON')
    .action(async (ref: string, opts: DefinitionOptions) => {
      const providerId = splitRef(ref);
      const definition = readDefinition(opts, modelDefinitionSchema);
      const envelope = await withModelPlane(async (deps) => {
        const plane = await planeFor(deps, opts.account);
        const version = await versionOf(plane, opts.account, providerId, opts.expectedLockVersion);
        return versioned(providerId, version, () => plane.putModelDefinition(opts.account, providerId, ref, definition, version));
      });
      report(io, opts.json, envelope, `Model ${ref} defined`);
    });
  modelCommand('remove', 'write a removal entry: the model leaves the catalog reads and stays listed so it can be restored').action(
    async (ref: string, opts: CommonOptions) => {
      const providerId = splitRef(ref);
      const envelope = await withModelPlane(async (deps) => {
        const plane = await planeFor(deps, opts.account);
        const version = await versionOf(plane, opts.account, providerId, opts.expectedLockVersion);
        return versioned(providerId, version, () => plane.removeModelDefinition(opts.account, providerId, ref, version));
      });
      report(io, opts.json, envelope, `Model ${ref} removed`);
    },
  );
  modelCommand('reset', 'remove the stored entry: the file definition comes back; a custom model disappears').action(
    async (ref: string, opts: CommonOptions) => {
      const providerId = splitRef(ref);
      const envelope = await withModelPlane(async (deps) => {
        const plane = await planeFor(deps, opts.account);
        const version = await versionOf(plane, opts.account, providerId, opts.expectedLockVersion);
        return versioned(providerId, version, () => plane.resetModelDefinition(opts.account, providerId, ref, version));
      });
      report(io, opts.json, envelope, `Model ${ref} reset`);
    },
  );
}
