import { resolve } from 'node:path';
import { systemClock, type Clock } from '../core/clock.ts';
import type { SecretKey } from '../core/crypto.ts';
import { narrowTables, openDatabase, type DatabaseHandle } from '../core/db/database.ts';
import { migrate } from '../core/db/migrator.ts';
import { createAuthenticator, type Authenticator } from '../core/identity/auth.ts';
import { createIdentityService, type IdentityService } from '../core/identity/identity.service.ts';
import type { Logger } from '../core/logger.ts';
import { resolveSecretKeys } from '../core/secret-key.ts';
import type { PlatformConfig } from './config.ts';
import type { PlatformDatabase } from './database.ts';
import { PLATFORM_MIGRATIONS } from './migrations.ts';

/**
 * The platform's core, opened once per process: the composition root (compose.ts) builds every service from it and
 * hands each service only the parts it declares, never the whole context.
 */
export interface PlatformContext {
  config: PlatformConfig;
  log: Logger;
  clock: Clock;
  database: DatabaseHandle<PlatformDatabase>;
  identity: IdentityService;
  auth: Authenticator;
  secretKeys: { current: SecretKey; all: SecretKey[] };
  fetch: typeof fetch;
  /** Registers work to undo when the context closes (index refreshers, caches, clients); runs in reverse order. */
  onClose(hook: () => Promise<void> | void): void;
  /** Runs the close hooks, then closes the database when the context opened it. */
  close(): Promise<void>;
}

export interface OpenContextOptions {
  config: PlatformConfig;
  log: Logger;
  clock?: Clock;
  fetch?: typeof fetch;
  /** Apply pending migrations first (true for `serve`; `migrate` does it explicitly). */
  migrate?: boolean;
  /** An already open database (tests). */
  database?: DatabaseHandle<PlatformDatabase>;
}

/** Opens the database, applies migrations and builds the shared services. */
export async function openContext(options: OpenContextOptions): Promise<PlatformContext> {
  const { config, log } = options;
  const clock = options.clock ?? systemClock;
  const database =
    options.database ??
    (await openDatabase<PlatformDatabase>(config.core.DATABASE_URL, {
      onConnectionError: (error) => log.warn({ err: error }, 'a database connection was dropped; it will be replaced'),
    }));
  try {
    if (options.migrate !== false) {
      const report = await migrate(database, PLATFORM_MIGRATIONS);
      if (report.applied.length > 0) log.info({ applied: report.applied, database: database.location }, 'migrations applied');
    }
    const keys = resolveSecretKeys({
      configured: config.core.PLATFORM_SECRET_KEY,
      previous: config.core.PLATFORM_SECRET_KEY_PREVIOUS,
      dataDir: resolve(config.core.PLATFORM_DATA_DIR),
    });
    if (keys.generated)
      log.warn(
        { dir: config.core.PLATFORM_DATA_DIR },
        'generated a new PLATFORM_SECRET_KEY into the data directory; back it up with the database',
      );
    const hooks: (() => Promise<void> | void)[] = [];
    let closed = false;
    return {
      config,
      log,
      clock,
      database,
      identity: createIdentityService({
        db: narrowTables(database.db),
        dialect: database.dialect,
        clock,
        sessionTtlMs: config.core.PLATFORM_SESSION_TTL_HOURS * 3_600_000,
        passwordCost: config.core.PLATFORM_PASSWORD_COST,
      }),
      auth: createAuthenticator({ db: narrowTables(database.db), clock }),
      secretKeys: keys,
      fetch: options.fetch ?? globalThis.fetch,
      onClose(hook) {
        hooks.push(hook);
      },
      async close() {
        if (closed) return;
        closed = true;
        for (const hook of hooks.reverse()) {
          try {
            await hook();
          } catch (error) {
            log.error({ err: error }, 'close hook failed');
          }
        }
        if (!options.database) await database.close();
      },
    };
  } catch (error) {
    if (!options.database) await database.close();
    throw error;
  }
}
