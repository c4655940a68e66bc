import { resolve } from 'node:path';
import { env, invalid, parseEnv, type Env, type EnvValues } from '../core/config.ts';
import type { Dialect } from '../core/db/database.ts';
import { DEFAULT_CATALOG_DIR } from './catalog/catalog.loader.ts';
import { DEFAULT_MAX_STREAMS, DEFAULT_RATE_PER_MINUTE } from './inference/inference.limits.types.ts';

/**
 * Admin API variables. `PLATFORM_CATALOG_DIR` defaults to the catalog shipped in the repository, resolved from the
 * package root (not the working directory); a value given by the operator is resolved from the working directory
 * like any path argument. A missing or invalid catalog does not stop the start: the model plane answers 503
 * `model_plane_unavailable` and the log names the file (spec: Errors).
 */
// The shared boolean parser, reused for a boolean whose absence means something (the dialect decides).
const booleanText = env.boolean(false);

const adminEnvSpec = {
  PLATFORM_CATALOG_DIR: env.custom<string>('a directory path', (raw) => resolve(raw), DEFAULT_CATALOG_DIR),
  // Hub tokenizer files, `<dir>/<tokenizer_id>/tokenizer.json`, installed before start; unset: no hub counter works.
  PLATFORM_TOKENIZER_DIR: env.custom<string | undefined>('a directory path', (raw) => resolve(raw), undefined),
  // Whether upstream calls may reach loopback and private addresses; unset: see upstreamAllowPrivate.
  PLATFORM_UPSTREAM_ALLOW_PRIVATE: env.custom<boolean | undefined>(booleanText.expected, (raw) => booleanText.parse(raw), undefined),
  // The deadline of one inference call (issue 16 item 5): connect, headers and the whole answer, a stream included.
  PLATFORM_INFERENCE_TIMEOUT_MS: env.integer(120_000, 1_000, 3_600_000),
  // Per-credential limits of inference calls (issue 16 item 7); 0 turns a limit off.
  PLATFORM_INFERENCE_RATE_PER_MINUTE: env.integer(DEFAULT_RATE_PER_MINUTE, 0, 1_000_000),
  PLATFORM_INFERENCE_MAX_STREAMS: env.integer(DEFAULT_MAX_STREAMS, 0, 100_000),
  // Where replicas share the inference limits; unset: they are shared through the database.
  PLATFORM_REDIS_URL: env.custom<string | undefined>(
    'a redis:// or rediss:// URL',
    (raw) => (/^rediss?:\/\/.+/.test(raw) ? raw : invalid),
    undefined,
    // A URL may carry a password.
    true,
  ),
} as const;

export type AdminConfig = EnvValues<typeof adminEnvSpec>;

export function parseAdminConfig(source: Env): AdminConfig {
  return parseEnv(adminEnvSpec, source);
}

/**
 * Whether upstream calls may reach loopback and private ranges (issue 15 item 3): the explicit
 * `PLATFORM_UPSTREAM_ALLOW_PRIVATE`, else true for the embedded SQLite setup (a model server on the same machine or
 * network is the usual upstream there) and false on PostgreSQL, the production deployment.
 */
export function upstreamAllowPrivate(config: AdminConfig, dialect: Dialect): boolean {
  return config.PLATFORM_UPSTREAM_ALLOW_PRIVATE ?? dialect === 'sqlite';
}
