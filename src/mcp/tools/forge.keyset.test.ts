/**
 * Keyset pagination in the forge client (issue 17 item 5): `list_projects` asks the forge for `pagination=keyset`
 * (`/projects`, `order_by=id`), follows only the `Link` rel=next position, and pages through every project without
 * loss, repetition or a silent end. Against the dev forge, whose `/projects` speaks keyset as GitLab does.
 */
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevForge, type StartedDevForge } from '../../devforge/index.ts';
import { captureLogger, toolJson } from '../mcp.testkit.ts';
import { encodeCursor } from './forge.paging.ts';
import { createForgeMcpServer } from './forge.tools.ts';

describe('[TOOL-PAGING] keyset pages of list_projects', () => {
  let forge: StartedDevForge;
  let pat = '';
  let client: Client;
  const seen: URL[] = [];

  beforeAll(async () => {
    forge = await startDevForge({
      users: [{ id: 1, username: 'kim', name: 'Kim Keyset', email: 'kim@example.test', password: 'pw-keyset-1' }],
      applications: [],
    });
    pat = forge.createPersonalAccessToken('kim', ['api']);
    // Every request the tools send, to see which paging they asked for.
    const recording: typeof fetch = async (input, init) => {
      seen.push(new URL(input instanceof Request ? input.url : String(input)));
      return fetch(input, init);
    };
    const server = createForgeMcpServer({ forgeUrl: forge.url, fetch: recording, log: captureLogger().logger, getToken: async () => pat });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    client = new Client({ name: 't', version: '1' });
    await client.connect(clientSide);
  });
  afterAll(async () => {
    await client.close();
    await forge.close();
  });

  type Page = { items: { id: number }[]; next_cursor: string | null; has_more: boolean; total?: number };
  const listProjects = async (args: Record<string, unknown>) =>
    toolJson(await client.callTool({ name: 'list_projects', arguments: { membership: false, ...args } })) as Page;

  it('walks every visible project one per page by the Link position: nothing lost or repeated, the end declared', async () => {
    const all = (await (await fetch(`${forge.url}/api/v4/projects?per_page=100`, { headers: { 'private-token': pat } })).json()) as {
      id: number;
    }[];
    expect(all.length).toBeGreaterThan(2);
    const ids: number[] = [];
    let cursor: string | undefined;
    for (let i = 0; i <= all.length; i += 1) {
      const page = await listProjects({ per_page: 1, ...(cursor ? { cursor } : {}) });
      ids.push(...page.items.map((p) => p.id));
      expect(page.total).toBeUndefined(); // keyset answers carry no total
      if (!page.has_more) {
        expect(page.next_cursor).toBeNull();
        break;
      }
      cursor = page.next_cursor ?? undefined;
    }
    expect(ids).toEqual(all.map((p) => p.id).sort((a, b) => b - a));
    const asked = seen.filter((u) => u.pathname === '/api/v4/projects');
    expect(asked.every((u) => u.searchParams.get('pagination') === 'keyset' && u.searchParams.get('order_by') === 'id')).toBe(true);
    expect(asked.every((u) => !u.searchParams.has('page'))).toBe(true);
    expect(asked.slice(1).every((u) => u.searchParams.has('id_before'))).toBe(true);
  });

  it('refuses a made-up keyset position and a keyset cursor on an offset list, before any forge call', async () => {
    const before = seen.length;
    const forged = await client.callTool({ name: 'list_projects', arguments: { cursor: encodeCursor('order_by=name') } });
    expect(toolJson(forged)).toMatchObject({ error: { type: 'validation' } });
    const elsewhere = await client.callTool({ name: 'list_issues', arguments: { project_id: '1', cursor: encodeCursor('id_before=5') } });
    expect(toolJson(elsewhere)).toMatchObject({ error: { type: 'validation' } });
    expect(seen.length).toBe(before);
  });

  it('the dev forge refuses keyset on another order, as GitLab does', async () => {
    const response = await fetch(`${forge.url}/api/v4/projects?pagination=keyset&order_by=name`, { headers: { 'private-token': pat } });
    expect(response.status).toBe(405);
    await response.body?.cancel();
  });
});
