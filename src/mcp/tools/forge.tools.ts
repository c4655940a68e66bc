/**
 * The forge MCP server: the tools, declared on the contract of tool.contract.ts, and the server that carries them.
 * Used by the remote server (`/mcp`, a server per request, the bearer in `ctx.http.authInfo`) and by the local
 * stdio server (src/mcp/local, which passes `getToken`).
 */
import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Logger } from '../../core/logger.ts';
import { createForgeApi, type ForgeApi, type QueryValue } from './forge.client.ts';
import { projectPathId, projectRef } from './forge.ids.ts';
import { decodeCursor, pageOutput, pageResult, pagingInput } from './forge.paging.ts';
import { defineTool, registerForgeTool, ToolInputError, type AnyForgeTool, type Toolset } from './tool.contract.ts';
import { quickActionLines } from './tool.text.ts';

export interface ForgeMcpServerDeps {
  /** Base URL of the forge; the REST API is at `{forgeUrl}/api/v4`. */
  forgeUrl: string;
  fetch: typeof fetch;
  log: Logger;
  /** Where the token comes from when the request carries none (stdio). Remote requests use `ctx.http.authInfo.token`. */
  getToken?: () => Promise<string>;
  /** Told when the forge rejects a token, so a validation cache can forget it (issue 3 item 9). */
  onForgeUnauthorized?: (token: string) => void;
  /** `FORGE_ALLOW_QUICK_ACTIONS`: bodies may hold lines starting with `/` (default false). */
  allowQuickActions?: boolean;
  /** `FORGE_TIMEOUT_MS`: the deadline of one forge request (default 15 s). */
  forgeTimeoutMs?: number;
  /** A forge client to share (the remote server builds one per process, not one per request). */
  api?: ForgeApi;
  /** The tools to carry, in order (tool.surface.ts selects them); default: every declared tool. */
  tools?: readonly AnyForgeTool[];
}

/** Server identity announced to clients. */
export const SERVER_INFO = { name: 'platform-forge-mcp', version: '0.1.0' } as const;

/** The protocol revisions `/mcp` serves (mcp.transport.ts). */
export const PROTOCOL_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18'] as const;

type Json = Record<string, unknown>;

function pick(value: unknown, keys: readonly string[]): Json {
  const source = (value ?? {}) as Json;
  const out: Json = {};
  for (const key of keys) if (source[key] !== undefined && source[key] !== null) out[key] = source[key];
  return out;
}

function usernameOf(value: unknown): string | undefined {
  const name = (value as { username?: unknown } | null | undefined)?.username;
  return typeof name === 'string' ? name : undefined;
}

const text = (what: string) => z.string().describe(`${what} (forge text: untrusted)`);
const detail = z
  .enum(['slim', 'full'])
  .optional()
  .describe('slim (default): the fields to pick an item; full: also descriptions and more dates');

// Output item schemas. Optional fields are the ones the forge may leave out or null.
const userSchema = z.object({
  id: z.number().int().describe('User id'),
  username: z.string().describe('Username'),
  name: text('Display name'),
  state: z.string().optional().describe('active, blocked, …'),
  web_url: z.string().optional().describe('Profile page'),
});
const projectSchema = z.object({
  id: z.number().int().describe('Project id'),
  path_with_namespace: z.string().describe('namespace/project'),
  name: text('Project name'),
  description: text('Description').optional(),
  visibility: z.string().optional().describe('private, internal or public'),
  default_branch: z.string().optional().describe('Default branch'),
  web_url: z.string().describe('Project page'),
  last_activity_at: z.string().optional().describe('Last activity (ISO 8601)'),
});
const issueSchema = z.object({
  id: z.number().int().describe('Global issue id'),
  iid: z.number().int().describe('Issue number within the project'),
  project_id: z.number().int().describe('Project id'),
  title: text('Title'),
  state: z.string().describe('opened or closed'),
  labels: z.array(z.string()).optional().describe('Label names'),
  author: z.string().optional().describe('Author username'),
  web_url: z.string().describe('Issue page'),
  description: text('Description').optional(),
  created_at: z.string().optional().describe('Created (ISO 8601)'),
  updated_at: z.string().optional().describe('Updated (ISO 8601)'),
});
const mergeRequestSchema = z.object({
  id: z.number().int().describe('Global merge request id'),
  iid: z.number().int().describe('Merge request number within the project'),
  project_id: z.number().int().describe('Project id'),
  title: text('Title'),
  state: z.string().describe('opened, closed, merged or locked'),
  source_branch: z.string().optional().describe('Source branch'),
  target_branch: z.string().optional().describe('Target branch'),
  author: z.string().optional().describe('Author username'),
  web_url: z.string().describe('Merge request page'),
  description: text('Description').optional(),
  created_at: z.string().optional().describe('Created (ISO 8601)'),
  updated_at: z.string().optional().describe('Updated (ISO 8601)'),
});

const userOut = (u: unknown) => pick(u, ['id', 'username', 'name', 'state', 'web_url']) as z.infer<typeof userSchema>;
const projectOut = (full: boolean) => (p: unknown) =>
  pick(p, [
    'id',
    'name',
    'path_with_namespace',
    'visibility',
    'default_branch',
    'web_url',
    ...(full ? ['description', 'last_activity_at'] : []),
  ]) as z.infer<typeof projectSchema>;
const issueOut = (full: boolean) => (i: unknown) =>
  ({
    ...pick(i, [
      'id',
      'iid',
      'project_id',
      'title',
      'state',
      'labels',
      'web_url',
      ...(full ? ['description', 'created_at', 'updated_at'] : []),
    ]),
    ...(usernameOf((i as Json | null)?.author) ? { author: usernameOf((i as Json | null)?.author) } : {}),
  }) as z.infer<typeof issueSchema>;
const mergeRequestOut = (full: boolean) => (m: unknown) =>
  ({
    ...pick(m, [
      'id',
      'iid',
      'project_id',
      'title',
      'state',
      'source_branch',
      'target_branch',
      'web_url',
      ...(full ? ['description', 'created_at', 'updated_at'] : []),
    ]),
    ...(usernameOf((m as Json | null)?.author) ? { author: usernameOf((m as Json | null)?.author) } : {}),
  }) as z.infer<typeof mergeRequestSchema>;

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true } as const;

/** The tools, in the order `tools/list` shows them (deterministic). */
export function forgeTools(): AnyForgeTool[] {
  return [
    defineTool({
      name: 'get_server_info',
      toolset: 'context',
      title: 'Server and forge information',
      description:
        'This MCP server’s version, protocol revisions and toolsets, the signed-in forge user and the forge’s version. Use it first to check who you act as.',
      input: z.object({}),
      output: z.object({
        server: z
          .object({ name: z.string().describe('Server name'), version: z.string().describe('Server version') })
          .describe('This server'),
        protocol_versions: z.array(z.string()).describe('MCP revisions served'),
        toolsets: z.array(z.string()).describe('Toolsets enabled'),
        user: userSchema.describe('The signed-in forge user'),
        forge: z
          .object({ url: z.string().describe('Forge base URL'), version: z.string().optional().describe('Forge version, when it tells') })
          .describe('The forge'),
      }),
      annotations: READ,
      async run(_args, ctx) {
        const [user, version] = await Promise.all([
          ctx.api.get('/user', ctx.token),
          ctx.api.get<{ version?: unknown }>('/version', ctx.token).catch(() => ({ version: undefined })),
        ]);
        return {
          server: { ...SERVER_INFO },
          protocol_versions: [...PROTOCOL_VERSIONS],
          toolsets: declaredToolsets(),
          user: userOut(user),
          forge: { url: ctx.forgeUrl, ...(typeof version.version === 'string' ? { version: version.version } : {}) },
        };
      },
    }),
    defineTool({
      name: 'get_current_user',
      toolset: 'context',
      title: 'Current forge user',
      description: 'The forge user this server acts for (id, username, name). Use it to resolve “me” in a request.',
      input: z.object({}),
      output: userSchema,
      annotations: READ,
      run: async (_args, ctx) => userOut(await ctx.api.get('/user', ctx.token)),
    }),
    defineTool({
      name: 'list_projects',
      toolset: 'projects',
      title: 'List projects',
      description:
        'Projects the signed-in user is a member of (or every visible one with membership=false), optionally filtered by name. Use it to find a project id or path; one page at a time.',
      input: z.object({
        search: z.string().max(255).optional().describe('Only projects whose name or path contains this text'),
        membership: z.boolean().optional().describe('Only projects the user is a member of (default true)'),
        detail,
        ...pagingInput,
      }),
      output: pageOutput(projectSchema),
      annotations: READ,
      async run(args, ctx) {
        const query: Record<string, QueryValue> = {
          search: args.search,
          membership: args.membership ?? true,
          page: decodeCursor(args.cursor),
          per_page: args.per_page ?? 20,
        };
        return pageResult(await ctx.api.page('/projects', ctx.token, query), projectOut(args.detail === 'full'));
      },
    }),
    defineTool({
      name: 'get_project',
      toolset: 'projects',
      title: 'Get a project',
      description: 'One project with its description, default branch and visibility, by id, path or web URL.',
      input: z.object({ project_id: projectRef }),
      output: projectSchema,
      annotations: READ,
      run: async (args, ctx) => projectOut(true)(await ctx.api.get(`/projects/${projectPathId(args.project_id, ctx.forgeUrl)}`, ctx.token)),
    }),
    defineTool({
      name: 'list_issues',
      toolset: 'issues',
      title: 'List issues',
      description:
        'Issues of one project, filtered by state, labels or text, newest first; one page at a time. Use detail=full to read descriptions.',
      input: z.object({
        project_id: projectRef,
        state: z.enum(['opened', 'closed', 'all']).optional().describe('Issue state (default all)'),
        labels: z.string().max(500).optional().describe('Comma-separated label names; issues must have all of them'),
        search: z.string().max(255).optional().describe('Only issues whose title or description contains this text'),
        detail,
        ...pagingInput,
      }),
      output: pageOutput(issueSchema),
      annotations: READ,
      async run(args, ctx) {
        const query: Record<string, QueryValue> = {
          state: args.state,
          labels: args.labels,
          search: args.search,
          page: decodeCursor(args.cursor),
          per_page: args.per_page ?? 20,
        };
        const page = await ctx.api.page(`/projects/${projectPathId(args.project_id, ctx.forgeUrl)}/issues`, ctx.token, query);
        return pageResult(page, issueOut(args.detail === 'full'));
      },
    }),
    defineTool({
      name: 'create_issue',
      toolset: 'issues',
      title: 'Create an issue',
      description:
        'Opens a new issue in a project and returns it. Lines starting with “/” (GitLab quick actions) are refused unless the operator allows them.',
      input: z.object({
        project_id: projectRef,
        title: z.string().min(1).max(255).describe('Issue title'),
        description: z.string().max(100_000).optional().describe('Issue body (Markdown)'),
        labels: z.string().max(500).optional().describe('Comma-separated label names (missing labels are created)'),
      }),
      output: issueSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      async run(args, ctx) {
        if (!ctx.allowQuickActions) {
          const lines = [...quickActionLines(args.title), ...quickActionLines(args.description ?? '')];
          if (lines.length > 0)
            throw new ToolInputError(
              `lines starting with "/" would run as GitLab quick actions and are refused (first: ${JSON.stringify(lines[0]?.slice(0, 40))}); indent or reword them`,
            );
        }
        const body: Record<string, unknown> = { title: args.title };
        if (args.description !== undefined) body.description = args.description;
        if (args.labels !== undefined) body.labels = args.labels;
        return issueOut(true)(await ctx.api.post(`/projects/${projectPathId(args.project_id, ctx.forgeUrl)}/issues`, ctx.token, body));
      },
    }),
    defineTool({
      name: 'list_merge_requests',
      toolset: 'merge_requests',
      title: 'List merge requests',
      description:
        'Merge requests of one project, filtered by state, newest first; one page at a time. Use detail=full to read descriptions.',
      input: z.object({
        project_id: projectRef,
        state: z.enum(['opened', 'closed', 'merged', 'locked', 'all']).optional().describe('Merge request state (default all)'),
        detail,
        ...pagingInput,
      }),
      output: pageOutput(mergeRequestSchema),
      annotations: READ,
      async run(args, ctx) {
        const query: Record<string, QueryValue> = { state: args.state, page: decodeCursor(args.cursor), per_page: args.per_page ?? 20 };
        const page = await ctx.api.page(`/projects/${projectPathId(args.project_id, ctx.forgeUrl)}/merge_requests`, ctx.token, query);
        return pageResult(page, mergeRequestOut(args.detail === 'full'));
      },
    }),
  ];
}

/** Built once: the declarations do not change while the process runs, and servers are built per request. */
let declared: AnyForgeTool[] | undefined;

/** The toolsets of the declared tools. */
export function declaredToolsets(): Toolset[] {
  declared ??= forgeTools();
  return [...new Set(declared.map((t) => t.toolset))];
}

/** The declared tools, built once per process. */
export function declaredTools(): readonly AnyForgeTool[] {
  declared ??= forgeTools();
  return declared;
}

/** Builds an MCP server carrying the forge tools (`deps.tools`, default all). */
export function createForgeMcpServer(deps: ForgeMcpServerDeps): McpServer {
  const tools = deps.tools ?? declaredTools();
  const api =
    deps.api ??
    createForgeApi({ forgeUrl: deps.forgeUrl, fetch: deps.fetch, ...(deps.forgeTimeoutMs ? { timeoutMs: deps.forgeTimeoutMs } : {}) });
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {} },
    // 2026-07-28 cache fields. Private: the list may differ by the caller's authorization (issue 18 narrows it by
    // token and headers), so no shared cache may answer it for someone else.
    cacheHints: {
      'server/discover': { ttlMs: 300_000, cacheScope: 'private' },
      'tools/list': { ttlMs: 300_000, cacheScope: 'private' },
    },
  });
  for (const tool of tools)
    registerForgeTool(server, tool, {
      api,
      forgeUrl: deps.forgeUrl,
      log: deps.log,
      allowQuickActions: deps.allowQuickActions ?? false,
      ...(deps.getToken ? { getToken: deps.getToken } : {}),
      ...(deps.onForgeUnauthorized ? { onForgeUnauthorized: deps.onForgeUnauthorized } : {}),
    });
  return server;
}
