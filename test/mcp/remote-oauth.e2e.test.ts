/**
 * End to end with the official MCP SDK clients (their OAuth client providers and Streamable HTTP transports) and
 * headless Chromium: passthrough, callback proxy, and stateless callback proxy across three server processes behind
 * a round-robin proxy. Each ends with a tool call that reaches the dev forge with the user's token. Three clients
 * sign in against the same `/mcp`: the v1 SDK client (2025 `initialize`), the v2 client in its default 2025 era,
 * and the v2 client pinned to 2026-07-28 (`server/discover`, the per-request envelope, no `initialize`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
  UnauthorizedError as V2UnauthorizedError,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  REDIS_URL,
  redisAvailable,
  startRoundRobinProxy,
  startStack,
  startTestForge,
  TEST_STATELESS_SECRET,
  toolJson,
  type TestForge,
} from '../../src/mcp/mcp.testkit.ts';
import { freePort } from '../../src/core/http/free-port.ts';
import { repoRoot } from '../support/shared.ts';
import { launchChromium, MemoryOAuthProvider, signInWithChromium, startCallbackListener } from './sdk-client.ts';

const browser: Browser | undefined = await launchChromium();

/** Which SDK client signs in, and in which protocol era. */
type ClientKind = 'v1' | 'v2-legacy' | 'v2-modern';
const CLIENT_KINDS: readonly ClientKind[] = ['v1', 'v2-legacy', 'v2-modern'];

/** The part of either SDK client the tests use. */
interface ConnectedClient {
  callTool(name: string, args?: Record<string, unknown>): Promise<unknown>;
  /** The names `tools/list` answers. */
  toolNames(): Promise<string[]>;
  /** `legacy` (2025 `initialize`) or `modern` (2026-07-28). */
  era: string | undefined;
  /** The protocol version the client and server settled on. */
  protocolVersion: string | undefined;
  close(): Promise<void>;
}

/**
 * One client of `kind` on a fresh transport to `{serverUrl}{path}` (default `/mcp`); `connect` rejects with the SDK's
 * UnauthorizedError without a token.
 */
function clientOf(kind: ClientKind, serverUrl: string, provider: MemoryOAuthProvider, path = '/mcp') {
  const url = new URL(`${serverUrl}${path}`);
  if (kind === 'v1') {
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    return {
      connect: async (): Promise<ConnectedClient> => {
        await client.connect(transport);
        return {
          callTool: (name, args = {}) => client.callTool({ name, arguments: args }),
          toolNames: async () => (await client.listTools()).tools.map((t) => t.name),
          era: 'legacy',
          protocolVersion: transport.protocolVersion,
          close: () => client.close(),
        };
      },
      finishAuth: (params: URLSearchParams) => transport.finishAuth(params.get('code') ?? ''),
      Unauthorized: UnauthorizedError,
    };
  }
  const transport = new V2Transport(url, { authProvider: provider });
  const client = new V2Client(
    { name: 'e2e', version: '1.0.0' },
    kind === 'v2-modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  return {
    connect: async (): Promise<ConnectedClient> => {
      await client.connect(transport);
      return {
        callTool: (name, args = {}) => client.callTool({ name, arguments: args }),
        toolNames: async () => (await client.listTools()).tools.map((t) => t.name),
        era: client.getProtocolEra(),
        protocolVersion: client.getNegotiatedProtocolVersion(),
        close: () => client.close(),
      };
    },
    finishAuth: (params: URLSearchParams) => transport.finishAuth(params),
    Unauthorized: V2UnauthorizedError,
  };
}

/** Runs a client's whole OAuth dance against `serverUrl` and returns a connected client plus what it saw. */
async function connectWithOAuth(serverUrl: string, forge: TestForge, kind: ClientKind = 'v1', path = '/mcp') {
  const listener = await startCallbackListener();
  const provider = new MemoryOAuthProvider(listener.url);
  try {
    const first = clientOf(kind, serverUrl, provider, path);
    await expect(first.connect()).rejects.toBeInstanceOf(first.Unauthorized);
    const authorizationUrl = provider.authorizationUrl;
    if (!authorizationUrl || !browser) throw new Error('no authorization URL');
    const signIn = await signInWithChromium(browser, authorizationUrl, forge.user);
    const hit = await listener.next();
    expect(hit.error).toBeNull();
    expect(hit.state).toBe(provider.lastState);
    const params = new URLSearchParams({ code: hit.code ?? '', state: hit.state ?? '', ...(hit.iss ? { iss: hit.iss } : {}) });
    await first.finishAuth(params);
    const client = await clientOf(kind, serverUrl, provider, path).connect();
    expect(client.era).toBe(kind === 'v2-modern' ? 'modern' : 'legacy');
    if (kind === 'v2-modern') expect(client.protocolVersion).toBe('2026-07-28');
    return { client, provider, hit, authorizationUrl, signIn };
  } finally {
    await listener.close();
  }
}

afterAll(async () => {
  await browser?.close();
});

describe.skipIf(!browser)('remote OAuth end to end (SDK client + Chromium)', () => {
  it.each(CLIENT_KINDS)(
    '[E2E-PASSTHROUGH] [E2E-SDK-BOTH] passthrough with the %s client: the forge redirects straight to the client; a tool call reaches the forge',
    async (kind) => {
      // The client's loopback callback must be registered at the forge in passthrough mode; the listener port is
      // not known in advance, and the forge lets only the port of loopback IP literals vary.
      const stack = await startStack({ mode: 'passthrough', forgeRedirectUris: ['http://127.0.0.1:1/callback'] });
      try {
        const { client, hit, authorizationUrl, signIn } = await connectWithOAuth(stack.serverUrl, stack.forge, kind);
        expect(authorizationUrl.href.startsWith(`${stack.serverUrl}/authorize?`)).toBe(true);
        expect(signIn.consentText).toBeUndefined();
        expect(hit.iss).toBeNull();
        const usersBefore = stack.forge.forge.counters.user;
        const me = await client.callTool('get_current_user');
        expect(toolJson(me)).toMatchObject({ username: stack.forge.user.username });
        expect(stack.forge.forge.counters.user).toBe(usersBefore + 1);
        await client.close();
      } finally {
        await stack.close();
      }
    },
  );

  it.each(CLIENT_KINDS)(
    '[E2E-PROXY] [E2E-SDK-BOTH] callback proxy with the %s client: consent page, forge sign-in, proxy code; a tool call reaches the forge',
    async (kind) => {
      const stack = await startStack({ mode: 'callback_proxy' });
      try {
        const { client, hit, signIn } = await connectWithOAuth(stack.serverUrl, stack.forge, kind);
        expect(signIn.consentText).toContain('E2E MCP Client');
        expect(signIn.consentText).toContain('this device');
        expect(hit.iss).toBe(stack.serverUrl);
        const usersBefore = stack.forge.forge.counters.user;
        const me = await client.callTool('get_current_user');
        expect(toolJson(me)).toMatchObject({ username: stack.forge.user.username });
        expect(stack.forge.forge.counters.user).toBe(usersBefore + 1);
        const issue = await client.callTool('create_issue', {
          project_id: `${stack.forge.user.username}/hello-forge`,
          title: `From the ${kind} SDK client`,
        });
        expect(toolJson(issue)).toMatchObject({ title: `From the ${kind} SDK client` });
        await client.close();
      } finally {
        await stack.close();
      }
    },
  );
});

describe.skipIf(!browser)('signing in through a narrowed URL', () => {
  it.each(CLIENT_KINDS)(
    '[SURFACE-URL] [E2E-SDK-BOTH] the %s client signs in through /mcp/x/issues/readonly and sees only that surface',
    async (kind) => {
      const stack = await startStack({ mode: 'callback_proxy' });
      try {
        // The narrowed URL's own protected-resource document (RFC 9728 §3.1 path insertion) names it exactly.
        const own = await fetch(`${stack.serverUrl}/.well-known/oauth-protected-resource/mcp/x/issues/readonly`);
        expect(await own.json()).toMatchObject({
          resource: `${stack.serverUrl}/mcp/x/issues/readonly`,
          authorization_servers: [stack.serverUrl],
        });
        const { client, authorizationUrl } = await connectWithOAuth(stack.serverUrl, stack.forge, kind, '/mcp/x/issues/readonly');
        // The SDK followed the challenge to /mcp's document and asked for that resource, which the token serves too.
        expect(authorizationUrl.searchParams.get('resource')).toBe(`${stack.serverUrl}/mcp`);
        expect(await client.toolNames()).toEqual(['list_issues', 'get_issue']);
        const listed = await client.callTool('list_issues', { project_id: `${stack.forge.user.username}/hello-forge` });
        expect((toolJson(listed) as { items: unknown[] }).items.length).toBeGreaterThan(0);
        const refused = await client.callTool('create_issue', { project_id: `${stack.forge.user.username}/hello-forge`, title: 'no' }).then(
          (result) => JSON.stringify(result),
          (error: Error) => error.message,
        );
        expect(refused).toMatch(/create_issue|not found/i);
        await client.close();
      } finally {
        await stack.close();
      }
    },
  );
});

/** Starts `platform serve --only mcp` as a child process and waits until it answers. */
async function startReplica(env: Record<string, string>, port: number): Promise<ChildProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mcp-replica-'));
  const child = spawn(process.execPath, [join(repoRoot, 'bin', 'platform.js'), 'serve', '--only', 'mcp'], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PLATFORM_DATA_DIR: dataDir,
      DATABASE_URL: `sqlite:${join(dataDir, 'platform.db')}`,
      PLATFORM_SECRET_KEY: Buffer.alloc(32, 5).toString('base64'),
      LOG_LEVEL: 'warn',
      MCP_PORT: String(port),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 45_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`replica exited: ${output}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return child;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGTERM');
  throw new Error(`replica did not start: ${output}`);
}

describe.skipIf(!browser)('stateless callback proxy across three processes', () => {
  const children: ChildProcess[] = [];
  let proxy: Awaited<ReturnType<typeof startRoundRobinProxy>>;
  let forge: TestForge;
  let redis = false;

  beforeAll(async () => {
    redis = await redisAvailable();
    proxy = await startRoundRobinProxy();
    forge = await startTestForge([`${proxy.url}/callback`]);
    const ports = [await freePort(), await freePort(), await freePort()];
    const env = {
      FORGE_URL: forge.forge.url,
      FORGE_MCP_OAUTH: 'true',
      FORGE_OAUTH_CALLBACK_PROXY: 'true',
      MCP_SERVER_URL: proxy.url,
      FORGE_OAUTH_APP_ID: forge.app.uid,
      OAUTH_STATELESS_MODE: 'true',
      OAUTH_STATELESS_SECRET: TEST_STATELESS_SECRET.toString('base64'),
      ...(redis ? { OAUTH_REPLAY_CACHE_URL: REDIS_URL } : {}),
    };
    children.push(...(await Promise.all(ports.map((port) => startReplica(env, port)))));
    proxy.setTargets(ports.map((port) => `http://127.0.0.1:${port}`));
  }, 120_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(
      children.map((child) => (child.exitCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', resolve)))),
    );
    await proxy?.close();
    await forge?.forge.close();
  });

  it.each(['v1', 'v2-modern'] as const)(
    '[E2E-STATELESS-3] [STATELESS-REPLICAS] [E2E-SDK-BOTH] with the %s client every step lands on another replica and the flow completes',
    async (kind) => {
      const start = proxy.served.length;
      const { client, hit, signIn } = await connectWithOAuth(proxy.url, forge, kind);
      expect(signIn.consentText).toContain('E2E MCP Client');
      expect(hit.iss).toBe(proxy.url);
      const usersBefore = forge.forge.counters.user;
      const me = await client.callTool('get_current_user');
      expect(toolJson(me)).toMatchObject({ username: forge.user.username });
      expect(forge.forge.counters.user).toBe(usersBefore + 1);
      await client.close();
      const steps = proxy.served.slice(start);
      const flowSteps = steps.filter((s) => ['/register', '/authorize', '/callback', '/token', '/mcp'].includes(s.path));
      for (let i = 1; i < flowSteps.length; i += 1)
        expect(flowSteps[i]?.target, `${flowSteps[i]?.method} ${flowSteps[i]?.path}`).not.toBe(flowSteps[i - 1]?.target);
      const keySteps = steps.filter((s) => ['/register', '/authorize', '/callback', '/token'].includes(s.path));
      expect(keySteps.map((s) => `${s.method} ${s.path}`)).toEqual([
        'POST /register',
        'GET /authorize',
        'POST /authorize',
        'GET /callback',
        'POST /token',
      ]);
      for (let i = 1; i < steps.length; i += 1)
        expect(steps[i]?.target, `${steps[i]?.method} ${steps[i]?.path}`).not.toBe(steps[i - 1]?.target);
      for (let i = 1; i < keySteps.length; i += 1) expect(keySteps[i]?.target).not.toBe(keySteps[i - 1]?.target);
      expect(new Set(keySteps.map((s) => s.target)).size).toBe(3);
      expect(steps.some((s) => s.path === '/mcp')).toBe(true);
    },
  );
});
