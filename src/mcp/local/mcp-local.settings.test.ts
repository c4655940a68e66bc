import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, type Env } from '../../core/config.ts';
import { parseMcpConfig } from '../mcp.config.ts';
import { localTokenPath, resolveLocalSettings } from './mcp-local.settings.ts';

function settingsFor(env: Env) {
  return resolveLocalSettings(parseMcpConfig(env), { HOME: '/home/u', ...env });
}

function problemsOf(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('local flow settings', () => {
  it('local OAuth: forge, application, scopes, the default loopback callback and token path', () => {
    const s = settingsFor({ FORGE_USE_OAUTH: 'true', FORGE_URL: 'https://forge.example/', FORGE_OAUTH_APP_ID: 'app' });
    expect(s).toMatchObject({
      mode: 'oauth',
      forgeUrl: 'https://forge.example',
      clientId: 'app',
      scopes: ['api', 'read_user'],
      tokenPath: join('/home/u', '.config', 'platform', 'forge-token.json'),
    });
    if (s.mode !== 'oauth') throw new Error('mode');
    expect(s.redirect.url.href).toBe('http://127.0.0.1:7171/callback');
  });

  it('one line per missing or unsafe variable', () => {
    expect(problemsOf(() => settingsFor({ FORGE_USE_OAUTH: 'true', FORGE_OAUTH_REDIRECT_URI: 'https://evil.example/callback' }))).toEqual([
      expect.stringMatching(/^FORGE_URL: required when FORGE_USE_OAUTH=true/),
      expect.stringMatching(/^FORGE_OAUTH_APP_ID: required when FORGE_USE_OAUTH=true/),
      expect.stringMatching(/^FORGE_OAUTH_REDIRECT_URI: must use http:\/\//),
    ]);
    expect(
      problemsOf(() =>
        settingsFor({
          FORGE_USE_OAUTH: 'true',
          FORGE_URL: 'https://f.example',
          FORGE_OAUTH_APP_ID: 'a',
          FORGE_OAUTH_REDIRECT_URI: 'http://192.168.1.5:7171/cb',
        }),
      ),
    ).toEqual([expect.stringMatching(/^FORGE_OAUTH_REDIRECT_URI: must point to a loopback address/)]);
  });

  it('a personal access token without OAuth; OAuth wins when both are set', () => {
    expect(settingsFor({ FORGE_URL: 'https://f.example', FORGE_PERSONAL_ACCESS_TOKEN: 'glpat-x' })).toMatchObject({
      mode: 'personal-access-token',
      token: 'glpat-x',
    });
    expect(
      settingsFor({
        FORGE_USE_OAUTH: 'true',
        FORGE_URL: 'https://f.example',
        FORGE_OAUTH_APP_ID: 'a',
        FORGE_PERSONAL_ACCESS_TOKEN: 'glpat-x',
      }).mode,
    ).toBe('oauth');
    expect(problemsOf(() => settingsFor({ FORGE_PERSONAL_ACCESS_TOKEN: 'glpat-x' }))).toEqual([
      expect.stringMatching(/^FORGE_URL: required with FORGE_PERSONAL_ACCESS_TOKEN/),
    ]);
    expect(settingsFor({}).mode).toBe('none');
  });

  it('token path: explicit, ~/ expanded, relative resolved, default under the home directory', () => {
    expect(localTokenPath('/x/t.json', '/h')).toBe('/x/t.json');
    expect(localTokenPath('~/t.json', '/h')).toBe(join('/h', 't.json'));
    expect(localTokenPath('t.json', '/h')).toBe(resolve('t.json'));
    expect(localTokenPath(undefined, '/h')).toBe(join('/h', '.config', 'platform', 'forge-token.json'));
    expect(localTokenPath('  ', '/h')).toBe(join('/h', '.config', 'platform', 'forge-token.json'));
  });

  it('regression: the configuration default (under PLATFORM_DATA_DIR) contradicted the local default; unset means ~/.config/platform/forge-token.json', () => {
    expect(settingsFor({ PLATFORM_DATA_DIR: '/srv/platform' }).tokenPath).toBe(join('/home/u', '.config', 'platform', 'forge-token.json'));
    expect(settingsFor({ PLATFORM_DATA_DIR: '/srv/platform', FORGE_OAUTH_TOKEN_PATH: '~/tok.json' }).tokenPath).toBe(
      join('/home/u', 'tok.json'),
    );
  });
});
