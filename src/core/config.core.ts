import { env, invalid, parseEnv, ConfigError, type Env, type EnvValues } from './config.ts';

/** Variables every part of the platform shares (ARCHITECTURE.md, "Ports and variables"). */
export const coreEnvSpec = {
  PLATFORM_HOST: env.string('127.0.0.1'),
  PLATFORM_HTTP_PORT: env.port(8080),
  PLATFORM_GRPC_PORT: env.port(50051),
  MCP_PORT: env.port(3000),
  DEV_FORGE_PORT: env.port(3100),
  PLATFORM_DATA_DIR: env.string('./data'),
  DATABASE_URL: env.custom<string>(
    'sqlite:<path> or postgres://user@host:port/database',
    (raw) => (/^sqlite:.+/.test(raw) || /^postgres(ql)?:\/\/.+/.test(raw) ? raw : invalid),
    (e: Env) => `sqlite:${(e.PLATFORM_DATA_DIR?.trim() || './data').replace(/\/+$/, '')}/platform.db`,
  ),
  PLATFORM_SECRET_KEY: env.base64Key(32),
  PLATFORM_SECRET_KEY_PREVIOUS: env.base64Key(32),
  LOG_LEVEL: env.oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  TRUST_PROXY: env.boolean(false),
  PLATFORM_TLS_CERT: env.optionalString(),
  PLATFORM_TLS_KEY: env.optionalString(),
  PLATFORM_BODY_LIMIT_BYTES: env.integer(1024 * 1024, 1024, 64 * 1024 * 1024),
  PLATFORM_SESSION_TTL_HOURS: env.integer(24 * 14, 1, 24 * 365),
} as const;


export type CoreConfig = EnvValues<typeof coreEnvSpec>;

/** Parses and cross-checks the core variables. */
export function parseCoreConfig(source: Env): CoreConfig {
  const config = parseEnv(coreEnvSpec, source);
  if ((config.PLATFORM_TLS_CERT === undefined) !== (config.PLATFORM_TLS_KEY === undefined)) {
    throw new ConfigError(['PLATFORM_TLS_CERT and PLATFORM_TLS_KEY: expected both or neither to be set']);
  }
  return config;
}
