import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { KyselyPlugin } from 'kysely';
import { composeServices, SERVICES } from '../src/app/compose.ts';
import { loadPlatformConfig } from '../src/app/config.ts';
import { openContext } from '../src/app/context.ts';
import type { PlatformContext } from '../src/app/context.ts';
import type { PlatformDatabase } from '../src/app/database.ts';
import { buildRestApp } from '../src/app/rest-app.ts';
import { openDatabase, type Dialect } from '../src/core/db/database.ts';
import { createLogger } from '../src/core/logger.ts';
import { startStandin, type Standin } from '../test/support/upstream/index.ts';
import { benchDatabase } from './bench-database.ts';

/** A platform on a fresh database serving every service on a real port, beside an OpenAI stand-in. */
export interface StandinPlatform {
  standin: Standin;
  ctx: PlatformContext;
  app: FastifyInstance;
  port: number;
  /** SQL statements the platform has sent to its database so far (every dialect; transaction control not counted). */
  statements(): number;
  close(): Promise<void>;
}

/**
 * What the provider-call benches (model test and discovery, inference) share: a fresh `dialect` database, the whole
 * REST app listening on 127.0.0.1 with `env` added to its configuration, and an OpenAI stand-in that accepts `apiKey`.
 * Undefined when the dialect's database is not reachable (the bench says so and skips it).
 */
export async function startStandinPlatform(
  dialect: Dialect,
  apiKey: string,
  env: Record<string, string>,
): Promise<StandinPlatform | undefined> {
  const target = await benchDatabase(dialect);
  if (!target) return undefined;
  const standin = await startStandin({ dialect: 'openai', apiKey });
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-data-'));
  const config = loadPlatformConfig({
    DATABASE_URL: target.url,
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_SECRET_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    // The stand-in listens on loopback, which outbound safety refuses unless allowed.
    PLATFORM_UPSTREAM_ALLOW_PRIVATE: 'true',
    ...env,
  });
  const opened = await openDatabase<PlatformDatabase>(target.url);
  // Counts statements as their results come back: a figure the machine's load does not move, printed beside times.
  let statements = 0;
  const counter: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      statements++;
      return args.result;
    },
  };
  const database = { ...opened, db: opened.db.withPlugin(counter) };
  const ctx = await openContext({ config, log: createLogger({ level: 'warn' }), database });
  const app = await buildRestApp(ctx, composeServices(ctx, new Set(SERVICES)));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    standin,
    ctx,
    app,
    port,
    statements: () => statements,
    async close() {
      await app.close();
      await ctx.database.close();
      await standin.close();
      await target.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
