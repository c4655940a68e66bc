/**
 * The `core` toolset (issue 18 item 1): who the server acts as, users, projects, search and labels — what every
 * other toolset needs to find its way. Names and parameters follow GitLab's own MCP server where it has the tool.
 */
import { z } from 'zod';
import { ForgeApiError, type QueryValue } from './forge.client.ts';
import {
  detail,
  issueOut,
  mergeRequestOut,
  noteOut,
  pick,
  projectOut,
  projectSchema,
  READ,
  text,
  userOut,
  userSchema,
} from './forge.entities.ts';
import { projectPathId, projectRef } from './forge.ids.ts';
import { forgePaging, pageOutput, pageResult, pagingInput } from './forge.paging.ts';
import { PROTOCOL_VERSIONS, SERVER_INFO } from './server.info.ts';
import { defineTool, ToolInputError, type ToolsetDefinition } from './tool.contract.ts';

function coreTools() {
  return [
    defineTool({
      name: 'get_server_info',
      toolset: 'core',
      title: 'Server info',
      description: 'Server version, toolsets, forge version and the signed-in user: who you act as.',
      input: z.object({}),
      output: z.object({
        server: z
          .object({ name: z.string().describe('Server name'), version: z.string().describe('Server version') })
          .describe('This server'),
        protocol_versions: z.array(z.string()).describe('MCP revisions served'),
        toolsets: z.array(z.string()).describe('Toolsets enabled for this connection'),
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
          toolsets: [...ctx.toolsets],
          user: userOut(user),
          forge: { url: ctx.forgeUrl, ...(typeof version.version === 'string' ? { version: version.version } : {}) },
        };
      },
    }),
    defineTool({
      name: 'get_user',
      aliases: ['get_current_user'],
      toolset: 'core',
      title: 'Get a user',
      description: 'A user by username or id; without either, you. Resolves "me" or an @mention.',
      input: z.object({
        username: z.string().min(1).max(255).optional().describe('Username'),
        user_id: z.number().int().positive().optional().describe('User id'),
      }),
      output: userSchema,
      annotations: READ,
      async run(args, ctx) {
        if (args.username !== undefined && args.user_id !== undefined) throw new ToolInputError('give username or user_id, not both');
        if (args.user_id !== undefined) return userOut(await ctx.api.get(`/users/${args.user_id}`, ctx.token));
        if (args.username !== undefined) {
          const found = await ctx.api.get<unknown[]>('/users', ctx.token, { username: args.username.replace(/^@/, '') });
          if (found.length === 0)
            throw new ForgeApiError('not_found', 404, 'no user with that username', { publicMessage: `No forge user ${args.username}.` });
          return userOut(found[0]);
        }
        return userOut(await ctx.api.get('/user', ctx.token));
      },
    }),
    defineTool({
      name: 'list_projects',
      toolset: 'core',
      title: 'List projects',
      description: 'Projects you are a member of (or all visible), by name: find a project id or path.',
      input: z.object({
        search: z.string().max(255).optional().describe('Name or path contains'),
        membership: z.boolean().optional().describe('Member only (default true)'),
        detail,
        ...pagingInput,
      }),
      output: pageOutput(projectSchema),
      annotations: READ,
      async run(args, ctx) {
        const query: Record<string, QueryValue> = {
          search: args.search,
          membership: args.membership ?? true,
          ...forgePaging(args),
        };
        return pageResult(await ctx.api.page('/projects', ctx.token, query), projectOut(args.detail === 'full'));
      },
    }),
    defineTool({
      name: 'get_project',
      toolset: 'core',
      title: 'Get a project',
      description: 'One project (description, default branch, visibility) by id, path or URL.',
      input: z.object({ project_id: projectRef }),
      output: projectSchema,
      annotations: READ,
      run: async (args, ctx) => projectOut(true)(await ctx.api.get(`/projects/${projectPathId(args.project_id, ctx.forgeUrl)}`, ctx.token)),
    }),
    defineTool({
      name: 'search',
      toolset: 'core',
      title: 'Search',
      description: 'Searches one scope (code, issues, commits...) across the forge, a group or a project.',
      input: z.object({
        scope: z.enum(SEARCH_SCOPES).describe('notes: project only'),
        search: z.string().min(2).max(255).describe('Text to find'),
        group_id: z
          .preprocess((value) => (typeof value === 'number' ? String(value) : value), z.string().min(1).max(255))
          .optional()
          .describe('Group id or path'),
        project_id: projectRef.optional(),
        ...pagingInput,
      }),
      output: pageOutput(z.record(z.string(), z.unknown()).describe('A result (fields depend on the scope)')),
      annotations: READ,
      async run(args, ctx) {
        if (args.group_id !== undefined && args.project_id !== undefined) throw new ToolInputError('give group_id or project_id, not both');
        const path =
          args.project_id !== undefined
            ? `/projects/${projectPathId(args.project_id, ctx.forgeUrl)}/search`
            : args.group_id !== undefined
              ? `/groups/${encodeURIComponent(String(args.group_id))}/search`
              : '/search';
        const query: Record<string, QueryValue> = {
          scope: args.scope,
          search: args.search,
          ...forgePaging(args),
        };
        return pageResult(await ctx.api.page(path, ctx.token, query), searchHit(args.scope));
      },
    }),
    defineTool({
      name: 'search_labels',
      toolset: 'core',
      title: 'Project labels',
      description: 'Labels of a project with color, description and open counts; filter by name.',
      input: z.object({
        project_id: projectRef,
        search: z.string().max(255).optional().describe('Name contains'),
        ...pagingInput,
      }),
      output: pageOutput(
        z.object({
          id: z.number().int().describe('Label id'),
          name: text('Label name'),
          color: z.string().optional().describe('Color (#RRGGBB)'),
          description: text('Description').optional(),
          open_issues_count: z.number().int().optional().describe('Open issues with it'),
          open_merge_requests_count: z.number().int().optional().describe('Open merge requests with it'),
        }),
      ),
      annotations: READ,
      async run(args, ctx) {
        const query: Record<string, QueryValue> = { search: args.search, ...forgePaging(args) };
        const page = await ctx.api.page(`/projects/${projectPathId(args.project_id, ctx.forgeUrl)}/labels`, ctx.token, query);
        return pageResult(
          page,
          (l) =>
            pick(l, ['id', 'name', 'color', 'description', 'open_issues_count', 'open_merge_requests_count']) as {
              id: number;
              name: string;
            },
        );
      },
    }),
  ];
}

const SEARCH_SCOPES = ['projects', 'issues', 'merge_requests', 'notes', 'blobs', 'commits', 'wiki_blobs', 'users', 'milestones'] as const;

/** A search result reduced to what identifies it, per scope. */
function searchHit(scope: (typeof SEARCH_SCOPES)[number]): (hit: unknown) => Record<string, unknown> {
  switch (scope) {
    case 'projects':
      return projectOut(false);
    case 'issues':
      return issueOut(false);
    case 'merge_requests':
      return mergeRequestOut(false);
    case 'users':
      return userOut;
    case 'notes':
      return (n) => ({ ...noteOut(n), ...pick(n, ['noteable_type', 'noteable_iid', 'project_id']) });
    case 'blobs':
    case 'wiki_blobs':
      return (b) => pick(b, ['path', 'filename', 'ref', 'startline', 'data', 'project_id']);
    case 'commits':
      return (c) => pick(c, ['id', 'short_id', 'title', 'author_name', 'created_at', 'web_url']);
    case 'milestones':
      return (m) => pick(m, ['id', 'iid', 'title', 'state', 'due_date', 'web_url']);
  }
}

export const coreToolset: ToolsetDefinition = {
  name: 'core',
  description: 'Server information, users, projects, search and labels',
  default: true,
  tools: coreTools,
};
