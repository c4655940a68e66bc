/**
 * `platform devforge`: starts the dev forge with a development seed, prints how to sign in, and runs until SIGINT or
 * SIGTERM (then closes gracefully). State is kept in `$PLATFORM_DATA_DIR/devforge.json` unless `--in-memory`.
 */
import { InvalidArgumentError, Option } from 'commander';
import type { Command } from 'commander';
import { env, parseEnv, type Env, type EnvValues } from '../core/config.ts';
import { coreEnvSpec } from '../core/config.core.ts';
import type { Logger } from '../core/logger.ts';
import { devForgeSeed, startDevForge } from './devforge.app.ts';
import { parseRedirectUri } from './devforge.redirect-uri.ts';
import { devForgeSeedFromState, devForgeStateFile } from './devforge.state.ts';

/** Options of {@link runDevForge}. */
export interface RunDevForgeOptions {
  host: string;
  port: number;
  /** Redirect URIs of the seeded application; the command passes `{MCP_SERVER_URL or http://127.0.0.1:$MCP_PORT}/callback`, default `http://127.0.0.1:3000/callback`. */
  redirectUris?: string[];
  json?: boolean | undefined;
  /** The state file (users, application, tokens survive restarts); absent: in memory. */
  stateFile?: string;
}

/** What {@link runDevForge} talks to: output, an optional logger, and what ends the run. */
export interface RunDevForgeIo {
  out(text: string): void;
  logger?: Logger | boolean;
  /** Resolves when the forge must stop (the CLI waits for SIGINT/SIGTERM). */
  waitForStop(): Promise<unknown>;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError('must be an integer from 0 to 65535.');
  }
  return port;
}

function collectRedirectUri(value: string, previous: string[] | undefined): string[] {
  if (!parseRedirectUri(value)) throw new InvalidArgumentError('must be an absolute URI without a fragment.');
  return [...(previous ?? []), value];
}

/**
 * The variables `platform devforge` reads, with the core's own parsers: it needs no database, so the core's
 * cross-checks (a secret key for PostgreSQL, TLS pairs) do not apply to it.
 */
export const devForgeEnvSpec = {
  PLATFORM_HOST: coreEnvSpec.PLATFORM_HOST,
  DEV_FORGE_PORT: coreEnvSpec.DEV_FORGE_PORT,
  MCP_PORT: coreEnvSpec.MCP_PORT,
  PLATFORM_DATA_DIR: coreEnvSpec.PLATFORM_DATA_DIR,
  LOG_LEVEL: coreEnvSpec.LOG_LEVEL,
  MCP_SERVER_URL: env.optionalString(),
} as const;

export type DevForgeConfig = EnvValues<typeof devForgeEnvSpec>;

/** The callback the MCP server uses in callback-proxy mode under `npm start` (spec: `{MCP_SERVER_URL}/callback`). */
export function defaultRedirectUris(source: Env): string[] {
  const config = parseEnv(devForgeEnvSpec, source);
  const base = config.MCP_SERVER_URL?.replace(/\/+$/, '') || `http://127.0.0.1:${config.MCP_PORT}`;
  return [`${base}/callback`];
}

/** Resolves on the first SIGINT or SIGTERM, and removes its listeners. */
function waitForTerminationSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

/**
 * Starts a seeded dev forge, prints its URL, the seeded credentials, the application id and a personal access
 * token (as text, or one JSON object with `json`), waits for `io.waitForStop()`, then closes it.
 */
export async function runDevForge(options: RunDevForgeOptions, io: RunDevForgeIo): Promise<void> {
  const redirectUris = options.redirectUris && options.redirectUris.length > 0 ? options.redirectUris : defaultRedirectUris({});
  const seed = options.stateFile ? devForgeSeedFromState(options.stateFile, redirectUris) : devForgeSeed(redirectUris);
  const user = seed.users[0];
  const application = seed.applications[0];
  if (!user || !application) throw new Error('dev forge seed is empty');
  let forge;
  try {
    forge = await startDevForge({
      ...seed,
      host: options.host,
      port: options.port,
      logger: io.logger ?? false,
      ...(options.stateFile ? { stateFile: options.stateFile } : {}),
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'EADDRINUSE')
      throw new Error(`dev forge: port ${options.port} on ${options.host} is already in use (set --port or DEV_FORGE_PORT)`);
    throw err;
  }
  const personalAccessToken = forge.bannerPersonalAccessToken(user.username, ['api'], 'devforge command');
  // Listen for the stop before announcing readiness: a supervisor that signals as soon as it reads the banner must
  // find the handler in place (otherwise the default action kills the process without closing the forge).
  const stopped = io.waitForStop();
  if (options.json) {
    io.out(
      `${JSON.stringify({
        url: forge.url,
        username: user.username,
        password: user.password,
        application_id: application.uid,
        redirect_uris: application.redirectUris,
        personal_access_token: personalAccessToken,
        state_file: options.stateFile ?? null,
      })}\n`,
    );
  } else {
    io.out(
      [
        `Dev forge (GitLab-compatible) listening on ${forge.url}`,
        `  sign in at:             ${forge.url}/users/sign_in`,
        `  username:               ${user.username}`,
        `  password:               ${user.password}`,
        `  application id:         ${application.uid}  (public, PKCE)`,
        `  redirect URIs:          ${application.redirectUris.join(', ')}`,
        `  personal access token:  ${personalAccessToken}  (scope api, for PRIVATE-TOKEN)`,
        options.stateFile
          ? `  state:                  ${options.stateFile}  (kept across restarts; delete it for a fresh forge)`
          : '  state:                  in memory (lost when the forge stops)',
        'Press Ctrl+C to stop.',
        '',
      ].join('\n'),
    );
  }
  await stopped;
  await forge.close();
}

/** What the `devforge` command reads and writes: the environment (parsed at start) and standard output. */
export interface DevForgeCommandIo {
  env: Env;
  out(text: string): void;
}

/** Makes the command's logger once its configuration is parsed (the CLI hands in the platform's logger). */
export type DevForgeLoggerFactory = (config: DevForgeConfig) => Logger;

/**
 * Adds `platform devforge [--host] [--port] [--redirect-uri URL ...] [--data-dir DIR | --in-memory] [--json]` to the
 * CLI. Unset options come from the parsed configuration: `PLATFORM_HOST`, `DEV_FORGE_PORT`, `PLATFORM_DATA_DIR`.
 */
export function registerDevForgeCommand(program: Command, io: DevForgeCommandIo, createLogger: DevForgeLoggerFactory): void {
  program
    .command('devforge')
    .description('start the GitLab-compatible dev forge with a seeded user and OAuth application')
    .addOption(new Option('--host <host>', 'address to listen on (default: PLATFORM_HOST, 127.0.0.1)'))
    .addOption(new Option('--port <port>', 'port to listen on, 0 picks a free one (default: DEV_FORGE_PORT, 3100)').argParser(parsePort))
    .addOption(
      new Option(
        '--redirect-uri <url...>',
        'redirect URI of the seeded application (repeatable; default {MCP_SERVER_URL}/callback)',
      ).argParser(collectRedirectUri),
    )
    .addOption(new Option('--data-dir <dir>', 'directory of the state file devforge.json (default: PLATFORM_DATA_DIR, ./data)'))
    .option('--in-memory', 'keep no state file: users, application and tokens are new on every start')
    .option('--json', 'print the URL and seeded credentials as one JSON object')
    .action(
      async (opts: { host?: string; port?: number; redirectUri?: string[]; json?: boolean; dataDir?: string; inMemory?: boolean }) => {
        const config = parseEnv(devForgeEnvSpec, io.env);
        const logger = createLogger(config);
        await runDevForge(
          {
            host: opts.host ?? config.PLATFORM_HOST,
            port: opts.port ?? config.DEV_FORGE_PORT,
            redirectUris: opts.redirectUri && opts.redirectUri.length > 0 ? opts.redirectUri : defaultRedirectUris(io.env),
            json: opts.json,
            ...(opts.inMemory ? {} : { stateFile: devForgeStateFile(opts.dataDir ?? config.PLATFORM_DATA_DIR) }),
          },
          {
            out: (text) => io.out(text),
            logger,
            waitForStop: async () => {
              const signal = await waitForTerminationSignal();
              logger.info({ signal }, 'dev forge stopping');
            },
          },
        );
      },
    );
}
