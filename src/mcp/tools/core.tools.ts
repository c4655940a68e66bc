/**
 * The `core` toolset (issue 18 item 1): who the server acts as, users, projects, search and labels — what every
 * other toolset needs to find its way. Names and parameters follow GitLab's own MCP server where it has the tool.
 */
import { z } from 'zod';
import type { QueryValue } from './forge.client.ts';
import { detail, projectOut, projectSchema, READ, userOut, userSchema } from './forge.entities.ts';
import { projectPathId, projectRef } from './forge.ids.ts';
import { decodeCursor, pageOutput, pageResult, pagingInput } from './forge.paging.ts';
import { PROTOCOL_VERSIONS, SERVER_INFO } from './server.info.ts';
import { defineTool, type ToolsetDefinition } from './tool.contract.ts';

function coreTools() {
  return [
    defineTool({
      name: 'get_server_info',
      toolset: 'core',
      title: 'Server and forge information',
      description:
        'This MCP server’s version, protocol revisions and the toolsets enabled for this connection, the signed-in forge user and the forge’s version. Use it first to check who you act as.',
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
      name: 'get_current_user',
      toolset: 'core',
      title: 'Current forge user',
      description: 'The forge user this server acts for (id, username, name). Use it to resolve “me” in a request.',
      input: z.object({}),
      output: userSchema,
      annotations: READ,
      run: async (_args, ctx) => userOut(await ctx.api.get('/user', ctx.token)),
    }),
    defineTool({
      name: 'list_projects',
      toolset: 'core',
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
      toolset: 'core',
      title: 'Get a project',
      description: 'One project with its description, default branch and visibility, by id, path or web URL.',
      input: z.object({ project_id: projectRef }),
      output: projectSchema,
      annotations: READ,
      run: async (args, ctx) => projectOut(true)(await ctx.api.get(`/projects/${projectPathId(args.project_id, ctx.forgeUrl)}`, ctx.token)),
    }),
  ];
}

export const coreToolset: ToolsetDefinition = {
  name: 'core',
  description: 'Server information, users, projects, search and labels',
  default: true,
  tools: coreTools,
};
