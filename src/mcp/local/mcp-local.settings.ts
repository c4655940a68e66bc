/**
 * The settings of the local (stdio) flow, derived from the MCP configuration (src/mcp/mcp.config.ts) with the
 * cross-checks only this flow needs (spec mcp-oauth.md point 4, issue 3 item 11).
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { ConfigError, type Env } from '../../core/config.ts';
import type { McpConfig } from '../mcp.config.ts';
import { DEFAULT_LOCAL_REDIRECT_URI, parseLoopbackRedirect, type LoopbackRedirect } from './mcp-local.redirect-uri.ts';
import { defaultTokenPath } from './mcp-local.token-file.ts';

/** The variables the local flow reads. */
export type LocalFlowConfig = Pick<
  McpConfig,
  | 'FORGE_URL'
  | 'FORGE_USE_OAUTH'
  | 'FORGE_OAUTH_APP_ID'
  | 'FORGE_OAUTH_REDIRECT_URI'
  | 'FORGE_OAUTH_TOKEN_PATH'
  | 'FORGE_OAUTH_SCOPES'
  | 'FORGE_PERSONAL_ACCESS_TOKEN'
>;

/** Settings of a local OAuth sign-in. */
export interface LocalOAuthSettings {
  mode: 'oauth';
  forgeUrl: string;
  clientId: string;
  scopes: string[];
  redirect: LoopbackRedirect;
  tokenPath: string;
}

/** What the stdio server authenticates with: local OAuth, a personal access token, or nothing configured. */
export type LocalMcpSettings =
  | LocalOAuthSettings
  | { mode: 'personal-access-token'; forgeUrl: string; token: string; tokenPath: string }
  | { mode: 'none'; tokenPath: string };

/**
 * The token file path: `FORGE_OAUTH_TOKEN_PATH` when the user set it (a leading `~/` is the home directory, as
 * MCP client configurations pass it unexpanded; a relative path is taken from the working directory), otherwise
 * `~/.config/platform/forge-token.json` — not a path under the working directory, which for a stdio server is
 * whatever directory the MCP client happens to start it in.
 */
export function localTokenPath(configured: string | undefined, home: string): string {
  const explicit = configured?.trim() ? configured.trim() : undefined;
  if (explicit === undefined) return defaultTokenPath(home);
  if (explicit === '~' || explicit.startsWith('~/')) return join(home, explicit.slice(1));
  return isAbsolute(explicit) ? explicit : resolve(explicit);
}

/** The home directory: `HOME` from the command's environment (tests set it), else the operating system's. */
export function homeDirectory(env: Env): string {
  return env.HOME?.trim() || homedir();
}

/**
 * Resolves the local settings. Throws `ConfigError` (one line per problem) when `FORGE_USE_OAUTH=true` lacks what
 * the sign-in needs, or a personal access token has no forge to go to. `FORGE_USE_OAUTH` wins over a personal
 * access token (issue 3 item 11: the static token is for "no OAuth").
 */
export function resolveLocalSettings(config: LocalFlowConfig, env: Env): LocalMcpSettings {
  const tokenPath = localTokenPath(config.FORGE_OAUTH_TOKEN_PATH, homeDirectory(env));
  const problems: string[] = [];
  if (config.FORGE_USE_OAUTH) {
    if (config.FORGE_URL === undefined)
      problems.push('FORGE_URL: required when FORGE_USE_OAUTH=true (the base URL of the forge to sign in to)');
    if (config.FORGE_OAUTH_APP_ID === undefined) {
      problems.push('FORGE_OAUTH_APP_ID: required when FORGE_USE_OAUTH=true (the id of a non-confidential forge OAuth application)');
    }
    const redirect = parseLoopbackRedirect(config.FORGE_OAUTH_REDIRECT_URI ?? DEFAULT_LOCAL_REDIRECT_URI);
    if (typeof redirect === 'string') {
      problems.push(
        `FORGE_OAUTH_REDIRECT_URI: ${redirect} (the local flow receives the code on this machine, e.g. ${DEFAULT_LOCAL_REDIRECT_URI})`,
      );
    }
    if (problems.length > 0 || typeof redirect === 'string' || config.FORGE_URL === undefined || config.FORGE_OAUTH_APP_ID === undefined) {
      throw new ConfigError(problems);
    }
    return {
      mode: 'oauth',
      forgeUrl: config.FORGE_URL,
      clientId: config.FORGE_OAUTH_APP_ID,
      scopes: config.FORGE_OAUTH_SCOPES.split(/\s+/).filter(Boolean),
      redirect,
      tokenPath,
    };
  }
  if (config.FORGE_PERSONAL_ACCESS_TOKEN !== undefined) {
    if (config.FORGE_URL === undefined)
      throw new ConfigError(['FORGE_URL: required with FORGE_PERSONAL_ACCESS_TOKEN (the base URL of the forge the token belongs to)']);
    return { mode: 'personal-access-token', forgeUrl: config.FORGE_URL, token: config.FORGE_PERSONAL_ACCESS_TOKEN, tokenPath };
  }
  return { mode: 'none', tokenPath };
}
