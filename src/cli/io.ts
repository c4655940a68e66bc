import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { loadPlatformConfig, type PlatformConfig } from '../app/config.ts';
import { openContext, type PlatformContext } from '../app/context.ts';
import type { Env } from '../core/config.ts';
import { createLogger, stderrDestination, type Logger } from '../core/logger.ts';

/** Where a command writes and what it reads; `main` passes the process's, tests pass their own. */
export interface CliIo {
  env: Env;
  out(text: string): void;
  err(text: string): void;
}

export function processIo(): CliIo {
  // An optional `.env` in the working directory fills variables the environment does not already set.
  const env: Env = { ...process.env };
  if (existsSync('.env')) {
    const parsed = parseDotEnv('.env');
    for (const [k, v] of Object.entries(parsed)) if (env[k] === undefined) env[k] = v;
  }
  return {
    env,
    out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
    err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  };
}


/** The variables of a `.env` file, read by Node's own parser (`#` comments, `export`, quoted values). */
export function parseDotEnv(path: string): Env {
  return parseEnv(readFileSync(path, 'utf8'));
}

export function printJson(io: CliIo, value: unknown): void {
  io.out(JSON.stringify(value));
}

/** Logs of one-shot commands go to stderr at warn level, so stdout stays clean for `--json`. */
export function commandLogger(config: PlatformConfig): Logger {
  const level = config.core.LOG_LEVEL === 'info' ? 'warn' : config.core.LOG_LEVEL;
  return createLogger({ level, destination: stderrDestination() });
}

/** Loads the config, opens the platform context (applying migrations), runs `fn` and closes the database. */
export async function withContext<T>(io: CliIo, fn: (ctx: PlatformContext) => Promise<T>): Promise<T> {
  const config = loadPlatformConfig(io.env);
  const ctx = await openContext({ config, log: commandLogger(config) });
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}
