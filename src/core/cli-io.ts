import type { CoreConfig } from './config.core.ts';
import type { Env } from './config.ts';
import { createLogger, stderrDestination, type Logger } from './logger.ts';

/**
 * What a command reads and where it writes. The entry point (src/cli/main.ts) passes the process's; tests pass
 * their own. Every command, whichever service it belongs to, prints through this one interface.
 */
export interface CliIo {
  env: Env;
  out(text: string): void;
  err(text: string): void;
}

/** A user error in a command: printed as one line without a stack trace, exit code 1 (2 for usage errors). */
export class CliError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

export function printJson(io: CliIo, value: unknown): void {
  io.out(JSON.stringify(value));
}

/** Logs of one-shot commands go to stderr at warn level, so stdout stays clean for `--json`. */
export function commandLogger(core: Pick<CoreConfig, 'LOG_LEVEL'>): Logger {
  const level = core.LOG_LEVEL === 'info' ? 'warn' : core.LOG_LEVEL;
  return createLogger({ level, destination: stderrDestination() });
}

/**
 * Opens what a command works with, runs `fn`, then closes it. Services declare the shape they need; the entry point
 * (src/cli/main.ts) builds it through the composition root, so no service opens the platform itself.
 */
export type WithService<S> = <T>(fn: (service: S) => Promise<T>) => Promise<T>;
