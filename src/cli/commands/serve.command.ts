import type { Command } from 'commander';
import { loadPlatformConfig } from '../../app/config.ts';
import { openContext } from '../../app/context.ts';
import { SERVICES, type ServiceName } from '../../app/compose.ts';
import { startPlatform } from '../../app/serve.ts';
import { createLogger } from '../../core/logger.ts';
import { CliError, type CliIo } from '../../core/cli-io.ts';

const BOOTSTRAP_EMAIL = 'owner@platform.local';

function parseOnly(value: string | undefined): Set<ServiceName> {
  if (value === undefined) return new Set(SERVICES);
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new CliError(`--only: name at least one service (${SERVICES.join(', ')})`, 2);
  for (const name of names) {
    if (!(SERVICES as readonly string[]).includes(name))
      throw new CliError(`--only: unknown service ${name} (expected ${SERVICES.join(', ')})`, 2);
  }
  return new Set(names as ServiceName[]);
}

/**
 * What a newcomer does next, printed after the URLs: connect an MCP client, a first authenticated `curl`, where the
 * docs are. The bearer appears in the `curl` only on the first start (it is shown once); later starts name it.
 */
function nextSteps(listeners: readonly { name: string; url: string }[], sessionBearer: string | undefined): string[] {
  const rest = listeners.find((l) => l.name === 'rest');
  const mcp = listeners.find((l) => l.name === 'mcp');
  const forge = listeners.find((l) => l.name === 'devforge');
  const lines = ['', 'Next steps:'];
  if (mcp) {
    lines.push(`  MCP client:  add ${mcp.url}/mcp as a remote (HTTP) MCP server, e.g.`);
    lines.push(`               claude mcp add --transport http forge ${mcp.url}/mcp`);
    lines.push(
      forge
        ? '               it opens a browser to sign in at the dev forge (the user above); docs/mcp.md has the other clients'
        : '               it signs you in at the forge (FORGE_URL); docs/mcp.md has the other clients',
    );
  }
  if (rest) {
    // Later starts avoid the words "session bearer": that line is the first start's, and scripts look for it.
    const bearer = sessionBearer ?? '<bearer>';
    lines.push(
      sessionBearer
        ? '  first call:  who am I, with the bearer printed above:'
        : "  first call:  who am I, with the owner's bearer from the first start:",
    );
    lines.push(`               curl -H 'Authorization: Bearer ${bearer}' ${rest.url}/api/v1/sessions/current`);
    if (!sessionBearer) {
      lines.push(`               the bearer was shown on the first start; lost it? npx platform humans reset-password ${BOOTSTRAP_EMAIL}`);
      lines.push(
        `               then sign in: curl -H 'content-type: application/json' -d '{"email":"${BOOTSTRAP_EMAIL}","password":"…"}' ${rest.url}/api/v1/sessions`,
      );
    }
  }
  lines.push('  docs:        README.md (quick start, CLI, configuration) and docs/*.md (mcp, mcp-local, admin, grpc, osv, documents)');
  return lines;
}

/**
 * `platform serve`: validates the configuration (before any listener starts), migrates, creates the bootstrap
 * owner on a first start, starts the services and shuts down gracefully on SIGTERM/SIGINT.
 */
export function registerServeCommand(program: Command, io: CliIo): void {
  program
    .command('serve')
    .description('run the platform services (REST, gRPC, MCP, dev forge)')
    .option('--only <services>', `comma-separated subset of ${SERVICES.join(',')}`)
    .action(async (opts: { only?: string }) => {
      const only = parseOnly(opts.only);
      const config = loadPlatformConfig(io.env);
      const log = createLogger({ level: config.core.LOG_LEVEL });
      // Signals are caught from the first moment, so a stop during start-up still shuts down cleanly.
      let signalled: (signal: string) => void = () => undefined;
      const stopSignal = new Promise<string>((resolve) => (signalled = resolve));
      const onSigterm = () => signalled('SIGTERM');
      const onSigint = () => signalled('SIGINT');
      process.on('SIGTERM', onSigterm);
      process.on('SIGINT', onSigint);
      try {
        const ctx = await openContext({ config, log });
        let running;
        let firstBearer: string | undefined;
        try {
          running = await startPlatform(ctx, only);
          const first = await ctx.identity.bootstrapIfEmpty({ accountName: 'Default account', email: BOOTSTRAP_EMAIL });
          if (first) {
            firstBearer = first.session_bearer;
            io.out('First start: created the bootstrap owner (shown once, only hashes are stored):');
            io.out(`  account:         ${first.account_id}`);
            io.out(`  email:           ${first.email}`);
            io.out(`  password:        ${first.password}`);
            io.out(`  session bearer:  ${first.session_bearer}`);
            io.out(`  platform token:  ${first.platform_token}`);
          }
        } catch (error) {
          await running?.close();
          await ctx.close();
          throw error;
        }
        for (const listener of running.listeners) {
          io.out(`${listener.name.padEnd(9)} ${listener.url}`);
          for (const line of listener.details ?? []) io.out(line);
        }
        io.out(`database  ${ctx.database.location}`);
        for (const line of nextSteps(running.listeners, firstBearer)) io.out(line);

        const signal = await stopSignal;
        log.info({ signal }, 'shutting down: finishing in-flight requests');
        try {
          await running.close();
          await ctx.close();
          log.info('stopped');
        } catch (error) {
          log.error({ err: error }, 'shutdown failed');
          throw new CliError('shutdown did not complete cleanly');
        }
      } finally {
        process.off('SIGTERM', onSigterm);
        process.off('SIGINT', onSigint);
      }
    });
}
