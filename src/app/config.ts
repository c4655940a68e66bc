import { ConfigError, collectConfig, type Env } from '../core/config.ts';
import { parseCoreConfig, type CoreConfig } from '../core/config.core.ts';

/**
 * The whole platform's configuration: the core variables plus each service's own spec. Every spec is parsed
 * before anything starts, and all problems are reported together, one line each.
 */
export interface PlatformConfig {
  core: CoreConfig;
}

export function loadPlatformConfig(source: Env): PlatformConfig {
  const problems: string[] = [];
  const core = collectConfig(() => parseCoreConfig(source), problems);
  if (problems.length > 0 || !core) throw new ConfigError(problems);
  return Object.freeze({ core });
}
