import { resolve } from 'node:path';
import { env, parseEnv, type Env, type EnvValues } from '../core/config.ts';
import { DEFAULT_CATALOG_DIR } from './catalog/catalog.loader.ts';

/**
 * Admin API variables. `PLATFORM_CATALOG_DIR` defaults to the catalog shipped in the repository, resolved from the
 * package root (not the working directory); a value given by the operator is resolved from the working directory
 * like any path argument. A missing or invalid catalog does not stop the start: the model plane answers 503
 * `model_plane_unavailable` and the log names the file (spec: Errors).
 */
const adminEnvSpec = {
  PLATFORM_CATALOG_DIR: env.custom<string>('a directory path', (raw) => resolve(raw), DEFAULT_CATALOG_DIR),
  // Hub tokenizer files, `<dir>/<tokenizer_id>/tokenizer.json`, installed before start; unset: no hub counter works.
  PLATFORM_TOKENIZER_DIR: env.custom<string | undefined>('a directory path', (raw) => resolve(raw), undefined),
} as const;

export type AdminConfig = EnvValues<typeof adminEnvSpec>;

export function parseAdminConfig(source: Env): AdminConfig {
  return parseEnv(adminEnvSpec, source);
}
