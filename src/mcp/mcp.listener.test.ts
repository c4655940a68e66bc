import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../core/clock.ts';
import { parseCoreConfig } from '../core/config.core.ts';
import { parseMcpConfig } from './mcp.config.ts';
import { startMcpServices } from './mcp.listener.ts';
import { callTool, captureLogger, completeFlow, toolJson } from './mcp.testkit.ts';

function config(env: Record<string, string>) {
  return { core: parseCoreConfig({ MCP_PORT: '0', DEV_FORGE_PORT: '0', ...env }), mcp: parseMcpConfig(env) };
}

describe('MCP listener under serve', () => {
  it('[MODE-PROXY] [FLOW-8-MCP] without FORGE_URL runs the dev forge, seeded for {MCP_SERVER_URL}/callback, and a sign-in works end to end', async () => {
    const logs = captureLogger();
    const listeners = await startMcpServices(
      { config: config({}), log: logs.logger, clock: systemClock, fetch, localSecret: randomBytes(32) },
      { mcp: true, devforge: true },
    );
    try {
      expect(listeners.map((l) => l.name)).toEqual(['devforge', 'mcp']);
      const [forgeListener, mcpListener] = listeners as [(typeof listeners)[number], (typeof listeners)[number]];
      const details = forgeListener.details?.join('\n') ?? '';
      const credentials = /sign in as:\s+(\S+) \/ (\S+)/.exec(details);
      const appId = /application id:\s+([0-9a-f]{64}) \(redirect URI (\S+)\)/.exec(details);
      expect(credentials).not.toBeNull();
      expect(appId?.[2]).toBe(`${mcpListener.url}/callback`);
      expect(mcpListener.details?.join()).toContain('callback proxy');
      const user = { username: credentials?.[1] ?? '', password: credentials?.[2] ?? '' };
      const stack = {
        serverUrl: mcpListener.url,
        url: mcpListener.url,
        forge: { user } as Parameters<typeof completeFlow>[0]['forge'],
      };
      const { tokens } = await completeFlow(stack);
      expect(toolJson(await callTool(mcpListener.url, String(tokens.access_token), 'get_current_user'))).toMatchObject({ username: 'dev' });
      expect(logs.text()).not.toContain(user.password);
    } finally {
      for (const listener of listeners.reverse()) await listener.close();
    }
  });

  it('[CONFIG-CROSSCHECK] the MCP server alone without FORGE_URL is a one-line start error; notices are logged', async () => {
    const deps = { config: config({}), log: captureLogger().logger, clock: systemClock, fetch, localSecret: randomBytes(32) };
    await expect(startMcpServices(deps, { mcp: true, devforge: false })).rejects.toThrow(
      'the MCP server needs a forge: set FORGE_URL, or run the dev forge too (--only mcp,devforge)',
    );
    const logs = captureLogger();
    const withNotice = {
      ...deps,
      log: logs.logger,
      config: config({
        FORGE_URL: 'http://127.0.0.1:9',
        FORGE_MCP_OAUTH: 'true',
        MCP_SERVER_URL: 'http://127.0.0.1:9',
        FORGE_OAUTH_APP_ID: 'x',
        FORGE_OAUTH_REDIRECT_URI: 'http://127.0.0.1:7/cb',
      }),
    };
    const started = await startMcpServices(withNotice, { mcp: true, devforge: true });
    try {
      expect(started.map((l) => l.name)).toEqual(['mcp']);
      expect(logs.text()).toContain('FORGE_OAUTH_REDIRECT_URI is read only by the local OAuth flow');
    } finally {
      for (const listener of started) await listener.close();
    }
  });
});
