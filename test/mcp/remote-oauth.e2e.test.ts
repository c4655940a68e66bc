/**
 * End to end with the official MCP SDK client (its OAuthClientProvider and StreamableHTTPClientTransport) and
 * headless Chromium: passthrough, callback proxy, and stateless callback proxy across three server processes behind
 * a round-robin proxy. Each ends with a tool call that reaches the dev forge with the user's token.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  REDIS_URL,
  redisAvailable,
  startRoundRobinProxy,
  startStack,
  startTestForge,
  TEST_STATELESS_SECRET,
  toolJson,
  type TestForge,
} from '../../src/mcp/mcp.testkit.ts';
import { repoRoot } from '../support/shared.ts';
import { launchChromium, MemoryOAuthProvider, signInWithChromium, startCallbackListener } from './sdk-client.ts';

const browser: Browser | undefined = await launchChromium();

/** Runs the SDK client's whole OAuth dance against `serverUrl` and returns a connected client plus what it saw. */
async function connectWithOAuth(serverUrl: string, forge: TestForge) {
  const listener = await startCallbackListener();
  const provider = new MemoryOAuthProvider(listener.url);
  try {
    const first = new Client({ name: 'e2e', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${serverUrl}/mcp`), { authProvider: provider });
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const authorizationUrl = provider.authorizationUrl;
    if (!authorizationUrl || !browser) throw new Error('no authorization URL');
    const signIn = await signInWithChromium(browser, authorizationUrl, forge.user);
    const hit = await listener.next();
    expect(hit.error).toBeNull();
    expect(hit.state).toBe(provider.lastState);
    await transport.finishAuth(hit.code ?? '');
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${serverUrl}/mcp`), { authProvider: provider }));
    return { client, provider, hit, authorizationUrl, signIn };
  } finally {
    await listener.close();
  }
}

afterAll(async () => {
  await browser?.close();
});

describe.skipIf(!browser)('remote OAuth end to end (SDK client + Chromium)', () => {
  it('[E2E-PASSTHROUGH] passthrough: the forge redirects straight to the client; a tool call reaches the forge', async () => {
    // The client's loopback callback must be registered at the forge in passthrough mode; the listener port is
    // not known in advance, and the forge lets only the port of loopback IP literals vary.
    const stack = await startStack({ mode: 'passthrough', forgeRedirectUris: ['http://127.0.0.1:1/callback'] });
    try {
      const { client, hit, authorizationUrl, signIn } = await connectWithOAuth(stack.serverUrl, stack.forge);
      expect(authorizationUrl.href.startsWith(`${stack.serverUrl}/authorize?`)).toBe(true);
      expect(signIn.consentText).toBeUndefined();
      expect(hit.iss).toBeNull();
      const usersBefore = stack.forge.forge.counters.user;
      const me = await client.callTool({ name: 'get_current_user', arguments: {} });
      expect(toolJson(me)).toMatchObject({ username: stack.forge.user.username });
      expect(stack.forge.forge.counters.user).toBe(usersBefore + 1);
      await client.close();
    } finally {
      await stack.close();
    }
  });

  it('[E2E-PROXY] callback proxy: consent page, forge sign-in, proxy code; a tool call reaches the forge', async () => {
    const stack = await startStack({ mode: 'callback_proxy' });
    try {
      const { client, hit, signIn } = await connectWithOAuth(stack.serverUrl, stack.forge);
      expect(signIn.consentText).toContain('E2E MCP Client');
      expect(signIn.consentText).toContain('this device');
      expect(hit.iss).toBe(stack.serverUrl);
      const usersBefore = stack.forge.forge.counters.user;
      const me = await client.callTool({ name: 'get_current_user', arguments: {} });
      expect(toolJson(me)).toMatchObject({ username: stack.forge.user.username });
      expect(stack.forge.forge.counters.user).toBe(usersBefore + 1);
      const issue = await client.callTool({
        name: 'create_issue',
        arguments: { project_id: `${stack.forge.user.username}/hello-forge`, title: 'From the SDK client' },
      });
      expect(toolJson(issue)).toMatchObject({ title: 'From the SDK client' });
      await client.close();
    } finally {
      await stack.close();
    }
  });
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

  it('[E2E-STATELESS-3] [STATELESS-REPLICAS] every step lands on another replica and the flow completes', async () => {
    const start = proxy.served.length;
    const { client, hit, signIn } = await connectWithOAuth(proxy.url, forge);
    expect(signIn.consentText).toContain('E2E MCP Client');
    expect(hit.iss).toBe(proxy.url);
    const usersBefore = forge.forge.counters.user;
    const me = await client.callTool({ name: 'get_current_user', arguments: {} });
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
  });
});
