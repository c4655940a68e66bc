/**
 * The forge MCP server: tools that call the forge REST API as the signed-in user. Used by the remote server
 * (`/mcp`, where the SDK passes the validated bearer as `ctx.http.authInfo.token`) and by the local stdio server
 * (src/mcp/local, which passes `getToken`).
 */
import { McpServer, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Logger } from '../../core/logger.ts';
import { createForgeApi, ForgeApiError, projectPathId, type ForgeApi, type QueryValue } from './forge.client.ts';

export interface ForgeMcpServerDeps {
  /** Base URL of the forge; the REST API is at `{forgeUrl}/api/v4`. */
  forgeUrl: string;
  fetch: typeof fetch;
  log: Logger;
  /** Where the token comes from when the request carries none (stdio). Remote requests use `ctx.http.authInfo.token`. */
  getToken?: () => Promise<string>;
  /** Told when the forge rejects a token, so a validation cache can forget it (issue 3 item 9). */
  onForgeUnauthorized?: (token: string) => void;
}

/** Server identity announced to clients. */
export const SERVER_INFO = { name: 'platform-forge-mcp', version: '0.1.0' } as const;

/** What a client sees when the forge call fails: generic by kind, details only in the log (issue 3 item 10). */
const GENERIC_ERRORS: Record<ForgeApiError['kind'] | 'no_token' | 'internal', string> = {
  unauthorized: 'The forge did not accept the credentials. Sign in again.',
  forbidden: 'The forge refused this operation for the signed-in user.',
  not_found: 'Not found on the forge, or not visible to the signed-in user.',
  invalid: 'The forge rejected the request as invalid.',
  unavailable: 'The forge could not be reached. Try again later.',
  no_token: 'Not signed in to the forge.',
  internal: 'The tool failed unexpectedly.',
};

type Json = Record<string, unknown>;

function pick(value: unknown, keys: readonly string[]): Json {
  const source = (value ?? {}) as Json;
  const out: Json = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}

function username(value: unknown): unknown {
  return (value as { username?: unknown } | null | undefined)?.username;
}

const userOut = (u: unknown): Json => pick(u, ['id', 'username', 'name', 'email', 'state', 'web_url']);
const projectOut = (p: unknown): Json =>
  pick(p, ['id', 'name', 'path_with_namespace', 'description', 'visibility', 'default_branch', 'web_url', 'last_activity_at']);
const issueOut = (i: unknown): Json => ({
  ...pick(i, ['id', 'iid', 'project_id', 'title', 'description', 'state', 'labels', 'web_url', 'created_at', 'updated_at']),
  author: username((i as Json | null)?.author),
});
const mergeRequestOut = (m: unknown): Json => ({
  ...pick(m, [
    'id',
    'iid',
    'project_id',
    'title',
    'state',
    'source_branch',
    'target_branch',
    'labels',
    'web_url',
    'created_at',
    'updated_at',
  ]),
  author: username((m as Json | null)?.author),
});

const projectId = z
  .union([z.number().int().positive(), z.string().min(1).max(255)])
  .describe('Numeric project id or "namespace/project" path');
const page = z.number().int().min(1).max(1000).optional().describe('Page number (1-based)');
const perPage = z.number().int().min(1).max(100).optional().describe('Items per page (default 20, at most 100)');

/** Input schemas, built once per process (zod schemas are not free to construct, and servers are made often). */
const INPUT = {
  listProjects: z.object({
    search: z.string().max(255).optional().describe('Filter by name'),
    membership: z.boolean().optional().describe('Only projects the user is a member of (default true)'),
    page,
    per_page: perPage,
  }),
  getProject: z.object({ project_id: projectId }),
  listIssues: z.object({
    project_id: projectId,
    state: z.enum(['opened', 'closed', 'all']).optional().describe('Issue state (default all)'),
    labels: z.string().max(500).optional().describe('Comma-separated label names'),
    search: z.string().max(255).optional(),
    page,
    per_page: perPage,
  }),
  createIssue: z.object({
    project_id: projectId,
    title: z.string().min(1).max(255),
    description: z.string().max(100_000).optional(),
    labels: z.string().max(500).optional().describe('Comma-separated label names'),
  }),
  listMergeRequests: z.object({
    project_id: projectId,
    state: z.enum(['opened', 'closed', 'merged', 'locked', 'all']).optional(),
    page,
    per_page: perPage,
  }),
};

function ok(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] };
}

/**
 * Builds an MCP server with the forge tools: `get_current_user`, `list_projects`, `get_project`, `list_issues`,
 * `create_issue`, `list_merge_requests`. A forge failure is a tool error (`isError: true`) with a generic text.
 */
export function createForgeMcpServer(deps: ForgeMcpServerDeps): McpServer {
  const api: ForgeApi = createForgeApi({ forgeUrl: deps.forgeUrl, fetch: deps.fetch });
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {} },
    // 2026-07-28 cache fields. Private: the list may differ by the caller's authorization (issue 18 narrows it by
    // token and headers), so no shared cache may answer it for someone else.
    cacheHints: {
      'server/discover': { ttlMs: 300_000, cacheScope: 'private' },
      'tools/list': { ttlMs: 300_000, cacheScope: 'private' },
    },
  });

  /** Runs a tool body with the caller's token and turns failures into generic tool errors. */
  const run = async (tool: string, ctx: ServerContext, body: (token: string) => Promise<unknown>): Promise<CallToolResult> => {
    let token = ctx.http?.authInfo?.token;
    try {
      if (token === undefined && deps.getToken) token = await deps.getToken();
    } catch (error) {
      deps.log.warn({ tool, cause: (error as Error).message }, 'no forge token for a tool call');
    }
    if (token === undefined || token === '') return { isError: true, content: [{ type: 'text', text: GENERIC_ERRORS.no_token }] };
    // A client that asked for progress (`_meta.progressToken`) hears when the forge call starts and ends; on HTTP
    // this turns the answer into an SSE stream of its own.
    const progressToken = ctx.mcpReq._meta?.progressToken;
    const progress = async (value: number, message: string) => {
      if (progressToken !== undefined)
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: value, total: 1, message } });
    };
    try {
      await progress(0, 'calling the forge');
      const value = await body(token);
      await progress(1, 'done');
      return ok(value);
    } catch (error) {
      if (error instanceof ForgeApiError) {
        deps.log.warn({ tool, forge_status: error.status, kind: error.kind, detail: error.message }, 'forge call of a tool failed');
        if (error.kind === 'unauthorized') deps.onForgeUnauthorized?.(token);
        return { isError: true, content: [{ type: 'text', text: GENERIC_ERRORS[error.kind] }] };
      }
      deps.log.error({ tool, err: error }, 'tool failed');
      return { isError: true, content: [{ type: 'text', text: GENERIC_ERRORS.internal }] };
    }
  };

  server.registerTool(
    'get_current_user',
    { title: 'Current forge user', description: 'The forge user the server acts for.', annotations: { readOnlyHint: true } },
    async (ctx) => run('get_current_user', ctx, async (token) => userOut(await api.get('/user', token))),
  );

  server.registerTool(
    'list_projects',
    {
      title: 'List projects',
      description: 'Projects the signed-in user is a member of (or all visible ones with membership=false).',
      inputSchema: INPUT.listProjects,
      annotations: { readOnlyHint: true },
    },
    async (args, ctx) =>
      run('list_projects', ctx, async (token) => {
        const query: Record<string, QueryValue> = {
          search: args.search,
          membership: args.membership ?? true,
          page: args.page,
          per_page: args.per_page ?? 20,
        };
        const projects = await api.get<unknown[]>('/projects', token, query);
        return projects.map(projectOut);
      }),
  );

  server.registerTool(
    'get_project',
    {
      title: 'Get a project',
      description: 'One project by id or path.',
      inputSchema: INPUT.getProject,
      annotations: { readOnlyHint: true },
    },
    async (args, ctx) =>
      run('get_project', ctx, async (token) => projectOut(await api.get(`/projects/${projectPathId(args.project_id)}`, token))),
  );

  server.registerTool(
    'list_issues',
    {
      title: 'List issues',
      description: 'Issues of a project.',
      inputSchema: INPUT.listIssues,
      annotations: { readOnlyHint: true },
    },
    async (args, ctx) =>
      run('list_issues', ctx, async (token) => {
        const query: Record<string, QueryValue> = {
          state: args.state,
          labels: args.labels,
          search: args.search,
          page: args.page,
          per_page: args.per_page ?? 20,
        };
        const issues = await api.get<unknown[]>(`/projects/${projectPathId(args.project_id)}/issues`, token, query);
        return issues.map(issueOut);
      }),
  );

  server.registerTool(
    'create_issue',
    {
      title: 'Create an issue',
      description: 'Opens a new issue in a project.',
      inputSchema: INPUT.createIssue,
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async (args, ctx) =>
      run('create_issue', ctx, async (token) => {
        const body: Record<string, unknown> = { title: args.title };
        if (args.description !== undefined) body.description = args.description;
        if (args.labels !== undefined) body.labels = args.labels;
        return issueOut(await api.post(`/projects/${projectPathId(args.project_id)}/issues`, token, body));
      }),
  );

  server.registerTool(
    'list_merge_requests',
    {
      title: 'List merge requests',
      description: 'Merge requests of a project.',
      inputSchema: INPUT.listMergeRequests,
      annotations: { readOnlyHint: true },
    },
    async (args, ctx) =>
      run('list_merge_requests', ctx, async (token) => {
        const query: Record<string, QueryValue> = { state: args.state, page: args.page, per_page: args.per_page ?? 20 };
        const mrs = await api.get<unknown[]>(`/projects/${projectPathId(args.project_id)}/merge_requests`, token, query);
        return mrs.map(mergeRequestOut);
      }),
  );

  return server;
}
