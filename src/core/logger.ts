import { pino, destination, type Logger, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

/**
 * Keys whose values never reach a log line, wherever they appear (request headers, bodies, error details).
 * pino's redaction is path based, so each sensitive key is listed at the depths our log objects use.
 */
const SENSITIVE_KEYS = [
  'authorization',
  'cookie',
  'set-cookie',
  'password',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'api_key',
  'apiKey',
  'secret',
  'client_secret',
  'code',
  'code_verifier',
  'session_bearer',
  'platform_token',
  'private-token',
];

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["private-token"]',
  'res.headers["set-cookie"]',
  ...SENSITIVE_KEYS.flatMap((key) => [`["${key}"]`, `*["${key}"]`, `*.*["${key}"]`]),
];

export interface LoggerOptions {
  level?: string;
  /** Where lines go; tests pass a capture stream to assert that secrets never appear. */
  destination?: DestinationStream;
  name?: string;
}

/** The platform's structured logger: JSON lines, secrets redacted. */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      name: options.name,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination,
  );
}

/** A logger that writes nothing, for unit tests and quiet commands. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/** Standard error as a log destination, for commands whose standard output is data. */
export function stderrDestination(): DestinationStream {
  return destination(2);
}
