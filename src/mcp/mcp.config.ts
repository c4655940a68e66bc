/**
 * Configuration of the forge MCP server (spec "Configuration variables", issue 3 item 1). Parsed once at start with
 * the platform's other specs; cross-checks throw one line each. Things that are allowed but worth telling the
 * operator (for example `FORGE_OAUTH_REDIRECT_URI` set together with `FORGE_MCP_OAUTH`) are returned as `notices`
 * and logged by the listener at start.
 */
import { ConfigError, env, invalid, parseEnv, type Env, type EnvValues } from '../core/config.ts';
import { parseAllowedOrigins } from './mcp.guard.ts';
import { parseAllowlist, type Allowlist } from './oauth/oauth.allowlist.ts';
import { forgeTools } from './tools/forge.tools.ts';
import { defaultToolsetNames, toolsetNames } from './tools/toolsets.ts';
import { isToolPattern, parseNameList, unmatchedPatterns, type ToolSurface } from './tools/tool.surface.ts';

/** A URL kept exactly as written (a redirect URI's trailing slash matters for exact matching). */
function exactUrl(): ReturnType<typeof env.custom<string | undefined>> {
  return env.custom<string | undefined>(
    'an absolute http:// or https:// URL',
    (raw) => {
      try {
        const url = new URL(raw);
        return url.protocol === 'http:' || url.protocol === 'https:' ? raw : invalid;
      } catch {
        return invalid;
      }
    },
    undefined,
  );
}

/** The public base URL: http(s), no query or fragment, no trailing slash. */
const serverUrl = env.custom<string | undefined>(
  'an absolute http:// or https:// URL without query or fragment',
  (raw) => {
    try {
      const url = new URL(raw);
      if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username) return invalid;
      return raw.replace(/\/+$/, '');
    } catch {
      return invalid;
    }
  },
  undefined,
);

/** Space-separated OAuth scopes as the forge names them. */
const scopes = env.custom<string>(
  'space-separated scope names such as "api read_user"',
  (raw) => {
    const words = raw.split(/\s+/).filter(Boolean);
    return words.length > 0 && words.every((w) => /^[a-z_]+$/.test(w)) ? words.join(' ') : invalid;
  },
  'api read_user',
);

export const mcpEnvSpec = {
  /** Enables remote MCP OAuth (spec "What the service does" 1). */
  FORGE_MCP_OAUTH: env.boolean(false),
  /** Callback proxy mode; passthrough when false (spec 2). */
  FORGE_OAUTH_CALLBACK_PROXY: env.boolean(false),
  /** Public base URL; the forge callback is `{MCP_SERVER_URL}/callback`. */
  MCP_SERVER_URL: serverUrl,
  /** The real forge OAuth application's id. */
  FORGE_OAUTH_APP_ID: env.optionalString(),
  /** Client callback allowlist (syntax in oauth.allowlist.ts and docs/mcp.md); default `defaults`. */
  FORGE_OAUTH_ALLOWED_REDIRECT_URIS: env.string('defaults'),
  OAUTH_REGISTER_RATE_LIMIT_PER_HOUR: env.integer(20, 1, 1_000_000),
  /** Sign-ins started (pending transactions created) per client address per 10 minutes, callback proxy mode. */
  OAUTH_SIGNIN_RATE_LIMIT_PER_10_MIN: env.integer(30, 1, 1_000_000),
  OAUTH_STATELESS_MODE: env.boolean(false),
  /** Base64 of at least 32 random bytes, the same on every replica. */
  OAUTH_STATELESS_SECRET: env.base64Key(32),
  /** The secret being rotated out: still opens values sealed with it, never seals. */
  OAUTH_STATELESS_PREVIOUS_SECRET: env.base64Key(32),
  /** `redis://…`: consumed sealed codes and states are remembered across replicas (unset: PLATFORM_REDIS_URL's). */
  OAUTH_REPLAY_CACHE_URL: env.custom<string | undefined>(
    'a redis:// or rediss:// URL',
    (raw) => (/^rediss?:\/\/.+/.test(raw) ? raw : invalid),
    undefined,
  ),
  /** Local (stdio) OAuth flow, src/mcp/local (spec 4). */
  FORGE_USE_OAUTH: env.boolean(false),
  /** Loopback redirect URI of the local flow only. */
  FORGE_OAUTH_REDIRECT_URI: exactUrl(),
  /**
   * Where the local flow keeps its token (mode 0600). Unset: the local flow's own default,
   * `~/.config/platform/forge-token.json` (src/mcp/local/mcp-local.settings.ts).
   */
  FORGE_OAUTH_TOKEN_PATH: env.optionalString(),
  /** Base URL of the forge; unset under `npm start`, where the dev forge runs instead. */
  FORGE_URL: env.url(undefined),
  /** A static forge token for stdio use without OAuth. */
  FORGE_PERSONAL_ACCESS_TOKEN: env.custom<string | undefined>('a non-empty token', (raw) => raw, undefined, true),
  /** Scopes requested from the forge and advertised to clients. */
  FORGE_OAUTH_SCOPES: scopes,
  /**
   * Browser origins allowed on `/mcp` besides `MCP_SERVER_URL`'s own (issue 17 item 2): comma-separated
   * `scheme://host[:port]`. Checked in parseMcpConfig (mcp.guard.ts parses it).
   */
  MCP_ALLOWED_ORIGINS: env.optionalString(),
  /** Toolsets served (comma-separated); unset: the default toolsets, `all`: every one. The operator's bound on the tool surface (tools/tool.surface.ts). */
  FORGE_TOOLSETS: env.optionalString(),
  /** Tool names or globs served (comma-separated; intersected with the toolsets); unset: all. */
  FORGE_TOOLS: env.optionalString(),
  /** Tool names or globs never served (comma-separated). */
  FORGE_DENIED_TOOLS: env.optionalString(),
  /** Only read-only tools are served (and callable). */
  FORGE_READ_ONLY: env.boolean(false),
  /** Bodies the tools write may hold GitLab quick actions (lines starting with `/`); refused by default. */
  FORGE_ALLOW_QUICK_ACTIONS: env.boolean(false),
  /** PEM of the CA a self-hosted forge's certificate chains to (added to the public roots and NODE_EXTRA_CA_CERTS). */
  FORGE_CA_CERT_PATH: env.optionalString(),
  /** The deadline of one forge REST request made by a tool, in milliseconds. */
  FORGE_TIMEOUT_MS: env.integer(15_000, 100, 600_000),
  /** `/mcp` requests per minute per token; 0 turns the limit off. */
  MCP_RATE_LIMIT_PER_MINUTE: env.integer(600, 0, 1_000_000),
  /**
   * `/mcp` requests per minute per client address; 0 turns the limit off. High by default: a hosted client
   * (a web assistant) reaches the server from a few addresses for all its users.
   */
  MCP_ADDRESS_RATE_LIMIT_PER_MINUTE: env.integer(6000, 0, 10_000_000),
  /**
   * Where replicas share the `/mcp` rate limits (the same Redis the model plane's limits use) and, unless
   * OAUTH_REPLAY_CACHE_URL names another, the used sealed codes and confirmation tokens; unset: per process.
   */
  PLATFORM_REDIS_URL: env.custom<string | undefined>(
    'a redis:// or rediss:// URL',
    (raw) => (/^rediss?:\/\/.+/.test(raw) ? raw : invalid),
    undefined,
    // A URL may carry a password.
    true,
  ),
} as const;

export type McpEnv = EnvValues<typeof mcpEnvSpec>;

/** The parsed MCP configuration plus start-time notices. */
export type McpConfig = McpEnv & {
  /** The parsed `FORGE_OAUTH_ALLOWED_REDIRECT_URIS`. */
  readonly allowlist: Allowlist;
  /** The operator's bound on the tool surface (`FORGE_TOOLSETS`, `FORGE_TOOLS`, `FORGE_DENIED_TOOLS`, `FORGE_READ_ONLY`). */
  readonly toolSurface: ToolSurface;
  /** The parsed `MCP_ALLOWED_ORIGINS`. */
  readonly allowedOrigins: readonly string[];
  /** Lines to log at start (allowed but noteworthy settings). */
  readonly notices: readonly string[];
};

/**
 * Parses and cross-checks the MCP variables. Remote OAuth against a configured forge (`FORGE_URL` set) needs
 * `MCP_SERVER_URL` and `FORGE_OAUTH_APP_ID`; without `FORGE_URL` the dev forge provides both at start.
 */
export function parseMcpConfig(source: Env): McpConfig {
  const config = parseEnv(mcpEnvSpec, source);
  const problems: string[] = [];
  const notices: string[] = [];
  if (config.FORGE_MCP_OAUTH && config.FORGE_URL !== undefined) {
    if (config.MCP_SERVER_URL === undefined)
      problems.push('MCP_SERVER_URL: required when FORGE_MCP_OAUTH=true (the public base URL of this MCP server)');
    if (config.FORGE_OAUTH_APP_ID === undefined)
      problems.push('FORGE_OAUTH_APP_ID: required when FORGE_MCP_OAUTH=true (the id of the forge OAuth application)');
  }
  if (config.FORGE_OAUTH_CALLBACK_PROXY && !config.FORGE_MCP_OAUTH && config.FORGE_URL !== undefined) {
    problems.push('FORGE_OAUTH_CALLBACK_PROXY: needs FORGE_MCP_OAUTH=true (callback proxy is a mode of remote OAuth)');
  }
  if (config.OAUTH_STATELESS_MODE && config.OAUTH_STATELESS_SECRET === undefined) {
    problems.push(
      'OAUTH_STATELESS_SECRET: required when OAUTH_STATELESS_MODE=true (base64 of at least 32 random bytes, the same on every replica)',
    );
  }
  if (config.OAUTH_STATELESS_PREVIOUS_SECRET !== undefined && config.OAUTH_STATELESS_SECRET === undefined) {
    problems.push('OAUTH_STATELESS_PREVIOUS_SECRET: set only together with OAUTH_STATELESS_SECRET (it is the secret being rotated out)');
  }
  let allowedOrigins: string[] = [];
  try {
    allowedOrigins = parseAllowedOrigins(config.MCP_ALLOWED_ORIGINS);
  } catch (error) {
    problems.push(`MCP_ALLOWED_ORIGINS: ${(error as Error).message} (comma-separated origins such as https://app.example.com)`);
  }
  const toolSurface = parseToolSurface(config, problems);
  let allowlist: Allowlist | undefined;
  try {
    allowlist = parseAllowlist(config.FORGE_OAUTH_ALLOWED_REDIRECT_URIS);
  } catch (error) {
    problems.push(
      `FORGE_OAUTH_ALLOWED_REDIRECT_URIS: ${(error as Error).message} (entries: "defaults", "*", exact URIs, https prefixes ending in "/*")`,
    );
  }
  if (problems.length > 0 || !allowlist) throw new ConfigError(problems);

  if (config.FORGE_OAUTH_REDIRECT_URI !== undefined && config.FORGE_MCP_OAUTH) {
    // Spec "What the service does" 4: only the local flow reads it.
    notices.push(
      'FORGE_OAUTH_REDIRECT_URI is read only by the local OAuth flow (FORGE_USE_OAUTH); it does not affect remote OAuth, whose forge callback is {MCP_SERVER_URL}/callback in callback proxy mode',
    );
  }
  if (allowlist.any) {
    notices.push('FORGE_OAUTH_ALLOWED_REDIRECT_URIS=* disables the redirect allowlist: any client callback is accepted (not recommended)');
  }
  if (config.OAUTH_REPLAY_CACHE_URL !== undefined && !config.OAUTH_STATELESS_MODE) {
    notices.push('OAUTH_REPLAY_CACHE_URL is used only in stateless mode (OAUTH_STATELESS_MODE=true); it is ignored');
  }
  if (config.MCP_SERVER_URL?.startsWith('http://') && !/^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:|\/|$)/.test(config.MCP_SERVER_URL)) {
    notices.push('MCP_SERVER_URL uses plain http on a non-loopback host: tokens and codes would cross the network unencrypted');
  }
  return Object.freeze({
    ...config,
    toolSurface,
    allowlist,
    allowedOrigins: Object.freeze(allowedOrigins),
    notices: Object.freeze(notices),
  });
}

/**
 * The tool surface variables. Names that match nothing are refused at start: a typo in a deny list would
 * otherwise serve the tool the operator meant to hide, and one in an allow list would silently serve nothing.
 */
function parseToolSurface(config: McpEnv, problems: string[]): ToolSurface {
  const declared = forgeTools();
  const known = toolsetNames();
  // Unset: the default toolsets (opt-in ones must be named); `all`: every toolset.
  const named = parseNameList(config.FORGE_TOOLSETS);
  const defaults = defaultToolsetNames();
  const toolsets =
    named === undefined ? (defaults.length < known.length ? defaults : undefined) : named.includes('all') ? undefined : named;
  const unknown = (toolsets ?? []).filter((s) => !known.includes(s));
  if (unknown.length > 0) problems.push(`FORGE_TOOLSETS: unknown toolsets ${unknown.join(', ')} (known: ${known.join(', ')})`);
  const tools = parseNameList(config.FORGE_TOOLS);
  const denied = parseNameList(config.FORGE_DENIED_TOOLS) ?? [];
  for (const [name, list] of [
    ['FORGE_TOOLS', tools ?? []],
    ['FORGE_DENIED_TOOLS', denied],
  ] as const) {
    const malformed = list.filter((p) => !isToolPattern(p));
    if (malformed.length > 0) problems.push(`${name}: not tool names or globs: ${malformed.join(', ')} (comma-separated, a-z 0-9 _ * ?)`);
    else {
      const unmatched = unmatchedPatterns(declared, list);
      if (unmatched.length > 0) problems.push(`${name}: match no tool: ${unmatched.join(', ')}`);
    }
  }
  return Object.freeze({
    ...(toolsets !== undefined ? { toolsets } : {}),
    ...(tools !== undefined ? { tools } : {}),
    denied,
    readOnly: config.FORGE_READ_ONLY,
  });
}
