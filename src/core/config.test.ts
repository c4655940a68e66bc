import { describe, expect, it } from 'vitest';
import { ConfigError, env, parseEnv } from './config.ts';
import { parseCoreConfig } from './config.core.ts';

describe('parseEnv', () => {
  const spec = {
    PORT: env.port(8080),
    FLAG: env.boolean(false),
    KEY: env.base64Key(32),
    MODE: env.oneOf(['a', 'b'], 'a'),
  };

  it('applies defaults for unset and empty variables', () => {
    const config = parseEnv(spec, { FLAG: '' });
    expect(config).toEqual({ PORT: 8080, FLAG: false, KEY: undefined, MODE: 'a' });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reports every bad value on its own line, naming the variable and what was expected', () => {
    let error: unknown;
    try {
      parseEnv(spec, { PORT: 'eighty', FLAG: 'maybe', MODE: 'c' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'PORT: expected an integer from 0 to 65535, got "eighty"',
      'FLAG: expected true or false, got "maybe"',
      'MODE: expected one of a, b, got "c"',
    ]);
  });

  it('never echoes a secret value', () => {
    const secret = 'c2hvcnQ=';
    expect(() => parseEnv(spec, { KEY: secret })).toThrowError(/KEY: expected base64 of at least 32 random bytes \(value not shown/);
    try {
      parseEnv(spec, { KEY: secret });
    } catch (e) {
      expect((e as Error).message).not.toContain(secret);
    }
  });

  it('accepts a 32-byte base64 key', () => {
    const key = Buffer.alloc(32, 1).toString('base64');
    expect(parseEnv(spec, { KEY: key }).KEY?.length).toBe(32);
  });
});

describe('core config', () => {
  it('derives the SQLite file from the data directory', () => {
    expect(parseCoreConfig({ PLATFORM_DATA_DIR: '/srv/p' }).DATABASE_URL).toBe('sqlite:/srv/p/platform.db');
    expect(parseCoreConfig({}).DATABASE_URL).toBe('sqlite:./data/platform.db');
  });

  it('refuses an unknown database scheme and half a TLS pair', () => {
    expect(() => parseCoreConfig({ DATABASE_URL: 'mysql://x' })).toThrowError(/DATABASE_URL: expected sqlite:<path> or postgres:/);
    expect(() => parseCoreConfig({ PLATFORM_TLS_CERT: '/nonexistent/cert.pem' })).toThrowError(
      /PLATFORM_TLS_CERT: expected the path of a readable file, got "\/nonexistent\/cert.pem"/,
    );
    expect(() => parseCoreConfig({ PLATFORM_TLS_CERT: import.meta.filename })).toThrowError(
      /PLATFORM_TLS_CERT and PLATFORM_TLS_KEY: expected both or neither/,
    );
  });

  it('hides database passwords in errors and requires a shared key on PostgreSQL', () => {
    expect(() => parseCoreConfig({ DATABASE_URL: 'mysql://root:hunter2@db/x?password=hunter3' })).toThrowError(
      /got "mysql:\/\/root:\*\*\*@db\/x\?password=\*\*\*"/,
    );
    expect(() => parseCoreConfig({ DATABASE_URL: 'postgres://u:p@db/x' })).toThrowError(
      /PLATFORM_SECRET_KEY: expected base64 of 32 random bytes when DATABASE_URL is PostgreSQL/,
    );
    expect(
      parseCoreConfig({ DATABASE_URL: 'postgres://db/x', PLATFORM_SECRET_KEY: Buffer.alloc(32).toString('base64') }).DATABASE_URL,
    ).toBe('postgres://db/x');
  });
});

describe('TRUST_PROXY', () => {
  it('reads true as the proxies on loopback and private networks, and lists as proxy addresses', () => {
    expect(parseCoreConfig({}).TRUST_PROXY).toBe(false);
    expect(parseCoreConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe('loopback,linklocal,uniquelocal');
    expect(parseCoreConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).TRUST_PROXY).toBe('10.0.0.0/8,127.0.0.1');
    expect(() => parseCoreConfig({ TRUST_PROXY: 'everyone' })).toThrowError(/TRUST_PROXY: expected false, true \(proxies on loopback/);
  });
});
