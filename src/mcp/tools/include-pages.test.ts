/**
 * The included lists of get_issue and get_merge_request page like list tools (issue 17 item 3): each carries a
 * next_cursor, and include_cursor with that include alone reads the next page, through the v2 SDK client (which
 * validates every structuredContent against the tool's outputSchema once it has listed the tools).
 */
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevForge, type StartedDevForge } from '../../devforge/index.ts';
import { captureLogger, toolJson } from '../mcp.testkit.ts';
import { createForgeMcpServer } from './forge.tools.ts';

type Json = Record<string, unknown>;
type Page = { items: Json[]; next_cursor: string | null; has_more: boolean };

describe('[TOOL-INCLUDE-PAGES] paging through the includes of get tools', () => {
  let forge: StartedDevForge;
  let pat = '';
  const ada = { id: 1, username: 'ada', name: 'Ada', email: 'ada@example.test', password: 'pw-ada-123456' };
  const project = 'demo/webshop';

  beforeAll(async () => {
    forge = await startDevForge({ users: [ada], applications: [] });
    pat = forge.createPersonalAccessToken('ada', ['api']);
  });
  afterAll(async () => {
    await forge.close();
  });

  async function connect() {
    const server = createForgeMcpServer({ forgeUrl: forge.url, fetch, log: captureLogger().logger, getToken: async () => pat });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 't', version: '1' });
    await client.connect(clientSide);
    await client.listTools();
    const call = async (name: string, args: Json) => client.callTool({ name, arguments: args });
    const ok = async (name: string, args: Json) => {
      const result = await call(name, args);
      expect(result.isError, `${name}: ${JSON.stringify(result.structuredContent)}`).toBeFalsy();
      return toolJson(result) as Json;
    };
    return { call, ok, close: () => client.close() };
  }

  /** Every page of one include, following next_cursor as include_cursor; the pages in order. */
  async function allPages(ok: (name: string, args: Json) => Promise<Json>, name: string, args: Json, key: string) {
    const pages: Page[] = [];
    let cursor: string | null | undefined;
    do {
      const answer = await ok(name, { ...args, include: [key], ...(cursor ? { include_cursor: cursor } : {}) });
      const page = answer[key] as Page;
      pages.push(page);
      expect(page.has_more).toBe(page.next_cursor !== null);
      cursor = page.next_cursor;
    } while (typeof cursor === 'string' && pages.length < 10);
    return pages;
  }

  it('an issue with 45 notes: three pages of notes, each note once, the end declared', async () => {
    const { ok, close } = await connect();
    try {
      const issue = (await ok('save_issue', { project_id: project, title: 'Many notes' })) as { iid: number };
      const bodies = Array.from({ length: 45 }, (_, i) => `note ${i + 1}`);
      for (const body of bodies) await ok('save_issue_note', { project_id: project, issue_iid: issue.iid, body });
      const pages = await allPages(ok, 'get_issue', { project_id: project, issue_iid: issue.iid }, 'notes');
      expect(pages.map((p) => p.items.length)).toEqual([20, 20, 5]);
      expect(pages.at(-1)).toMatchObject({ has_more: false, next_cursor: null });
      expect(pages.flatMap((p) => p.items.map((n) => n.body))).toEqual(bodies);
    } finally {
      await close();
    }
  });

  it('a merge request with more discussions than a page: every thread once, the end declared', async () => {
    const { ok, close } = await connect();
    try {
      const path = `${forge.url}/api/v4/projects/${encodeURIComponent(project)}/merge_requests/1`;
      const headers = { 'private-token': pat, 'content-type': 'application/json' };
      for (let i = 0; i < 25; i += 1) {
        const posted = await fetch(`${path}/discussions`, { method: 'POST', headers, body: JSON.stringify({ body: `thread ${i}` }) });
        expect(posted.status).toBe(201);
      }
      const forgeIds = ((await (await fetch(`${path}/discussions?per_page=100`, { headers })).json()) as { id: string }[]).map((d) => d.id);
      expect(forgeIds.length).toBeGreaterThan(20);
      const pages = await allPages(ok, 'get_merge_request', { project_id: project, merge_request_iid: 1 }, 'discussions');
      expect(pages.length).toBe(Math.ceil(forgeIds.length / 20));
      expect(pages.at(-1)).toMatchObject({ has_more: false, next_cursor: null });
      expect(pages.flatMap((p) => p.items.map((d) => d.id))).toEqual(forgeIds);
    } finally {
      await close();
    }
  });

  it('include_cursor needs exactly one paged include, and one of our cursors', async () => {
    const { call, close } = await connect();
    try {
      const first = toolJson(await call('get_issue', { project_id: project, issue_iid: 1, include: ['notes'] })) as { notes: Page };
      expect(first.notes).toHaveProperty('next_cursor');
      const cursor = 'eyJwIjoyfQ'; // {"p":2}
      for (const include of [['notes', 'discussions'], ['links'], undefined]) {
        const refused = await call('get_issue', {
          project_id: project,
          issue_iid: 1,
          include_cursor: cursor,
          ...(include ? { include } : {}),
        });
        expect(refused.isError).toBe(true);
        expect(JSON.stringify(refused.structuredContent)).toContain('include_cursor needs include');
      }
      const bad = await call('get_merge_request', { project_id: project, merge_request_iid: 1, include: ['commits'], include_cursor: 'x' });
      expect(bad.isError).toBe(true);
    } finally {
      await close();
    }
  });
});
