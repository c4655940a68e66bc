import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/config.ts';
import { mcpSettingsFromConfig } from './mcp.app.ts';
import { parseMcpConfig } from './mcp.config.ts';
import { resolveLocalSettings } from './local/mcp-local.settings.ts';

const SECRET = Buffer.alloc(32, 3).toString('base64');

function problems(env: Record<string, string>): string[] {
  try {
    parseMcpConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
}

describe('MCP configuration', () => {
  it('[CONFIG-VARIABLES] reads the spec variables with their defaults', () => {
    const config = parseMcpConfig({});
    expect(config.FORGE_MCP_OAUTH).toBe(false);
    expect(config.FORGE_OAUTH_CALLBACK_PROXY).toBe(false);
    expect(config.OAUTH_REGISTER_RATE_LIMIT_PER_HOUR).toBe(20);
    expect(config.OAUTH_STATELESS_MODE).toBe(false);
    expect(config.FORGE_OAUTH_SCOPES).toBe('api read_user');
    expect(config.allowlist.any).toBe(false);
    expect(config.allowlist.entries.length).toBeGreaterThan(5);
    const full = parseMcpConfig({
      FORGE_MCP_OAUTH: 'true',
      FORGE_OAUTH_CALLBACK_PROXY: 'true',
      MCP_SERVER_URL: 'https://mcp.example/forge/',
      FORGE_OAUTH_APP_ID: 'abc',
      FORGE_URL: 'https://gitlab.example',
      OAUTH_REGISTER_RATE_LIMIT_PER_HOUR: '5',
      OAUTH_STATELESS_MODE: 'true',
      OAUTH_STATELESS_SECRET: SECRET,
      OAUTH_REPLAY_CACHE_URL: 'redis://127.0.0.1:6379',
      FORGE_OAUTH_ALLOWED_REDIRECT_URIS: 'defaults,https://app.example/cb',
    });
    expect(full.MCP_SERVER_URL).toBe('https://mcp.example/forge');
    expect(full.OAUTH_STATELESS_SECRET?.length).toBe(32);
    expect(full.OAUTH_REGISTER_RATE_LIMIT_PER_HOUR).toBe(5);
    expect(full.notices).toEqual([]);
  });

  it('[CONFIG-CROSSCHECK] remote OAuth needs MCP_SERVER_URL and FORGE_OAUTH_APP_ID, one line each', () => {
    expect(problems({ FORGE_MCP_OAUTH: 'true', FORGE_URL: 'https://gitlab.example' })).toEqual([
      'MCP_SERVER_URL: required when FORGE_MCP_OAUTH=true (the public base URL of this MCP server)',
      'FORGE_OAUTH_APP_ID: required when FORGE_MCP_OAUTH=true (the id of the forge OAuth application)',
    ]);
  });

  it('[CONFIG-CROSSCHECK] stateless mode needs a secret of at least 32 bytes, never echoed', () => {
    expect(problems({ OAUTH_STATELESS_MODE: 'true' })).toEqual([
      'OAUTH_STATELESS_SECRET: required when OAUTH_STATELESS_MODE=true (base64 of at least 32 random bytes, the same on every replica)',
    ]);
    const short = Buffer.alloc(16, 1).toString('base64');
    const lines = problems({ OAUTH_STATELESS_MODE: 'true', OAUTH_STATELESS_SECRET: short });
    expect(lines).toEqual(['OAUTH_STATELESS_SECRET: expected base64 of at least 32 random bytes (value not shown: it is a secret)']);
    expect(lines.join()).not.toContain(short);
    expect(problems({ OAUTH_STATELESS_PREVIOUS_SECRET: SECRET })[0]).toMatch(/^OAUTH_STATELESS_PREVIOUS_SECRET: set only together/);
  });

  it('[CONFIG-CROSSCHECK] a bad allowlist entry, a bad URL and a non-redis replay cache are one line each', () => {
    expect(problems({ FORGE_OAUTH_ALLOWED_REDIRECT_URIS: 'defaults,http://evil.example/*' })).toEqual([
      'FORGE_OAUTH_ALLOWED_REDIRECT_URIS: http://evil.example/*: prefixes must be https (plain http only for localhost, 127.0.0.1 and [::1]) (entries: "defaults", "*", exact URIs, https prefixes ending in "/*")',
    ]);
    expect(problems({ MCP_SERVER_URL: 'ftp://x' })[0]).toMatch(/^MCP_SERVER_URL: expected/);
    expect(problems({ MCP_SERVER_URL: 'https://mcp.example/?q=1' })[0]).toMatch(/^MCP_SERVER_URL: expected/);
    expect(problems({ OAUTH_REPLAY_CACHE_URL: 'memcached://x' })[0]).toMatch(/^OAUTH_REPLAY_CACHE_URL: expected a redis/);
    expect(problems({ OAUTH_REGISTER_RATE_LIMIT_PER_HOUR: '0' })[0]).toMatch(/^OAUTH_REGISTER_RATE_LIMIT_PER_HOUR: expected an integer/);
  });

  it('[MODE-LOCAL-NOTICE] FORGE_OAUTH_REDIRECT_URI with FORGE_MCP_OAUTH is a notice, not an error', () => {
    const config = parseMcpConfig({
      FORGE_MCP_OAUTH: 'true',
      FORGE_URL: 'https://gitlab.example',
      MCP_SERVER_URL: 'https://mcp.example',
      FORGE_OAUTH_APP_ID: 'abc',
      FORGE_OAUTH_REDIRECT_URI: 'http://127.0.0.1:7777/callback',
    });
    expect(config.notices).toHaveLength(1);
    expect(config.notices[0]).toMatch(/FORGE_OAUTH_REDIRECT_URI is read only by the local OAuth flow.*does not affect remote OAuth/);
    // Kept exactly as written: a redirect URI's trailing slash matters.
    expect(parseMcpConfig({ FORGE_OAUTH_REDIRECT_URI: 'http://127.0.0.1:7777/' }).FORGE_OAUTH_REDIRECT_URI).toBe('http://127.0.0.1:7777/');
  });

  it('[ALLOW-STAR] "*" is accepted with a warning notice', () => {
    const config = parseMcpConfig({ FORGE_OAUTH_ALLOWED_REDIRECT_URIS: '*' });
    expect(config.allowlist.any).toBe(true);
    expect(config.notices.join()).toMatch(/disables the redirect allowlist/);
  });

  it('[CONFIG-TOKEN-PATH] regression: FORGE_OAUTH_TOKEN_PATH defaulted to {PLATFORM_DATA_DIR}/forge-oauth-token.json against the local default; unset it is unset', () => {
    expect(parseMcpConfig({ PLATFORM_DATA_DIR: '/srv/platform' }).FORGE_OAUTH_TOKEN_PATH).toBeUndefined();
    expect(parseMcpConfig({ FORGE_OAUTH_TOKEN_PATH: '/tmp/t.json' }).FORGE_OAUTH_TOKEN_PATH).toBe('/tmp/t.json');
    const env = { PLATFORM_DATA_DIR: '/srv/platform', FORGE_URL: 'https://f.example', FORGE_PERSONAL_ACCESS_TOKEN: 'glpat-x' };
    // The local flow gets its own default from the parsed configuration alone (no look at the raw variable).
    expect(resolveLocalSettings(parseMcpConfig(env), { HOME: '/home/u' }).tokenPath).toBe(
      join('/home/u', '.config', 'platform', 'forge-token.json'),
    );
  });

  it('[REPLAY-REDIS] stateless replicas share their replay cache in PLATFORM_REDIS_URL unless OAUTH_REPLAY_CACHE_URL names another', () => {
    const stateless = {
      FORGE_MCP_OAUTH: 'true',
      MCP_SERVER_URL: 'https://mcp.example/',
      FORGE_OAUTH_APP_ID: 'abc',
      FORGE_URL: 'https://gitlab.example',
      OAUTH_STATELESS_MODE: 'true',
      OAUTH_STATELESS_SECRET: SECRET,
    };
    const core = { TRUST_PROXY: false, PLATFORM_BODY_LIMIT_BYTES: 1_000_000, PLATFORM_HOST: '127.0.0.1' };
    const settings = (env: Record<string, string>) => mcpSettingsFromConfig(parseMcpConfig(env), core, Buffer.alloc(32));
    expect(settings(stateless).stateless?.replayCacheUrl).toBeUndefined();
    expect(settings({ ...stateless, PLATFORM_REDIS_URL: 'redis://shared:6379' }).stateless?.replayCacheUrl).toBe('redis://shared:6379');
    expect(
      settings({ ...stateless, PLATFORM_REDIS_URL: 'redis://shared:6379', OAUTH_REPLAY_CACHE_URL: 'redis://replay:6379' }).stateless
        ?.replayCacheUrl,
    ).toBe('redis://replay:6379');
  });
});
