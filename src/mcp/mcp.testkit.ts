/**
 * Test and benchmark fixtures of the forge MCP server: a dev forge and an MCP listener on 127.0.0.1 wired to each
 * other, fake clocks for both, captured logs, and a fetch-driven "browser" that walks our consent page and the
 * forge's sign-in and authorize pages (the Chromium end-to-end tests walk the same pages with a real browser).
 * Test support, not production code, so the ~400-line guide for production files does not apply.
 */
import { createHash, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { fakeClock } from '../core/clock.ts';
import { freePort } from '../core/http/free-port.ts';
import { createLogger, type Logger } from '../core/logger.ts';
import {
  createForgeBrowser,
  startDevForge,
  type DevForgeApplication,
  type DevForgeUser,
  type ForgeBrowser,
  type StartedDevForge,
} from '../devforge/index.ts';
import { buildMcpApp, type McpApp, type McpSettings } from './mcp.app.ts';
import type { McpLimitSettings, McpRequestLimiter } from './mcp.limits.ts';
import { parseAllowlist } from './oauth/oauth.allowlist.ts';
import type { FetchedDocument } from './oauth/oauth.client-metadata.ts';
import type { ReplayCache } from './oauth/oauth.replay.ts';
import { createForgeHttp } from './tools/forge.http.ts';
import type { ToolSurface } from './tools/tool.surface.ts';

/** The client callback the tests register (loopback; nothing listens there, the redirect is read from the 302). */
export const CLIENT_CALLBACK = 'http://127.0.0.1:45678/callback';
/** A fixed stateless secret for tests (base64 of 32 bytes). */
export const TEST_STATELESS_SECRET = Buffer.alloc(32, 11);

export type FakeClock = ReturnType<typeof fakeClock>;

/** Log lines captured in memory, to assert that no secret is ever written. */
export interface CapturedLogs {
  lines: string[];
  text(): string;
  logger: Logger;
}

export function captureLogger(): CapturedLogs {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, text: () => lines.join('\n'), logger: createLogger({ level: 'debug', destination: stream }) };
}

/** A PKCE pair with its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface TestForge {
  forge: StartedDevForge;
  user: DevForgeUser;
  app: DevForgeApplication;
  clock: FakeClock;
}

/**
 * A dev forge with one user (and `otherUsers`, who also get the seeded projects and join the demo group's project)
 * and one public application registered for `redirectUris`, on a fake clock.
 */
export async function startTestForge(
  redirectUris: string[],
  clock: FakeClock = fakeClock(Date.now()),
  otherUsers: readonly DevForgeUser[] = [],
): Promise<TestForge> {
  const user: DevForgeUser = {
    id: 1,
    username: 'dana',
    name: 'Dana Developer',
    email: 'dana@example.test',
    password: `pw-${randomBytes(9).toString('base64url')}`,
  };
  const app: DevForgeApplication = {
    uid: randomBytes(32).toString('hex'),
    name: 'Forge MCP server (test)',
    redirectUris,
    confidential: false,
    scopes: ['api', 'read_api', 'read_user'],
  };
  const forge = await startDevForge({ users: [user, ...otherUsers], applications: [app], clock: () => clock.now() });
  return { forge, user, app, clock };
}

export interface StackOptions {
  mode: 'passthrough' | 'callback_proxy' | 'none';
  stateless?: { secret?: Buffer; previous?: Buffer; replayCacheUrl?: string };
  /** A path under which the public URL lives (`/forge`), to test the path-prefixed variants. */
  serverPath?: string;
  allowlist?: string;
  registerLimitPerHour?: number;
  /** Sign-ins started per client address per 10 minutes (default: high, tests run many flows from 127.0.0.1). */
  signinLimitPer10Min?: number;
  /** `true` as TRUST_PROXY=true reads it (proxies on loopback and private networks), or a list of proxies. */
  trustProxy?: boolean | string;
  validationCacheTtlMs?: number;
  /** Extra redirect URIs registered at the forge (passthrough registers CLIENT_CALLBACK by default). */
  forgeRedirectUris?: string[];
  fetchClientMetadata?: (url: URL) => Promise<FetchedDocument>;
  replay?: ReplayCache;
  /** The MCP server's clock (default: a fake clock at the current time). */
  clock?: FakeClock;
  /** Reuse a forge (for several servers sharing one forge). */
  forge?: TestForge;
  /** Users of the stack's own forge besides the signed-in one (members of the demo projects, as every dev forge user is). */
  otherForgeUsers?: readonly DevForgeUser[];
  /** Fixed public URL and port (several replicas behind one proxy). */
  serverUrl?: string;
  port?: number;
  /** The fetch the server uses to reach the forge (the benchmark adds network latency). */
  fetch?: typeof fetch;
  /**
   * The server's logger instead of the capturing one (the benchmark logs at info to /dev/null, as production logs
   * at info to a stream, rather than keeping every debug line in memory); `logs` then stays empty.
   */
  log?: Logger;
  /** Reach the forge with the production client (forge.http.ts: undici pool, its request API for the tools). */
  productionForgeClient?: boolean;
  /** `MCP_ALLOWED_ORIGINS`, parsed. */
  allowedOrigins?: string[];
  /** `PLATFORM_HOST` as the settings see it (the stack always listens on 127.0.0.1); unset: no Host check. */
  bindHost?: string;
  rateLimits?: McpLimitSettings;
  limiter?: McpRequestLimiter;
  allowQuickActions?: boolean;
  forgeTimeoutMs?: number;
  /** The operator's bound on the tool surface (FORGE_TOOLSETS & co.). */
  toolSurface?: ToolSurface;
  /** `PLATFORM_REDIS_URL` (shared rate limits and confirmation nonces). */
  redisUrl?: string;
  /** The key derived from the platform secret (default: random; replicas of one deployment share it). */
  localSecret?: Buffer;
}

export interface Stack {
  forge: TestForge;
  mcp: McpApp;
  /** Where this server listens (may differ from `serverUrl` behind a proxy). */
  url: string;
  /** The public base URL (`MCP_SERVER_URL`). */
  serverUrl: string;
  clock: FakeClock;
  logs: CapturedLogs;
  settings: McpSettings;
  close(): Promise<void>;
}

/** Starts a dev forge (unless given) and an MCP server against it, both on 127.0.0.1. */
export async function startStack(options: StackOptions): Promise<Stack> {
  const port = options.port ?? (await freePort());
  const serverUrl = options.serverUrl ?? `http://127.0.0.1:${port}${options.serverPath ?? ''}`;
  const clock = options.clock ?? fakeClock(Date.now());
  const ownForge = options.forge === undefined;
  const forge =
    options.forge ??
    (await startTestForge(
      options.mode === 'callback_proxy'
        ? [`${serverUrl}/callback`, ...(options.forgeRedirectUris ?? [])]
        : [CLIENT_CALLBACK, ...(options.forgeRedirectUris ?? [])],
      undefined,
      options.otherForgeUsers,
    ));
  const logs = captureLogger();
  const settings: McpSettings = {
    mode: options.mode,
    serverUrl,
    forgeUrl: forge.forge.url,
    appId: forge.app.uid,
    scopes: 'api read_user',
    allowlist: parseAllowlist(options.allowlist ?? 'defaults'),
    registerLimitPerHour: options.registerLimitPerHour ?? 1000,
    signinLimitPer10Min: options.signinLimitPer10Min ?? 1_000_000,
    stateless: options.stateless
      ? {
          secret: options.stateless.secret ?? TEST_STATELESS_SECRET,
          ...(options.stateless.previous ? { previous: options.stateless.previous } : {}),
          ...(options.stateless.replayCacheUrl ? { replayCacheUrl: options.stateless.replayCacheUrl } : {}),
        }
      : undefined,
    localSecret: options.localSecret ?? randomBytes(32),
    trustProxy: options.trustProxy === true ? 'loopback,linklocal,uniquelocal' : (options.trustProxy ?? false),
    bodyLimit: 1024 * 1024,
    ...(options.validationCacheTtlMs !== undefined ? { validationCacheTtlMs: options.validationCacheTtlMs } : {}),
    ...(options.allowedOrigins ? { allowedOrigins: options.allowedOrigins } : {}),
    ...(options.bindHost ? { bindHost: options.bindHost } : {}),
    // Tests run many requests from 127.0.0.1 with few tokens: high limits unless a test sets its own.
    rateLimits: options.rateLimits ?? { perTokenPerMinute: 1_000_000, perAddressPerMinute: 1_000_000 },
    ...(options.allowQuickActions !== undefined ? { allowQuickActions: options.allowQuickActions } : {}),
    ...(options.forgeTimeoutMs !== undefined ? { forgeTimeoutMs: options.forgeTimeoutMs } : {}),
    ...(options.toolSurface ? { toolSurface: options.toolSurface } : {}),
    ...(options.redisUrl ? { redisUrl: options.redisUrl } : {}),
  };
  const forgeHttp = options.productionForgeClient ? createForgeHttp({ env: {} }) : undefined;
  const mcp = await buildMcpApp({
    settings,
    log: options.log ?? logs.logger,
    clock,
    fetch: options.fetch ?? forgeHttp?.fetch ?? globalThis.fetch,
    ...(forgeHttp ? { forgeSend: forgeHttp.send } : {}),
    ...(options.fetchClientMetadata ? { fetchClientMetadata: options.fetchClientMetadata } : {}),
    ...(options.replay ? { replay: options.replay } : {}),
    ...(options.limiter ? { limiter: options.limiter } : {}),
  });
  await mcp.app.listen({ host: '127.0.0.1', port });
  return {
    forge,
    mcp,
    url: `http://127.0.0.1:${port}`,
    serverUrl,
    clock,
    logs,
    settings,
    async close() {
      await mcp.close();
      await forgeHttp?.close();
      if (ownForge) await forge.forge.close();
    },
  };
}

/** A stack with no OAuth in front (mode `none`, unless given) and a personal access token (`api`) of its forge user. */
export async function startTokenStack(options: Partial<StackOptions> = {}): Promise<{ stack: Stack; pat: string }> {
  const stack = await startStack({ mode: 'none', ...options });
  return { stack, pat: stack.forge.forge.createPersonalAccessToken(stack.forge.user.username, ['api']) };
}

/** POST /register with a JSON body; returns status, body and headers. */
export async function register(
  base: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(`${base}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, headers: response.headers };
}

/** An `/authorize` URL with the usual parameters; `undefined` values are left out. */
export function authorizeUrl(serverUrl: string, params: Record<string, string | undefined>): string {
  const url = new URL(`${serverUrl}/authorize`);
  const all: Record<string, string | undefined> = { response_type: 'code', code_challenge_method: 'S256', ...params };
  for (const [k, v] of Object.entries(all)) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

/** POST /token with a form; returns status, JSON body and headers. */
export async function token(
  base: string,
  form: Record<string, string | undefined>,
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) if (v !== undefined) body.set(k, v);
  const response = await fetch(`${base}/token`, { method: 'POST', body });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, headers: response.headers };
}

/** The hidden fields of our consent form. */
export function consentFields(html: string): { request: string; csrf: string } {
  const field = (name: string) => {
    const match = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html);
    if (!match?.[1]) throw new Error(`consent page without ${name}`);
    return match[1]
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>');
  };
  return { request: field('request'), csrf: field('csrf') };
}

/** One sign-in walked by the fetch browser, with the intermediate locations kept for assertions. */
export interface Walk {
  browser: ForgeBrowser;
  /** The consent page HTML (callback proxy mode, first sign-in). */
  consentHtml?: string;
  /** Our redirect to the forge. */
  forgeAuthorize?: string;
  /** The forge's redirect to our `/callback` (callback proxy mode). */
  callback?: string;
  /** Where the browser finally lands: the client's callback with `code`/`error`, `state`, `iss`. */
  clientRedirect: URL;
}

/**
 * Walks a sign-in from our `/authorize` URL: the consent page (approve or deny), the forge's sign-in and
 * authorize pages, our `/callback`, up to the client's callback. `browser` keeps cookies between walks.
 */
export async function walkSignIn(
  authorize: string,
  user: { username: string; password: string },
  options: { browser?: ForgeBrowser; consent?: 'approve' | 'deny'; forgeDecision?: 'authorize' | 'deny'; serverOrigin?: string } = {},
): Promise<Walk> {
  const browser = options.browser ?? createForgeBrowser();
  const walk: Partial<Walk> = { browser };
  // The forge comes back to the public URL, which differs from the replica's own when a proxy is in front.
  const ours = new URL(options.serverOrigin ?? authorize).origin;
  let response = await browser.request(authorize);
  if (response.status === 200) {
    const html = await response.text();
    walk.consentHtml = html;
    const fields = consentFields(html);
    const action = /<form method="post" action="([^"]*)"/.exec(html)?.[1] ?? `${ours}/authorize`;
    response = await browser.request(new URL(new URL(action.replace(/&amp;/g, '&')).pathname, authorize).href, {
      form: { ...fields, decision: options.consent ?? 'approve' },
    });
  }
  if (response.status !== 302) throw new Error(`authorize answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  const next = new URL(response.headers.get('location') ?? '', authorize);
  await response.body?.cancel();
  if (next.origin === ours || next.origin === new URL(authorize).origin || !next.pathname.endsWith('/oauth/authorize')) {
    // Not sent to the forge: an error (or a denial) straight back to the client.
    return { ...walk, clientRedirect: next } as Walk;
  }
  walk.forgeAuthorize = next.href;
  const afterForge = new URL(await browser.authorize(next.href, { ...user, decision: options.forgeDecision ?? 'authorize' }));
  if (afterForge.origin !== ours) return { ...walk, clientRedirect: afterForge } as Walk;
  walk.callback = afterForge.href;
  const callback = await browser.request(afterForge.href);
  if (callback.status !== 302) throw new Error(`callback answered ${callback.status}: ${(await callback.text()).slice(0, 300)}`);
  walk.clientRedirect = new URL(callback.headers.get('location') ?? '');
  await callback.body?.cancel();
  return walk as Walk;
}

/**
 * Opens our `/authorize` (callback proxy mode) in `browser` and approves its consent page; returns our redirect to
 * the forge's authorize page, for tests that take the rest of the sign-in step by step.
 */
export async function approveConsent(browser: ForgeBrowser, serverUrl: string, params: Record<string, string | undefined>): Promise<URL> {
  const page = await browser.request(authorizeUrl(serverUrl, params));
  const approved = await browser.request(`${serverUrl}/authorize`, { form: { ...consentFields(await page.text()), decision: 'approve' } });
  if (approved.status !== 302) throw new Error(`consent answered ${approved.status}: ${(await approved.text()).slice(0, 300)}`);
  return new URL(approved.headers.get('location') ?? '');
}

/** Registers a client for CLIENT_CALLBACK and returns its id. */
export async function registerClient(base: string, redirectUris: string[] = [CLIENT_CALLBACK], name = 'Test client'): Promise<string> {
  const answer = await register(base, {
    redirect_uris: redirectUris,
    client_name: name,
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
  });
  if (answer.status !== 201 || typeof answer.body.client_id !== 'string')
    throw new Error(`register failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.client_id;
}

/**
 * A complete flow without a browser engine: register, authorize (consent approved), forge sign-in, callback,
 * token. Returns the token response body and the walk.
 */
export async function completeFlow(
  stack: Pick<Stack, 'serverUrl' | 'url' | 'forge'>,
  options: { browser?: ForgeBrowser; state?: string; clientId?: string } = {},
): Promise<{ tokens: Record<string, unknown>; walk: Walk; clientId: string; verifier: string }> {
  const base = stack.serverUrl;
  const clientId = options.clientId ?? (await registerClient(base));
  const { verifier, challenge } = pkce();
  const state = options.state ?? randomBytes(8).toString('hex');
  const walk = await walkSignIn(
    authorizeUrl(base, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: challenge, state, scope: 'api read_user' }),
    stack.forge.user,
    {
      ...(options.browser ? { browser: options.browser } : {}),
    },
  );
  const code = walk.clientRedirect.searchParams.get('code');
  if (!code) throw new Error(`no code at the client: ${walk.clientRedirect.href}`);
  const answer = await token(base, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    client_id: clientId,
    redirect_uri: CLIENT_CALLBACK,
  });
  if (answer.status !== 200) throw new Error(`token failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return { tokens: answer.body, walk, clientId, verifier };
}

/** Posts one JSON-RPC message to `/mcp` (for tests that look at HTTP, not at the SDK). */
export async function postMcp(base: string, bearer: string | undefined, message: unknown): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
    },
    body: JSON.stringify(message),
  });
}

/**
 * A raw 2026-07-28 `tools/call` (the per-request `_meta` envelope, the `Mcp-Method`/`Mcp-Name` headers), declaring
 * form elicitation unless `elicitation` is false; answers the JSON-RPC result (empty when there is none).
 */
export async function postModernToolCall(
  base: string,
  bearer: string,
  name: string,
  args: Record<string, unknown>,
  options: { extra?: Record<string, unknown>; elicitation?: boolean; clientName?: string } = {},
): Promise<Record<string, unknown>> {
  const response = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${bearer}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        ...options.extra,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': options.elicitation === false ? {} : { elicitation: { form: {} } },
          'io.modelcontextprotocol/clientInfo': { name: options.clientName ?? 'platform-tests', version: '1' },
        },
      },
    }),
  });
  return ((await response.json()) as { result?: Record<string, unknown> }).result ?? {};
}

/**
 * Posts one JSON-RPC message to `path` as a 2025-11-25 client would, with `token` as the bearer. `body` is the parsed
 * JSON answer, or for an SSE answer (a tool call that asked for progress) the message with an id.
 */
export async function postRpc(
  base: string,
  token: string,
  message: unknown,
  headers: Record<string, string> = {},
  path = '/mcp',
): Promise<{ status: number; type: string | null; challenge: string | null; text: string; body: unknown }> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      authorization: `Bearer ${token}`,
      ...headers,
    },
    body: JSON.stringify(message),
  });
  const type = response.headers.get('content-type');
  const text = await response.text();
  const body = type?.startsWith('text/event-stream')
    ? (text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)) as { id?: unknown })
        .find((m) => m.id !== undefined) as unknown)
    : type?.includes('json')
      ? (JSON.parse(text) as unknown)
      : undefined;
  return { status: response.status, type, challenge: response.headers.get('www-authenticate'), text, body };
}

/** The JSON-RPC `initialize` request. */
export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
};

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Whether Redis answers; in CI a missing Redis fails the run instead of skipping. */
export async function redisAvailable(url = REDIS_URL): Promise<boolean> {
  const { hostname, port } = new URL(url);
  const up = await new Promise<boolean>((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
  if (!up && process.env.CI === 'true') throw new Error(`Redis is required in CI but not reachable at ${url}`);
  if (!up) console.warn(`\n*** SKIPPING Redis replay-cache tests: no Redis at ${url} (set TEST_REDIS_URL) ***\n`);
  return up;
}

/** Calls one tool through the official SDK client with a bearer token; returns the result and closes. */
export async function callTool(serverUrl: string, bearer: string, name: string, args: Record<string, unknown> = {}) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${serverUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${bearer}` } },
  });
  await client.connect(transport);
  try {
    return await client.callTool({ name, arguments: args });
  } finally {
    await client.close();
  }
}

/** The v1 and v2 SDK clients, each connected to `serverUrl`'s `/mcp` with a bearer token; the caller closes both. */
export async function connectSdkClients(serverUrl: string, bearer: string) {
  const [{ Client }, { StreamableHTTPClientTransport }, v2] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/client'),
  ]);
  const url = new URL(`${serverUrl}/mcp`);
  const requestInit = { headers: { authorization: `Bearer ${bearer}` } };
  const v1Client = new Client({ name: 'mcp-test-v1', version: '1.0.0' });
  await v1Client.connect(new StreamableHTTPClientTransport(url, { requestInit }));
  const v2Client = new v2.Client({ name: 'mcp-test-v2', version: '1.0.0' });
  await v2Client.connect(new v2.StreamableHTTPClientTransport(url, { requestInit }));
  return [v1Client, v2Client] as const;
}

/**
 * What a tool result says: its `structuredContent` (the contract's value, or `{error}` on failure) when it has
 * one, else the text of its first content item, parsed as JSON when it is.
 */
export function toolJson(result: unknown): unknown {
  const structured = (result as { structuredContent?: unknown }).structuredContent;
  if (structured !== undefined) return structured;
  const first = ((result as { content?: unknown }).content as { type: string; text?: string }[] | undefined)?.[0];
  const text = first?.text ?? '';
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A round-robin reverse proxy: each request goes to the next target, recorded with its path. */
export interface RoundRobinProxy {
  url: string;
  /** Which target served which request, in order. */
  served: { method: string; path: string; target: number }[];
  setTargets(targets: string[]): void;
  close(): Promise<void>;
}

/** The OAuth and MCP steps of a flow: the proxy never sends two of them in a row to the same replica. */
const FLOW_STEPS = new Set(['/register', '/authorize', '/callback', '/token', '/revoke', '/mcp']);

/**
 * Starts a round-robin proxy on 127.0.0.1. Each request goes to the next target in turn, skipping the target of
 * the previous request and, for flow steps (`/register`, `/authorize`, `/callback`, `/token`, `/mcp`), the target
 * of the previous step, so every step of a flow lands on a different replica than the step before it even when
 * discovery requests come in between. Favicon requests go to the first target and do not count.
 */
export async function startRoundRobinProxy(targets: string[] = []): Promise<RoundRobinProxy> {
  const { createServer: createHttpServer, request: httpRequest } = await import('node:http');
  let list = [...targets];
  let next = 0;
  let lastTarget = -1;
  let lastStepTarget = -1;
  const served: RoundRobinProxy['served'] = [];
  const pick = (isStep: boolean): number => {
    for (let offset = 0; offset < list.length; offset += 1) {
      const candidate = (next + offset) % list.length;
      if (list.length > 1 && candidate === lastTarget) continue;
      if (isStep && list.length > 2 && candidate === lastStepTarget) continue;
      next = candidate + 1;
      return candidate;
    }
    return next++ % list.length;
  };
  const server = createHttpServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const counted = path !== '/favicon.ico';
    const isStep = FLOW_STEPS.has(path);
    const index = counted ? pick(isStep) : 0;
    if (counted) {
      lastTarget = index;
      if (isStep) lastStepTarget = index;
      served.push({ method: req.method ?? 'GET', path, target: index });
    }
    const target = new URL(list[index] ?? '');
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    setTargets(targetsNow) {
      list = [...targetsNow];
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
