/**
 * The tool surface (issue 17 item 4): the operator's bound from the environment, narrowed by headers and by the
 * `/mcp/x/{toolsets}[/readonly]` URL, never widened; a hidden write tool refused when called. Real SDK clients
 * (v1 and v2) against a real server and the dev forge.
 */
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { checkResourceAllowed } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/config.ts';
import { parseMcpConfig } from '../mcp.config.ts';
import { startStack, type Stack } from '../mcp.testkit.ts';
import { declaredTools } from './forge.tools.ts';
import { narrowTools, selectTools, type ToolSurface } from './tool.surface.ts';

const CORE = ['get_server_info', 'get_user', 'list_projects', 'get_project', 'search', 'search_labels'];
const CORE_READ = CORE.filter((n) => n !== 'get_server_info');
const ISSUES = ['list_issues', 'get_issue', 'save_issue', 'save_issue_note'];
const MERGE_REQUESTS = [
  'list_merge_requests',
  'get_merge_request',
  'get_merge_request_diffs',
  'save_merge_request',
  'save_merge_request_review',
  'accept_merge_request',
];
const REPOSITORY = [
  'get_repository_file',
  'list_repository_tree',
  'list_commits',
  'get_commit',
  'add_commit',
  'list_branches',
  'save_branch',
];
const CI = ['list_pipelines', 'get_pipeline', 'manage_pipeline', 'get_job', 'lint_ci_config'];
const ALL = [...CORE, ...ISSUES, ...MERGE_REQUESTS, ...REPOSITORY, ...CI];
/** The default toolsets' tools (FORGE_TOOLSETS unset): all but the opt-in releases. */
const DEFAULT = ALL;

function names(tools: readonly { name: string }[]): string[] {
  return tools.map((t) => t.name);
}

function surfaceOf(env: Record<string, string>): ToolSurface {
  return parseMcpConfig(env).toolSurface;
}

describe('the operator bound (environment)', () => {
  it('[SURFACE-ENV] serves the default toolsets in declared order by default, and every tool with FORGE_TOOLSETS=all', () => {
    expect(names(selectTools(declaredTools(), surfaceOf({})))).toEqual(DEFAULT);
    expect(names(selectTools(declaredTools(), surfaceOf({ FORGE_TOOLSETS: 'all' }))).filter((n) => ALL.includes(n))).toEqual(ALL);
  });

  it('[SURFACE-ENV] intersects FORGE_TOOLSETS and FORGE_TOOLS (globs), removes FORGE_DENIED_TOOLS, keeps read tools only when read-only', () => {
    expect(names(selectTools(declaredTools(), surfaceOf({ FORGE_TOOLSETS: 'issues, core' })))).toEqual([...CORE, ...ISSUES]);
    expect(names(selectTools(declaredTools(), surfaceOf({ FORGE_TOOLSETS: 'issues,core', FORGE_TOOLS: 'list_*' })))).toEqual([
      'list_projects',
      'list_issues',
    ]);
    // Aliases count: get_user goes with its alias get_current_user.
    expect(names(selectTools(declaredTools(), surfaceOf({ FORGE_DENIED_TOOLS: 'get_*,list_merge_requests' })))).toEqual(
      DEFAULT.filter((n) => !n.startsWith('get_') && n !== 'list_merge_requests'),
    );
    expect(names(selectTools(declaredTools(), surfaceOf({ FORGE_READ_ONLY: 'true' })))).not.toContain('save_issue');
  });

  it('[SURFACE-ENV] refuses unknown toolsets, malformed names and names that match no tool, one line each', () => {
    try {
      parseMcpConfig({ FORGE_TOOLSETS: 'issues,wikis', FORGE_TOOLS: 'get_projekt', FORGE_DENIED_TOOLS: 'Bad Name' });
      expect.unreachable('parseMcpConfig accepted unknown names');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems.join('\n');
      expect(problems).toContain('FORGE_TOOLSETS: unknown toolsets wikis');
      expect(problems).toContain('FORGE_TOOLS: match no tool: get_projekt');
      expect(problems).toContain('FORGE_DENIED_TOOLS: not tool names or globs: Bad Name');
    }
  });
});

describe('a request narrowing the bound', () => {
  const bound = selectTools(declaredTools(), surfaceOf({ FORGE_TOOLSETS: 'core,issues' }));

  it('[SURFACE-NARROW] narrows by toolsets, tools, exclusions and read-only', () => {
    const narrowed = narrowTools(bound, { toolsets: ['issues'], exclude: ['list_issues'], readOnly: false });
    expect('tools' in narrowed && names(narrowed.tools)).toEqual(['get_issue', 'save_issue', 'save_issue_note']);
    const readOnly = narrowTools(bound, { tools: ['*_issue*'], readOnly: true });
    expect('tools' in readOnly && names(readOnly.tools)).toEqual(['list_issues', 'get_issue']);
  });

  it('[SURFACE-WIDEN] refuses a toolset or tool outside the bound, and malformed names', () => {
    expect(narrowTools(bound, { toolsets: ['issues', 'merge_requests'], readOnly: false })).toEqual({
      error: 'Toolsets not available on this server: merge_requests (available: core, issues).',
    });
    expect(narrowTools(bound, { tools: ['list_merge_requests'], readOnly: false })).toEqual({
      error: 'Tools not available on this server: list_merge_requests.',
    });
    expect(narrowTools(bound, { exclude: ['x y'], readOnly: false })).toMatchObject({
      error: expect.stringContaining('X-MCP-Exclude-Tools') as unknown,
    });
  });
});

describe('over HTTP with the SDK clients', () => {
  let stack: Stack;
  let pat = '';

  beforeAll(async () => {
    // The operator bound: no merge requests, no get_server_info.
    stack = await startStack({
      mode: 'none',
      toolSurface: surfaceOf({ FORGE_TOOLSETS: 'core,issues', FORGE_DENIED_TOOLS: 'get_server_info' }),
    });
    pat = stack.forge.forge.createPersonalAccessToken(stack.forge.user.username, ['api']);
  });
  afterAll(async () => {
    await stack.close();
  });

  async function v1(path: string, headers: Record<string, string> = {}): Promise<Client> {
    const client = new Client({ name: 'surface-v1', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.url}${path}`), {
        requestInit: { headers: { authorization: `Bearer ${pat}`, ...headers } },
      }),
    );
    return client;
  }

  async function v2(path: string, headers: Record<string, string> = {}): Promise<V2Client> {
    const client = new V2Client({ name: 'surface-v2', version: '1' });
    await client.connect(
      new V2Transport(new URL(`${stack.url}${path}`), { requestInit: { headers: { authorization: `Bearer ${pat}`, ...headers } } }),
    );
    return client;
  }

  it('[SURFACE-ENV] lists the operator bound, in order, to both clients', async () => {
    const bound = [...CORE_READ, ...ISSUES];
    const one = await v1('/mcp');
    const two = await v2('/mcp');
    try {
      expect(names((await one.listTools()).tools)).toEqual(bound);
      expect(names((await two.listTools()).tools)).toEqual(bound);
      // Listing again on the same connection gives the same list.
      expect(names((await two.listTools()).tools)).toEqual(bound);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('[SURFACE-HEADER] narrows by X-MCP-Toolsets, X-MCP-Tools, X-MCP-Exclude-Tools and X-MCP-Readonly', async () => {
    const one = await v1('/mcp', { 'x-mcp-toolsets': 'issues,core', 'x-mcp-exclude-tools': 'get_project', 'x-mcp-readonly': 'true' });
    const two = await v2('/mcp', { 'x-mcp-tools': 'list_*,create_issue' });
    try {
      expect(names((await one.listTools()).tools)).toEqual([
        'get_user',
        'list_projects',
        'search',
        'search_labels',
        'list_issues',
        'get_issue',
      ]);
      expect(names((await two.listTools()).tools)).toEqual(['list_projects', 'list_issues', 'save_issue']);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('[SURFACE-URL] narrows by /mcp/x/{toolsets} and /mcp/x/{toolsets}/readonly', async () => {
    const one = await v1('/mcp/x/issues/readonly');
    const two = await v2('/mcp/x/core');
    try {
      expect(names((await one.listTools()).tools)).toEqual(['list_issues', 'get_issue']);
      expect(names((await two.listTools()).tools)).toEqual(CORE_READ);
      // An alias is not listed, and still callable.
      const me = await two.callTool({ name: 'get_current_user', arguments: {} });
      expect(me.isError).toBeFalsy();
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('[SURFACE-HEADER] narrows a 2026-07-28 request too (the modern handler builds its server per request)', async () => {
    const modern = async (method: string, params: Record<string, unknown>, headers: Record<string, string>, path = '/mcp') => {
      const response = await fetch(`${stack.url}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${pat}`,
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': method,
          ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
          ...headers,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 3,
          method,
          params: {
            ...params,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': {},
              'io.modelcontextprotocol/clientInfo': { name: 'surface-modern', version: '1' },
            },
          },
        }),
      });
      return (await response.json()) as { result?: { tools?: { name: string }[]; isError?: boolean }; error?: { message: string } };
    };
    expect(names((await modern('tools/list', {}, { 'x-mcp-toolsets': 'issues' })).result?.tools ?? [])).toEqual(ISSUES);
    expect(names((await modern('tools/list', {}, {}, '/mcp/x/core/readonly')).result?.tools ?? [])).toEqual(CORE_READ);
    const refused = await modern(
      'tools/call',
      { name: 'create_issue', arguments: { project_id: '1', title: 'must not exist' } },
      { 'x-mcp-readonly': 'true' },
    );
    expect(refused.result?.isError ?? refused.error !== undefined).toBe(true);
    expect(JSON.stringify(refused)).toMatch(/create_issue/);
  });

  it('[SURFACE-READONLY] refuses a call of a write tool hidden by read-only mode, and creates nothing', async () => {
    const forgeGet = async <T>(path: string): Promise<T> => {
      const response = await fetch(`${stack.forge.forge.url}/api/v4${path}`, { headers: { 'private-token': pat } });
      expect(response.status).toBe(200);
      return (await response.json()) as T;
    };
    const [project] = await forgeGet<{ id: number }[]>('/projects?membership=true&per_page=1');
    if (!project) throw new Error('the dev forge has no sample project');
    const titled = async () =>
      (await forgeGet<{ title: string }[]>(`/projects/${project.id}/issues?per_page=100`)).filter((i) => i.title === 'must not exist');
    expect(await titled()).toEqual([]);
    for (const client of [await v1('/mcp/x/issues/readonly'), await v2('/mcp', { 'x-mcp-readonly': 'true' })]) {
      try {
        const refused = await client
          .callTool({ name: 'create_issue', arguments: { project_id: String(project.id), title: 'must not exist' } })
          .then(
            (result) => result,
            (error: unknown) => error,
          );
        // An unknown tool: a JSON-RPC error (thrown by the client) or an error result, never a created issue.
        if (refused instanceof Error) expect(refused.message).toMatch(/create_issue/);
        else expect((refused as { isError?: boolean }).isError).toBe(true);
      } finally {
        await client.close();
      }
    }
    expect(await titled()).toEqual([]);
    // Not hidden: the same call creates the issue (so the refusal above is the surface's doing).
    const open = await v2('/mcp');
    try {
      const created = await open.callTool({ name: 'create_issue', arguments: { project_id: String(project.id), title: 'must not exist' } });
      expect(created.isError).toBeFalsy();
    } finally {
      await open.close();
    }
    expect(await titled()).toHaveLength(1);
  });

  it('[SURFACE-WIDEN] a request naming a toolset or tool outside the bound gets 400 with the reason, on the header and the URL', async () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    const post = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${stack.url}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${pat}`,
          'mcp-protocol-version': '2025-11-25',
          ...headers,
        },
        body: JSON.stringify(list),
      });
    const byHeader = await post('/mcp', { 'x-mcp-toolsets': 'issues,merge_requests' });
    expect(byHeader.status).toBe(400);
    expect(await byHeader.json()).toMatchObject({ error: { code: -32602, message: expect.stringContaining('merge_requests') as unknown } });
    const byUrl = await post('/mcp/x/merge_requests');
    expect(byUrl.status).toBe(400);
    const byTool = await post('/mcp', { 'x-mcp-tools': 'get_server_info' });
    expect(byTool.status).toBe(400);
    expect(await byTool.json()).toMatchObject({ error: { message: 'Tools not available on this server: get_server_info.' } });
    const badReadonly = await post('/mcp', { 'x-mcp-readonly': 'maybe' });
    expect(badReadonly.status).toBe(400);
  });

  it('[SURFACE-URL] the URL form goes through the bearer check, with the /mcp challenge', async () => {
    const response = await fetch(`${stack.url}/mcp/x/issues`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(response.status).toBe(401);
    expect((await fetch(`${stack.url}/mcp/x/issues`)).status).toBe(405);
  });
});

describe('the URL form under remote OAuth', () => {
  it('[SURFACE-URL] challenges with the /mcp protected-resource metadata, whose resource the SDK accepts for /mcp/x/…', async () => {
    const stack = await startStack({ mode: 'passthrough' });
    try {
      const response = await fetch(`${stack.url}/mcp/x/issues/readonly`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
      expect(response.status).toBe(401);
      const metadataUrl = /resource_metadata="([^"]+)"/.exec(response.headers.get('www-authenticate') ?? '')?.[1];
      expect(metadataUrl).toBe(`${stack.serverUrl}/.well-known/oauth-protected-resource/mcp`);
      const metadata = (await (await fetch(metadataUrl ?? '')).json()) as { resource: string };
      expect(metadata.resource).toBe(`${stack.serverUrl}/mcp`);
      expect(
        checkResourceAllowed({ requestedResource: `${stack.serverUrl}/mcp/x/issues/readonly`, configuredResource: metadata.resource }),
      ).toBe(true);
      expect(checkResourceAllowed({ requestedResource: `${stack.serverUrl}/mcpx`, configuredResource: metadata.resource })).toBe(false);
    } finally {
      await stack.close();
    }
  });
});
