// Helpers shared by the OSV tests: imports through the real CLI command, and a service over a test database.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { systemClock, type Clock } from '../../src/core/clock.ts';
import { createLogger } from '../../src/core/logger.ts';
import type { OsvConfig } from '../../src/osv/osv.config.ts';
import type { ImportReport } from '../../src/osv/osv.importer.ts';
import { buildIndex, staticIndexSource } from '../../src/osv/osv.loader.ts';
import { createOsvService, type OsvService, type VulnerabilityListJson } from '../../src/osv/osv.service.ts';
import { runCli } from '../support/cli.ts';
import type { TestDatabase } from '../support/databases.ts';
import { bulkPath, fixturePath } from '../support/shared.ts';
import { narrowTables } from '../../src/core/db/database.ts';

/** The real records (test/fixtures) and both bulk archives (../shared), in the order the corpus tests import them. */
export function sharedCorpusPaths(): string[] {
  return [fixturePath('osv', 'records'), bulkPath('go-vulndb.jsonl'), bulkPath('pypa-pysec.jsonl')];
}

/** Environment for a CLI run against `database`. */
export function cliEnv(database: TestDatabase): Record<string, string> {
  return {
    DATABASE_URL: database.url,
    PLATFORM_DATA_DIR: mkdtempSync(join(tmpdir(), 'platform-osv-')),
    PLATFORM_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    LOG_LEVEL: 'error',
  };
}

/** `platform osv import --json PATH...`; fails the test unless it exits 0. */
export async function cliImport(database: TestDatabase, paths: string[], extra: string[] = []): Promise<ImportReport> {
  const run = await runCli(['osv', 'import', '--json', ...extra, ...paths], cliEnv(database));
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as ImportReport;
}

export const TEST_OSV_CONFIG: OsvConfig = {
  OSV_QUERY_PAGE_SIZE: 3000,
  OSV_BATCH_PAGE_SIZE: 1000,
  OSV_BATCH_MAX_RESULTS: 100_000,
  OSV_QUERY_TIMEOUT_MS: 20_000,
  OSV_BATCH_TIMEOUT_MS: 35_000,
  OSV_RESPONSE_SOFT_LIMIT_BYTES: 10 * 1024 * 1024,
  OSV_REFRESH_INTERVAL_MS: 0,
};

/** A service over the corpus stored in `database`, with its index built now. */
export async function serviceOver(
  database: TestDatabase,
  config: Partial<OsvConfig> = {},
  clock: Clock = systemClock,
): Promise<OsvService> {
  const index = await buildIndex(narrowTables(database.db));
  return createOsvService({
    db: narrowTables(database.db),
    index: staticIndexSource(index),
    config: { ...TEST_OSV_CONFIG, ...config },
    clock,
    log: createLogger({ level: 'silent' }),
  });
}

/** The ids of a VulnerabilityList, in order. */
export function ids(list: VulnerabilityListJson): string[] {
  return (list.vulns ?? []).map((v) => String(v.id));
}
