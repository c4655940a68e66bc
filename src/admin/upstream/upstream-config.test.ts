import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/config.ts';
import { parseAdminConfig, upstreamAllowPrivate } from '../admin.config.ts';

describe('PLATFORM_UPSTREAM_ALLOW_PRIVATE', () => {
  it('defaults to allowed on SQLite (embedded) and refused on PostgreSQL', () => {
    const config = parseAdminConfig({});
    expect(config.PLATFORM_UPSTREAM_ALLOW_PRIVATE).toBeUndefined();
    expect(upstreamAllowPrivate(config, 'sqlite')).toBe(true);
    expect(upstreamAllowPrivate(config, 'postgres')).toBe(false);
  });

  it('answers the explicit value on either dialect', () => {
    const allowed = parseAdminConfig({ PLATFORM_UPSTREAM_ALLOW_PRIVATE: 'true' });
    expect(upstreamAllowPrivate(allowed, 'postgres')).toBe(true);
    const refused = parseAdminConfig({ PLATFORM_UPSTREAM_ALLOW_PRIVATE: 'false' });
    expect(upstreamAllowPrivate(refused, 'sqlite')).toBe(false);
  });

  it('stops the start on a value that is not a boolean, naming the variable', () => {
    expect(() => parseAdminConfig({ PLATFORM_UPSTREAM_ALLOW_PRIVATE: 'sometimes' })).toThrow(ConfigError);
    expect(() => parseAdminConfig({ PLATFORM_UPSTREAM_ALLOW_PRIVATE: 'sometimes' })).toThrow(
      'PLATFORM_UPSTREAM_ALLOW_PRIVATE: expected true or false, got "sometimes"',
    );
  });
});
