import { Command, CommanderError } from 'commander';
import { registerDefinitionCommands } from '../admin/definitions/definitions.commands.ts';
import { registerDiscoveryCommand } from '../admin/discovery/discovery.command.ts';
import { registerModelTestCommand } from '../admin/model-test/model-test.command.ts';
import { registerModelsCommands } from '../admin/models.commands.ts';
import { registerSecretsCommands } from '../admin/secrets.commands.ts';
import { registerUsageCommand } from '../admin/usage/usage.command.ts';
import { composeCredentials, composeModelsCommand, composeOsvCorpus } from '../app/compose.ts';
import { loadPlatformConfig } from '../app/config.ts';
import { CliError, type CliIo } from '../core/cli-io.ts';
import { ConfigError } from '../core/config.ts';
import { isAppError } from '../core/errors.ts';
import { createLogger, stderrDestination } from '../core/logger.ts';
import { registerIdentityCommands } from './commands/identity.commands.ts';
import { registerMigrateCommand } from './commands/migrate.command.ts';
import { registerServeCommand } from './commands/serve.command.ts';
import { registerDocumentsCommands } from '../documents/documents.commands.ts';
import { registerMcpLocalCommands } from '../mcp/local/mcp-local.command.ts';
import { processIo, withContext } from './io.ts';
import { registerOsvCommands } from '../osv/osv.command.ts';
import { registerDevForgeCommand } from '../devforge/devforge.command.ts';

/** Builds the `platform` command tree; each service contributes its commands here. */
function buildProgram(io: CliIo): Command {
  const program = new Command('platform')
    .description('Forge MCP server, model-provider admin API and platform gRPC services')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
  registerServeCommand(program, io);
  registerMigrateCommand(program, io);
  registerIdentityCommands(program, io);
  // Each service's commands get what they work with from the composition root, opened for one command.
  registerModelsCommands(program, io, (fn) => withContext(io, (core) => fn(composeModelsCommand(core))));
  registerDefinitionCommands(program, io, (fn) => withContext(io, (core) => fn(composeModelsCommand(core))));
  registerDiscoveryCommand(program, io, (fn) => withContext(io, (core) => fn(composeModelsCommand(core))));
  registerModelTestCommand(program, io, (fn) => withContext(io, (core) => fn(composeModelsCommand(core))));
  registerUsageCommand(program, io, (fn) => withContext(io, (core) => fn(composeModelsCommand(core))));
  registerSecretsCommands(program, io, (fn) => withContext(io, (core) => fn(composeCredentials(core))));
  registerDocumentsCommands(program, io);
  registerOsvCommands(program, io, (fn) => withContext(io, (core) => fn(composeOsvCorpus(core))));
  registerMcpLocalCommands(program, io, loadPlatformConfig);
  registerDevForgeCommand(program, io, (config) =>
    createLogger({ name: 'devforge', level: config.LOG_LEVEL, destination: stderrDestination() }),
  );
  for (const command of program.commands) command.exitOverride();
  return program;
}

/** Runs the CLI and returns the exit code: 0 success, 1 failure, 2 usage error. User errors are one line. */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version "errors" are successes; commander has already printed usage errors.
      return error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.help' ? 0 : 2;
    }
    if (error instanceof ConfigError) {
      for (const problem of error.problems) io.err(`config error: ${problem}`);
      return 1;
    }
    if (error instanceof CliError) {
      io.err(`error: ${error.message}`);
      return error.exitCode;
    }
    if (isAppError(error) && error.code !== 'internal') {
      io.err(`error: ${error.message}`);
      return 1;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.err(`error: ${message}`);
    if (io.env.PLATFORM_DEBUG === '1' && error instanceof Error && error.stack) io.err(error.stack);
    return 1;
  }
}
