import { env, parseEnv, type Env, type EnvValues } from '../core/config.ts';

/**
 * PlatformOSV settings (docs/osv.md). The defaults are OSV.dev's limits (osv-facts.md §3); tests lower the page
 * sizes and time budgets to exercise pagination and partial pages.
 */
export const osvEnvSpec = {
  /** Results per page of a single Query (OSV.dev `maxSingleQueryResponses`). */
  OSV_QUERY_PAGE_SIZE: env.integer(3000, 1, 100_000),
  /** Results per page of each QueryBatch item (OSV.dev `maxBatchQueryResponses`). */
  OSV_BATCH_PAGE_SIZE: env.integer(1000, 1, 100_000),
  /**
   * Results in one QueryBatch answer, over all its items: items past it get only a page token (OSV.dev's docs page a
   * batch at 3,000 results overall). Bounds memory and encoding time when a batch asks for many large packages.
   */
  OSV_BATCH_MAX_RESULTS: env.integer(100_000, 1000, 10_000_000),
  /** Matching time budget of a single Query; when it passes, the partial page comes back with a token. */
  OSV_QUERY_TIMEOUT_MS: env.integer(20_000, 0, 600_000),
  /** Matching time budget of a whole QueryBatch. */
  OSV_BATCH_TIMEOUT_MS: env.integer(35_000, 0, 600_000),
  /** Soft limit on the estimated size of a Query response; a page stops growing once it is passed. */
  OSV_RESPONSE_SOFT_LIMIT_BYTES: env.integer(10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
  /** How often each replica checks the corpus generation to pick up imports (0 disables the check). */
  OSV_REFRESH_INTERVAL_MS: env.integer(5000, 0, 3_600_000),
} as const;

export type OsvConfig = EnvValues<typeof osvEnvSpec>;

/** Parses the OSV variables; throws ConfigError listing every bad value. */
export function parseOsvConfig(source: Env): OsvConfig {
  return parseEnv(osvEnvSpec, source);
}
