import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { loadPlatformConfig } from '../app/config.ts';
import { openContext, type PlatformContext } from '../app/context.ts';
import { commandLogger, type CliIo } from '../core/cli-io.ts';
import type { Env } from '../core/config.ts';

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

/** Loads the config, opens the platform context (applying migrations), runs `fn` and closes the database. */
export async function withContext<T>(io: CliIo, fn: (ctx: PlatformContext) => Promise<T>): Promise<T> {
  const config = loadPlatformConfig(io.env);
  const ctx = await openContext({ config, log: commandLogger(config.core) });
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}
