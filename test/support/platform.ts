import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import {
  composeServices,
  SERVICE_BUILDERS,
  SERVICES,
  type PlatformServices,
  type ServiceBuilders,
  type ServiceName,
} from '../../src/app/compose.ts';
import { loadPlatformConfig } from '../../src/app/config.ts';
import { openContext, type PlatformContext } from '../../src/app/context.ts';
import { buildRestApp } from '../../src/app/rest-app.ts';
import type { Clock } from '../../src/core/clock.ts';
import type { Dialect } from '../../src/core/db/database.ts';
import type { BootstrapResult } from '../../src/core/identity/identity.service.ts';
import { createLogger } from '../../src/core/logger.ts';
import { loadProtos, type LoadedProtos } from '../../src/grpc/protos.ts';
import { openTestDatabase, type TestDatabase } from './databases.ts';
import { checkResponsesAgainstOpenApi, type ResponseCheck } from './openapi-responses.ts';

/** Log lines captured in memory, so tests can assert that secrets never reach them. */
interface LogCapture {
  lines: string[];
  text(): string;
}

function captureLogs(): { capture: LogCapture; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { capture: { lines, text: () => lines.join('\n') }, stream };
}

export interface TestPlatform {
  ctx: PlatformContext;
  database: TestDatabase;
  logs: LogCapture;
  /** An Account with an owner, a session bearer and an all-capability platform token. */
  owner: BootstrapResult;
  close(): Promise<void>;
}

/**
 * A platform context on a fresh test database (SQLite file or PostgreSQL schema) with captured logs and a
 * bootstrapped owner. `env` adds or overrides variables; the data dir is a temp dir.
 */
export async function openTestPlatform(
  dialect: Dialect,
  options: { env?: Record<string, string>; clock?: Clock; fetch?: typeof fetch } = {},
): Promise<TestPlatform> {
  const database = await openTestDatabase(dialect);
  const { capture, stream } = captureLogs();
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-data-'));
  const config = loadPlatformConfig({
    PLATFORM_DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    LOG_LEVEL: 'info',
    // The production cost (2^17) would add seconds to every test that signs in.
    PLATFORM_PASSWORD_COST: '14',
    PLATFORM_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    ...options.env,
  });
  const ctx = await openContext({
    config,
    log: createLogger({ level: 'debug', destination: stream }),
    database,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const owner = await ctx.identity.bootstrap({
    accountName: 'Test account',
    email: `owner-${Math.random().toString(36).slice(2)}@example.test`,
  });
  return {
    ctx,
    database,
    logs: capture,
    owner,
    async close() {
      await ctx.close();
      await database.close();
    },
  };
}

let protos: LoadedProtos | undefined;

/**
 * The composition root's builders, with the platform protos parsed once per test file rather than once per test
 * platform (they are immutable, and parsing them takes a few hundred milliseconds).
 */
export const TEST_SERVICE_BUILDERS: ServiceBuilders = { ...SERVICE_BUILDERS, protos: () => (protos ??= loadProtos()) };

/** The services of a test platform as `serve --only` would compose them (all of them by default). */
export function composeTestServices(platform: TestPlatform, only: ReadonlySet<ServiceName> = new Set(SERVICES)): PlatformServices {
  return composeServices(platform.ctx, only, TEST_SERVICE_BUILDERS);
}

/** The REST app of a test platform (not listening) with the services `only` selects (all by default). */
export function buildTestRestApp(platform: TestPlatform, only?: ReadonlySet<ServiceName>): Promise<FastifyInstance> {
  return buildRestApp(platform.ctx, composeTestServices(platform, only));
}

export interface TestRestApp {
  app: FastifyInstance;
  url: string;
  /** Responses that broke the served OpenAPI document (see ./openapi-responses.ts). */
  responses: ResponseCheck;
  /** Throws when responses broke the document and nobody took the violations, so no test can miss one. */
  close(): Promise<void>;
}

/**
 * The REST app of a test platform listening on 127.0.0.1 with an ephemeral port. Every response under
 * `/api/v1/` and `/agent_api/v1/` is checked against the OpenAPI document the app serves.
 */
export async function startRestApp(platform: TestPlatform): Promise<TestRestApp> {
  const app = await buildTestRestApp(platform);
  const responses = await checkResponsesAgainstOpenApi(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  return {
    app,
    url: `http://127.0.0.1:${address.port}`,
    responses,
    async close() {
      await app.close();
      const left = responses.take();
      if (left.length > 0) throw new Error(`responses broke the served OpenAPI document:\n${left.join('\n')}`);
    },
  };
}
