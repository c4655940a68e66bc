import type { FastifyBaseLogger } from 'fastify';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogArgs = Parameters<FastifyBaseLogger['info']>;
/** A logger that can say whether a level writes (pino's can; Fastify's base type does not list it). */
type LevelledLogger = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

/**
 * A request's logger that builds its child (the request id bound to every line) on the first line it writes. Fastify
 * makes one child per request, and a pino child serialises its bindings and sets up its level when it is made: work
 * thrown away on every request whose lines are all below the level (with `LOG_LEVEL=warn`, every request that does
 * not fail). Lines it writes go through the real child, so they are the same as before, request id and scrubbing
 * included; only the level is read from the parent until a child exists.
 */
class LazyRequestLogger {
  readonly #parent: LevelledLogger;
  readonly #bindings: Record<string, unknown>;
  #child: LevelledLogger | undefined;

  constructor(parent: LevelledLogger, bindings: Record<string, unknown>) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  #real(): LevelledLogger {
    // A pino child is a pino logger.
    return (this.#child ??= this.#parent.child(this.#bindings) as LevelledLogger);
  }

  #write(level: Level, args: LogArgs): void {
    const target = this.#child ?? (this.#parent.isLevelEnabled(level) ? this.#real() : undefined);
    target?.[level](...args);
  }

  get level(): string {
    return (this.#child ?? this.#parent).level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.#parent).isLevelEnabled(level);
  }

  child(...args: Parameters<FastifyBaseLogger['child']>): FastifyBaseLogger {
    return this.#real().child(...args);
  }

  fatal(...args: LogArgs): void {
    this.#write('fatal', args);
  }
  error(...args: LogArgs): void {
    this.#write('error', args);
  }
  warn(...args: LogArgs): void {
    this.#write('warn', args);
  }
  info(...args: LogArgs): void {
    this.#write('info', args);
  }
  debug(...args: LogArgs): void {
    this.#write('debug', args);
  }
  trace(...args: LogArgs): void {
    this.#write('trace', args);
  }
  silent(): void {}
}

/**
 * Fastify's `childLoggerFactory` for the platform's apps: a lazy child (above), or, when the route gives child options
 * (its own log level or serializers) or the logger cannot tell its level, the real child at once, as Fastify's
 * default factory makes it.
 */
export function lazyRequestLogger(
  logger: FastifyBaseLogger,
  bindings: Record<string, unknown>,
  options: Parameters<FastifyBaseLogger['child']>[1],
): FastifyBaseLogger {
  const levelled = logger as Partial<LevelledLogger>;
  if ((options && Object.keys(options).length > 0) || typeof levelled.isLevelEnabled !== 'function') return logger.child(bindings, options);
  return new LazyRequestLogger(logger as LevelledLogger, bindings);
}
