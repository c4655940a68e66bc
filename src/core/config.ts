import { accessSync, constants, statSync } from 'node:fs';

/**
 * Environment configuration: each service declares a spec of typed fields; `parseEnv` validates all of them at
 * once and reports one clear line per bad value (the variable, what was expected and, for non-secrets, what was
 * given). The result is frozen and passed in; nothing reads `process.env` after start (STYLE.md 8).
 */
export type Env = Record<string, string | undefined>;

export interface EnvField<T> {
  /** What a valid value looks like, for the error line. */
  readonly expected: string;
  /** Secrets are never echoed in errors or logs. */
  readonly secret: boolean;
  /** How a rejected value is shown (for values that may embed a credential, such as database URLs). */
  readonly display?: (raw: string) => string;
  /** Returns the parsed value, or `invalid` when the raw text is not acceptable. */
  readonly parse: (raw: string) => T | typeof invalid;
  /** The value when the variable is unset or empty; a function to derive it from the other raw values. */
  readonly fallback: T | ((env: Env) => T);
}

export const invalid: unique symbol = Symbol('invalid');

export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type FieldValue<F> = F extends EnvField<infer T> ? T : never;
export type EnvSpec = Record<string, EnvField<unknown>>;
export type EnvValues<S extends EnvSpec> = { readonly [K in keyof S]: FieldValue<S[K]> };

/** Validates every field of `spec` against `env`; throws one `ConfigError` listing every problem. */
export function parseEnv<S extends EnvSpec>(spec: S, env: Env): EnvValues<S> {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(spec)) {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') {
      out[name] = typeof field.fallback === 'function' ? (field.fallback as (e: Env) => unknown)(env) : field.fallback;
      continue;
    }
    const value = field.parse(raw.trim());
    if (value === invalid) {
      problems.push(
        field.secret
          ? `${name}: expected ${field.expected} (value not shown: it is a secret)`
          : `${name}: expected ${field.expected}, got ${JSON.stringify(field.display ? field.display(raw) : raw)}`,
      );
    } else {
      out[name] = value;
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(out) as EnvValues<S>;
}

/** Runs several parsers and merges their problems into one error, so a start reports everything at once. */
export function collectConfig<T>(parse: () => T, problems: string[]): T | undefined {
  try {
    return parse();
  } catch (error) {
    if (error instanceof ConfigError) {
      problems.push(...error.problems);
      return undefined;
    }
    throw error;
  }
}

function field<T>(
  expected: string,
  parse: (raw: string) => T | typeof invalid,
  fallback: EnvField<T>['fallback'],
  secret = false,
): EnvField<T> {
  return { expected, parse, fallback, secret };
}

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/** Field constructors shared by every service's spec. */
export const env = {
  string(fallback: string | ((e: Env) => string)): EnvField<string> {
    return field('a non-empty string', (raw) => raw, fallback);
  },
  optionalString(): EnvField<string | undefined> {
    return field('a non-empty string', (raw) => raw, undefined);
  },
  boolean(fallback: boolean): EnvField<boolean> {
    return field(
      'true or false',
      (raw) => {
        const lower = raw.toLowerCase();
        if (TRUE.has(lower)) return true;
        if (FALSE.has(lower)) return false;
        return invalid;
      },
      fallback,
    );
  },
  integer(fallback: number, min: number, max: number): EnvField<number> {
    return field(
      `an integer from ${min} to ${max}`,
      (raw) => {
        if (!/^-?\d+$/.test(raw)) return invalid;
        const n = Number(raw);
        return Number.isSafeInteger(n) && n >= min && n <= max ? n : invalid;
      },
      fallback,
    );
  },
  port(fallback: number): EnvField<number> {
    return env.integer(fallback, 0, 65535);
  },
  oneOf<const T extends string>(values: readonly T[], fallback: T): EnvField<T> {
    return field(`one of ${values.join(', ')}`, (raw) => ((values as readonly string[]).includes(raw) ? (raw as T) : invalid), fallback);
  },
  /** An absolute http(s) URL without a trailing slash (one is removed). */
  url(fallback: string | undefined): EnvField<string | undefined> {
    return field(
      'an absolute http:// or https:// URL',
      (raw) => {
        try {
          const url = new URL(raw);
          if (url.protocol !== 'http:' && url.protocol !== 'https:') return invalid;
          return raw.replace(/\/+$/, '');
        } catch {
          return invalid;
        }
      },
      fallback,
    );
  },
  /** Base64 of at least `bytes` random bytes; a secret. */
  base64Key(bytes: number): EnvField<Buffer | undefined> {
    return field(
      `base64 of at least ${bytes} random bytes`,
      (raw) => {
        if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw)) return invalid;
        const key = Buffer.from(raw, raw.includes('-') || raw.includes('_') ? 'base64url' : 'base64');
        return key.length >= bytes ? key : invalid;
      },
      undefined,
      true,
    );
  },
  custom<T>(expected: string, parse: (raw: string) => T | typeof invalid, fallback: EnvField<T>['fallback'], secret = false): EnvField<T> {
    return field(expected, parse, fallback, secret);
  },
  /** A readable file path (checked at start, so a typo names its variable instead of failing later). */
  readableFile(): EnvField<string | undefined> {
    return field(
      'the path of a readable file',
      (raw) => {
        try {
          accessSync(raw, constants.R_OK);
          return statSync(raw).isFile() ? raw : invalid;
        } catch {
          return invalid;
        }
      },
      undefined,
    );
  },
};
