import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevForge, type StartedDevForge } from '../../devforge/index.ts';
import { createForgeMcpServer } from './forge.tools.ts';
import { captureLogger, toolJson } from '../mcp.testkit.ts';

describe('forge MCP server tools (stdio-style token source)', () => {
  let forge: StartedDevForge;
  let pat = '';
  const user = { id: 1, username: 'tess', name: 'Tess Tools', email: 'tess@example.test', password: 'pw-tools-123456' };
  beforeAll(async () => {
    forge = await startDevForge({ users: [user], applications: [] });
    pat = forge.createPersonalAccessToken('tess', ['api']);
  });
  afterAll(async () => {
    await forge.close();
  });

  async function connect(getToken: () => Promise<string>) {
    const logs = captureLogger();
    const server = createForgeMcpServer({ forgeUrl: forge.url, fetch, log: logs.logger, getToken });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 't', version: '1' });
    await client.connect(clientSide);
    return { client, logs, close: () => client.close() };
  }

  it('[MCP-TRANSPORT] lists the tools with zod-derived input schemas and calls them with the provided token', async () => {
    const { client, close } = await connect(async () => pat);
    try {
      const tools = (await client.listTools()).tools;
      expect(tools.map((t) => t.name).sort()).toEqual([
        'create_issue',
        'get_current_user',
        'get_project',
        'list_issues',
        'list_merge_requests',
        'list_projects',
      ]);
      const createIssue = tools.find((t) => t.name === 'create_issue');
      expect(createIssue?.inputSchema.required).toEqual(expect.arrayContaining(['project_id', 'title']));
      expect(toolJson(await client.callTool({ name: 'get_current_user', arguments: {} }))).toMatchObject({ username: 'tess' });
      // Schema violations are refused before any forge call.
      const before = forge.counters.api;
      const invalid = await client.callTool({ name: 'create_issue', arguments: { project_id: 'tess/hello-forge', title: '' } });
      expect(invalid.isError).toBe(true);
      expect(forge.counters.api).toBe(before);
    } finally {
      await close();
    }
  });

  it('[ERRORS-GENERIC] forge failures become tool errors with generic text; details only in the log', async () => {
    const { client, logs, close } = await connect(async () => pat);
    try {
      const missing = await client.callTool({ name: 'get_project', arguments: { project_id: 'nobody/nothing' } });
      expect(missing.isError).toBe(true);
      expect(toolJson(missing)).toBe('Not found on the forge, or not visible to the signed-in user.');
      expect(logs.text()).toMatch(/"forge_status":404/);
    } finally {
      await close();
    }
    const bad = await connect(async () => 'glpat-not-a-real-token');
    try {
      const refused = await bad.client.callTool({ name: 'get_current_user', arguments: {} });
      expect(refused.isError).toBe(true);
      expect(toolJson(refused)).toBe('The forge did not accept the credentials. Sign in again.');
      expect(bad.logs.text()).not.toContain('glpat-not-a-real-token');
    } finally {
      await bad.close();
    }
    const none = await connect(async () => {
      throw new Error('no token file');
    });
    try {
      const result = await none.client.callTool({ name: 'get_current_user', arguments: {} });
      expect(result.isError).toBe(true);
      expect(toolJson(result)).toBe('Not signed in to the forge.');
    } finally {
      await none.close();
    }
  });
});
