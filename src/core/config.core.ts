import { env, invalid, parseEnv, ConfigError, type Env, type EnvValues } from './config.ts';
import { redactDatabaseUrl } from './db/database.ts';

/** Variables every part of the platform shares (ARCHITECTURE.md, "Ports and variables"). */
export const coreEnvSpec = {
  PLATFORM_HOST: env.string('127.0.0.1'),
  PLATFORM_HTTP_PORT: env.port(8080),
  PLATFORM_GRPC_PORT: env.port(50051),
  MCP_PORT: env.port(3000),
  DEV_FORGE_PORT: env.port(3100),
  PLATFORM_DATA_DIR: env.string('./data'),
  DATABASE_URL: {
    ...env.custom<string>(
      'sqlite:<path> or postgres://user@host:port/database',
      (raw) => (/^sqlite:.+/.test(raw) || /^postgres(ql)?:\/\/.+/.test(raw) ? raw : invalid),
      (e: Env) => `sqlite:${(e.PLATFORM_DATA_DIR?.trim() || './data').replace(/\/+$/, '')}/platform.db`,
    ),
    // The URL may carry a password: show it as it would appear in a log line.
    display: redactDatabaseUrl,
  },
  PLATFORM_SECRET_KEY: env.base64Key(32),
  PLATFORM_SECRET_KEY_PREVIOUS: env.base64Key(32),
  LOG_LEVEL: env.oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  // Forwarded headers count only when they come from a trusted proxy, and the client address is the first
  // untrusted one counted from the nearest hop, so a client cannot choose its own address by writing
  // X-Forwarded-For. `true` trusts proxies on loopback and private networks; a list names them.
  TRUST_PROXY: env.custom<TrustProxy>(
    'false, true (proxies on loopback and private networks), or a comma-separated list of proxy addresses/CIDRs',
    (raw) => {
      const lower = raw.toLowerCase();
      if (['false', '0', 'no', 'off'].includes(lower)) return false;
      if (['true', '1', 'yes', 'on'].includes(lower)) return 'loopback,linklocal,uniquelocal';
      const entries = raw
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean);
      const ok = entries.every((e) => /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(e) || ['loopback', 'linklocal', 'uniquelocal'].includes(e));
      return entries.length > 0 && ok ? entries.join(',') : invalid;
    },
    false,
  ),
  PLATFORM_TLS_CERT: env.readableFile(),
  PLATFORM_TLS_KEY: env.readableFile(),
  PLATFORM_BODY_LIMIT_BYTES: env.integer(1024 * 1024, 1024, 64 * 1024 * 1024),
  PLATFORM_SESSION_TTL_HOURS: env.integer(24 * 14, 1, 24 * 365),
  PLATFORM_PASSWORD_COST: env.integer(17, 14, 20),
} as const;

/** Fastify's `trustProxy`: off, or the trusted proxy addresses (comma-separated addresses, CIDRs or presets). */
export type TrustProxy = boolean | string;

export type CoreConfig = EnvValues<typeof coreEnvSpec>;

/** Parses and cross-checks the core variables. */
export function parseCoreConfig(source: Env): CoreConfig {
  const config = parseEnv(coreEnvSpec, source);
  const problems: string[] = [];
  if ((config.PLATFORM_TLS_CERT === undefined) !== (config.PLATFORM_TLS_KEY === undefined)) {
    problems.push('PLATFORM_TLS_CERT and PLATFORM_TLS_KEY: expected both or neither to be set');
  }
  // A generated key lives in one machine's data directory; replicas sharing a PostgreSQL database would each
  // make their own and could not read each other's encrypted credentials.
  if (config.DATABASE_URL.startsWith('postgres') && config.PLATFORM_SECRET_KEY === undefined) {
    problems.push('PLATFORM_SECRET_KEY: expected base64 of 32 random bytes when DATABASE_URL is PostgreSQL (every replica must share it)');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
