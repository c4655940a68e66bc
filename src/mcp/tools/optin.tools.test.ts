/**
 * The opt-in wiki, releases and admin toolsets (issue 18 items 1, 2, 4) against the dev forge, through the v2 SDK
 * client (which validates structuredContent against the listed outputSchema; each result is also checked here with
 * Ajv against the advertised schema): every tool, paging past page one, variable values hidden unless asked and
 * masked ones never, webhook tokens never returned, the wiki-page delete confirmed (token accepted, replayed or
 * with other arguments refused; elicitation accepted and declined), read-only refusing the writes, a read_api
 * token refused, and the toolsets opt-in only.
 */
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedDevForge } from '../../devforge/index.ts';
import { startTwoUserForge } from '../../devforge/devforge.testkit.ts';
import { captureLogger } from '../mcp.testkit.ts';
import { createForgeMcpServer, declaredTools, defaultTools } from './forge.tools.ts';
import { selectTools } from './tool.surface.ts';

type Json = Record<string, unknown>;
interface Page {
  items: Json[];
  next_cursor: string | null;
  has_more: boolean;
  total?: number;
}

const OPT_IN = ['wiki', 'releases', 'admin'];
const ajv = new Ajv2020({ strict: false, allErrors: true });

let forge: StartedDevForge;
let pat = '';
let readOnly = '';
let otto = '';
const project = 'rita/hello-forge';

beforeAll(async () => {
  ({ forge, pat, readOnly, otto } = await startTwoUserForge());
});
afterAll(async () => {
  await forge.close();
});

async function connect(
  options: { token?: string; readOnly?: boolean; toolsets?: string[]; elicit?: (message: string) => 'accept' | 'decline' } = {},
) {
  const tools = selectTools(declaredTools(), { toolsets: options.toolsets ?? OPT_IN, denied: [], readOnly: options.readOnly ?? false });
  const token = options.token ?? pat;
  const server = createForgeMcpServer({ forgeUrl: forge.url, fetch, log: captureLogger().logger, getToken: async () => token, tools });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const elicit = options.elicit;
  const client = new Client({ name: 'optin', version: '1' }, elicit ? { capabilities: { elicitation: { form: {} } } } : {});
  if (elicit)
    client.setRequestHandler('elicitation/create', async (request) =>
      elicit(String((request.params as { message?: unknown }).message)) === 'accept'
        ? { action: 'accept', content: { confirm: true } }
        : { action: 'decline' },
    );
  await client.connect(clientSide);
  const listed = (await client.listTools()).tools as { name: string; outputSchema?: object }[];
  const validators = new Map(listed.map((t) => [t.name, ajv.compile(t.outputSchema ?? {})]));
  const call = async (name: string, args: Json = {}) =>
    (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: unknown };
  const ok = async (name: string, args: Json = {}): Promise<Json> => {
    const result = await call(name, args);
    expect(result.isError, `${name}: ${JSON.stringify(result.structuredContent)}`).toBeFalsy();
    const validate = validators.get(name);
    expect(validate?.(result.structuredContent), `${name}: ${ajv.errorsText(validate?.errors)}`).toBe(true);
    return result.structuredContent as Json;
  };
  const errorOf = async (name: string, args: Json = {}) => {
    const result = await call(name, args);
    expect(result.isError, name).toBe(true);
    return (result.structuredContent as { error: Json }).error;
  };
  /** Every item of a list tool, page by page; the number of pages it took. */
  const all = async (name: string, args: Json) => {
    const items: Json[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = (await ok(name, { ...args, ...(cursor ? { cursor } : {}) })) as unknown as Page;
      items.push(...page.items);
      expect(page.has_more).toBe(page.next_cursor !== null);
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor !== null);
    return { items, pages };
  };
  return { names: listed.map((t) => t.name), call, ok, errorOf, all, close: () => client.close() };
}

describe('opt-in toolsets', () => {
  it('[TOOL-OPTIN] wiki, releases and admin are opt-in: not in the default list, listed when named', async () => {
    const defaults = defaultTools().map((t) => t.name);
    for (const name of ['list_wiki_pages', 'list_releases', 'list_ci_variables', 'save_webhook']) expect(defaults).not.toContain(name);
    const s = await connect();
    try {
      expect(s.names).toEqual([
        'list_releases',
        'get_release',
        'save_release',
        'list_milestones',
        'save_milestone',
        'list_tags',
        'add_tag',
        'delete_tag',
        'list_wiki_pages',
        'get_wiki_page',
        'save_wiki_page',
        'delete_wiki_page',
        'list_ci_variables',
        'list_members',
        'list_webhooks',
        'save_webhook',
      ]);
    } finally {
      await s.close();
    }
  });
});

describe('wiki toolset', () => {
  it('[TOOL-WIKI] lists pages past page one, reads one, creates and renames with save_wiki_page, finds it with search wiki_blobs', async () => {
    const s = await connect({ toolsets: ['core', 'wiki'] });
    try {
      const { items, pages } = await s.all('list_wiki_pages', { project_id: project, per_page: 2 });
      expect(pages).toBe(2);
      expect(items.map((p) => p.slug)).toEqual(['getting-started', 'home', 'ops/deploy']);
      expect(items[0]).not.toHaveProperty('content');
      const withContent = (await s.ok('list_wiki_pages', { project_id: project, with_content: true })) as unknown as Page;
      expect(withContent.items[0]?.content).toContain('npm ci');
      expect(await s.ok('get_wiki_page', { project_id: project, slug: 'ops/deploy' })).toMatchObject({
        title: 'ops/deploy',
        format: 'markdown',
        content: expect.stringContaining('DEPLOY_TARGET') as unknown,
      });
      expect(await s.errorOf('get_wiki_page', { project_id: project, slug: 'nope' })).toMatchObject({ type: 'not_found', status: 404 });

      const created = await s.ok('save_wiki_page', { project_id: project, title: 'On call', content: 'Page the owner.' });
      expect(created).toMatchObject({ created: true, slug: 'On-call', title: 'On call' });
      const renamed = await s.ok('save_wiki_page', { project_id: project, slug: 'On-call', title: 'On-call rota', format: 'asciidoc' });
      expect(renamed).toMatchObject({ created: false, slug: 'On-call-rota', format: 'asciidoc', content: 'Page the owner.' });
      expect(await s.errorOf('save_wiki_page', { project_id: project, title: 'No content' })).toMatchObject({ type: 'validation' });
      expect(await s.errorOf('save_wiki_page', { project_id: project, slug: 'On-call-rota' })).toMatchObject({ type: 'validation' });
      expect(await s.errorOf('save_wiki_page', { project_id: project, title: 'On-call rota', content: 'dup' })).toMatchObject({
        type: 'validation',
        status: 400,
      });

      const found = (await s.ok('search', { scope: 'wiki_blobs', search: 'owner', project_id: project })) as unknown as Page;
      expect(found.items.map((b) => b.path)).toEqual(['On-call-rota.asciidoc']);
    } finally {
      await s.close();
    }
  });

  it('[TOOL-CONFIRM] delete_wiki_page asks first: a token bound to the arguments, used once; elicitation accepted and declined', async () => {
    const s = await connect();
    try {
      for (const title of ['Doomed', 'Other']) await s.ok('save_wiki_page', { project_id: project, title, content: 'x\ny' });
      const asked = (await s.ok('delete_wiki_page', { project_id: project, slug: 'Doomed' })).confirmation_required as Json;
      expect(asked.summary).toContain('Doomed');
      expect(await s.ok('get_wiki_page', { project_id: project, slug: 'Doomed' })).toMatchObject({ title: 'Doomed' });
      expect(await s.errorOf('delete_wiki_page', { project_id: project, slug: 'Other', confirmation_token: asked.token })).toMatchObject({
        type: 'forbidden',
      });
      expect(await s.ok('delete_wiki_page', { project_id: project, slug: 'Doomed', confirmation_token: asked.token })).toEqual({
        deleted: true,
        slug: 'Doomed',
        title: 'Doomed',
      });
      expect(await s.errorOf('get_wiki_page', { project_id: project, slug: 'Doomed' })).toMatchObject({ type: 'not_found' });
      // Created again: the used token does not delete it a second time.
      await s.ok('save_wiki_page', { project_id: project, title: 'Doomed', content: 'x\ny' });
      expect(await s.errorOf('delete_wiki_page', { project_id: project, slug: 'Doomed', confirmation_token: asked.token })).toMatchObject({
        type: 'forbidden',
      });
    } finally {
      await s.close();
    }

    const questions: string[] = [];
    let answer: 'accept' | 'decline' = 'decline';
    const e = await connect({
      elicit: (message) => {
        questions.push(message);
        return answer;
      },
    });
    try {
      expect(await e.errorOf('delete_wiki_page', { project_id: project, slug: 'Doomed' })).toMatchObject({ type: 'forbidden' });
      expect(await e.ok('get_wiki_page', { project_id: project, slug: 'Doomed' })).toMatchObject({ title: 'Doomed' });
      answer = 'accept';
      expect(await e.ok('delete_wiki_page', { project_id: project, slug: 'Doomed' })).toMatchObject({ deleted: true });
      expect(questions).toHaveLength(2);
      expect(questions[0]).toContain('Doomed');
      expect(await e.errorOf('get_wiki_page', { project_id: project, slug: 'Doomed' })).toMatchObject({ type: 'not_found' });
    } finally {
      await e.close();
    }
  });
});

describe('releases toolset', () => {
  it('[TOOL-RELEASES] releases listed past page one, one with notes, created with its tag and updated by save_release', async () => {
    const s = await connect();
    try {
      const created = await s.ok('save_release', {
        project_id: project,
        tag_name: 'v1.1.0',
        ref: 'main',
        name: 'One point one',
        description: 'Notes',
        milestones: ['v1.1'],
      });
      expect(created).toMatchObject({ created: true, tag_name: 'v1.1.0', milestones: ['v1.1'], description: 'Notes' });
      expect(((await s.ok('list_tags', { project_id: project, search: 'v1.1.0' })) as unknown as Page).items).toHaveLength(1);
      const updated = await s.ok('save_release', { project_id: project, tag_name: 'v1.1.0', description: 'Better notes', milestones: [] });
      expect(updated).toMatchObject({ created: false, description: 'Better notes', milestones: [] });
      expect(await s.errorOf('save_release', { project_id: project, tag_name: 'v9.9.9' })).toMatchObject({
        type: 'validation',
        status: 422,
      });

      const { items, pages } = await s.all('list_releases', { project_id: project, per_page: 1, order_by: 'created_at', sort: 'asc' });
      expect(pages).toBe(2);
      expect(items.map((r) => r.tag_name)).toEqual(['v1.0.0', 'v1.1.0']);
      expect(items[0]).not.toHaveProperty('description');
      const one = await s.ok('get_release', { project_id: project, tag_name: 'v1.0.0' });
      expect(one).toMatchObject({ name: 'hello-forge 1.0', milestones: ['v1.0'], author: 'rita', upcoming_release: false });
      expect(one.description).toContain('Highlights');
      expect((one.assets as Json[]).map((a) => a.format)).toContain('zip');
      expect(await s.errorOf('get_release', { project_id: project, tag_name: 'v0.0.0' })).toMatchObject({ type: 'not_found' });
    } finally {
      await s.close();
    }
  });

  it('[TOOL-RELEASES] milestones filtered by state and search, paged, created, renamed and closed by save_milestone', async () => {
    const s = await connect({ toolsets: ['core', 'releases'] });
    try {
      const { items, pages } = await s.all('list_milestones', { project_id: project, per_page: 2 });
      expect(pages).toBe(3);
      expect(items).toHaveLength(5);
      const closed = (await s.ok('list_milestones', { project_id: project, state: 'closed' })) as unknown as Page;
      expect(closed.items.map((m) => m.title)).toEqual(['v1.0']);
      const searched = (await s.ok('list_milestones', { project_id: project, search: 'v2' })) as unknown as Page;
      expect(searched.items.map((m) => m.title)).toEqual(['v2.0']);

      const created = await s.ok('save_milestone', { project_id: project, title: 'v3.0', due_date: '2031-03-01' });
      expect(created).toMatchObject({ created: true, state: 'active', due_date: '2031-03-01', expired: false });
      const changed = await s.ok('save_milestone', {
        project_id: project,
        milestone_id: created.id,
        title: 'v3.0.0',
        state_event: 'close',
      });
      expect(changed).toMatchObject({ created: false, title: 'v3.0.0', state: 'closed' });
      expect(await s.errorOf('save_milestone', { project_id: project, title: 'v1.1' })).toMatchObject({ type: 'validation' });
      expect(await s.errorOf('save_milestone', { project_id: project, title: 'x', state_event: 'close' })).toMatchObject({
        type: 'validation',
      });
      const found = (await s.ok('search', { scope: 'milestones', search: 'v3.0', project_id: project })) as unknown as Page;
      expect(found.items).toEqual([expect.objectContaining({ id: created.id, title: 'v3.0.0', state: 'closed' })]);
      expect(await s.errorOf('save_milestone', { project_id: project, milestone_id: 999_999, title: 'x' })).toMatchObject({
        type: 'not_found',
      });
    } finally {
      await s.close();
    }
  });
});

describe('admin toolset', () => {
  it('[TOOL-ADMIN] list_ci_variables hides values unless reveal_values, and never shows a masked or hidden one', async () => {
    const s = await connect();
    try {
      const hidden = (await s.ok('list_ci_variables', { project_id: project })) as unknown as Page;
      expect(hidden.items.map((v) => v.key)).toEqual(['DEPLOY_TARGET', 'DEPLOY_TOKEN', 'SIGNING_KEY']);
      for (const v of hidden.items) expect(v).not.toHaveProperty('value');
      const { items, pages } = await s.all('list_ci_variables', { project_id: project, reveal_values: true, per_page: 2 });
      expect(pages).toBe(2);
      expect(items.map((v) => [v.key, v.value])).toEqual([
        ['DEPLOY_TARGET', 'staging.example.test'],
        ['DEPLOY_TOKEN', undefined],
        ['SIGNING_KEY', undefined],
      ]);
      expect(items[1]).toMatchObject({ masked: true, protected: true });
      expect(JSON.stringify(items)).not.toContain('devforge-deploy-token');
      const outsider = await connect({ token: otto });
      try {
        expect(await outsider.errorOf('list_ci_variables', { project_id: project })).toMatchObject({ type: 'not_found', status: 404 });
      } finally {
        await outsider.close();
      }
    } finally {
      await s.close();
    }
  });

  it('[TOOL-ADMIN] members with roles (direct and inherited), webhooks listed past page one and saved, never with their token', async () => {
    const s = await connect();
    try {
      const members = (await s.ok('list_members', { project_id: 'demo/webshop', include_inherited: true })) as unknown as Page;
      expect(members.items.map((m) => [m.username, m.role])).toEqual([
        ['rita', 'owner'],
        ['otto', 'developer'],
      ]);
      expect(((await s.ok('list_members', { project_id: 'demo/webshop', query: 'ott' })) as unknown as Page).items).toHaveLength(1);

      const created = await s.ok('save_webhook', {
        project_id: project,
        url: 'https://bot:hunter2@hooks.example.test/new',
        events: ['merge_requests', 'pipeline'],
        token: 'hook-secret-42',
      });
      expect(created).toMatchObject({ created: true, events: ['merge_requests', 'pipeline'], enable_ssl_verification: true });
      expect(created.url).toBe('https://***@hooks.example.test/new');
      const updated = await s.ok('save_webhook', { project_id: project, hook_id: created.id, events: ['push'], name: 'Bot' });
      expect(updated).toMatchObject({ created: false, events: ['push'], name: 'Bot' });
      expect(await s.errorOf('save_webhook', { project_id: project, url: 'ftp://x.test/' })).toMatchObject({
        type: 'validation',
        status: 422,
      });
      expect(await s.errorOf('save_webhook', { project_id: project, events: ['push'] })).toMatchObject({ type: 'validation' });

      const { items, pages } = await s.all('list_webhooks', { project_id: project, per_page: 1 });
      expect(pages).toBe(2);
      expect(items.map((h) => h.name)).toEqual(['CI bridge', 'Bot']);
      expect(items[0]).toMatchObject({ events: ['push', 'pipeline'], push_events_branch_filter: 'main' });
      expect(JSON.stringify(items)).not.toMatch(/hook-secret|devforge-hook-secret|hunter2/);
    } finally {
      await s.close();
    }
  });
});

describe('read-only', () => {
  const WRITES = ['save_release', 'save_milestone', 'add_tag', 'delete_tag', 'save_wiki_page', 'delete_wiki_page', 'save_webhook'];

  it('[TOOL-READONLY] a read-only surface lists none of the opt-in writes and refuses each; a read_api token gets insufficient_scope', async () => {
    const s = await connect({ readOnly: true });
    try {
      for (const write of WRITES) {
        expect(s.names).not.toContain(write);
        const refused = await s.call(write, { project_id: project }).then(
          (r) => r,
          (error: unknown) => ({ isError: true, structuredContent: { thrown: String(error) } }),
        );
        expect(refused.isError, write).toBe(true);
      }
      expect(s.names).toEqual(expect.arrayContaining(['list_wiki_pages', 'list_releases', 'list_ci_variables']) as unknown);
    } finally {
      await s.close();
    }
    const r = await connect({ token: readOnly });
    try {
      expect(await r.errorOf('save_wiki_page', { project_id: project, title: 'x', content: 'y' })).toMatchObject({
        type: 'insufficient_scope',
        status: 403,
      });
      expect(await r.errorOf('save_webhook', { project_id: project, url: 'https://x.test/' })).toMatchObject({
        type: 'insufficient_scope',
      });
      expect(((await r.ok('list_webhooks', { project_id: project })) as unknown as Page).items.length).toBeGreaterThan(0);
    } finally {
      await r.close();
    }
  });
});
