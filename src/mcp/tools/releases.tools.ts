/**
 * The opt-in `releases` toolset (issue 18 item 1): tags (list, create, delete after confirmation). GitLab's own
 * MCP server has `list_tags` in its repository toolset; here tags sit with releases as the issue groups them, so
 * the default tool list stays small.
 */
import { z } from 'zod';
import { READ, text, type Json } from './forge.entities.ts';
import { projectPathId, projectRef } from './forge.ids.ts';
import { decodeCursor, pageOutput, pageResult, pagingInput } from './forge.paging.ts';
import { confirmationInput } from './tool.confirm.ts';
import { defineTool, type ToolContext, type ToolsetDefinition } from './tool.contract.ts';

const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true } as const;

const repo = (ctx: ToolContext, project: string | number) => `/projects/${projectPathId(project, ctx.forgeUrl)}/repository`;

const tagSchema = z.object({
  name: z.string(),
  message: text('Annotation message (empty for a lightweight tag)').optional(),
  commit: z.object({ id: z.string(), title: text('Tagged commit title') }),
  created_at: z.string().nullable().optional(),
});

function tagOut(t: unknown) {
  const v = t as Json;
  const c = (v.commit ?? {}) as Json;
  return {
    name: String(v.name),
    ...(typeof v.message === 'string' && v.message !== '' ? { message: v.message } : {}),
    commit: { id: String(c.id), title: String(c.title) },
    ...(v.created_at !== undefined ? { created_at: (v.created_at as string | null) ?? null } : {}),
  };
}

function releaseTools() {
  return [
    defineTool({
      name: 'list_tags',
      toolset: 'releases',
      title: 'List tags',
      description: 'Tags, newest first, with the commit each points at; optionally only names containing a text.',
      input: z.object({ project_id: projectRef, search: z.string().max(255).optional().describe('Name contains this'), ...pagingInput }),
      output: pageOutput(tagSchema),
      annotations: READ,
      async run(args, ctx) {
        const query = { search: args.search, page: decodeCursor(args.cursor), per_page: args.per_page ?? 20 };
        return pageResult(await ctx.api.page(`${repo(ctx, args.project_id)}/tags`, ctx.token, query), tagOut);
      },
    }),
    defineTool({
      name: 'add_tag',
      toolset: 'releases',
      title: 'Create a tag',
      description: 'Tags a ref; with a message the tag is annotated.',
      input: z.object({
        project_id: projectRef,
        tag_name: z.string().min(1).max(255).describe('Tag name, e.g. v1.2.0'),
        ref: z.string().min(1).max(255).describe('Branch, tag or SHA to tag'),
        message: z.string().max(10_000).optional().describe('Annotation message'),
      }),
      output: tagSchema,
      annotations: WRITE,
      async run(args, ctx) {
        const body: Record<string, unknown> = { tag_name: args.tag_name, ref: args.ref };
        if (args.message !== undefined) body.message = args.message;
        return tagOut(await ctx.api.post(`${repo(ctx, args.project_id)}/tags`, ctx.token, body));
      },
    }),
    defineTool({
      name: 'delete_tag',
      toolset: 'releases',
      title: 'Delete a tag',
      description: 'Deletes a tag after the user confirms (a release on it loses its tag).',
      input: z.object({ project_id: projectRef, tag_name: z.string().min(1).max(255).describe('Tag name'), ...confirmationInput }),
      output: z.object({ deleted: z.boolean(), tag_name: z.string(), commit_id: z.string().describe('Where it pointed') }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
      confirms: true,
      async run(args, ctx) {
        const url = `${repo(ctx, args.project_id)}/tags/${encodeURIComponent(args.tag_name)}`;
        const tag = tagOut(await ctx.api.get(url, ctx.token));
        await ctx.confirm(
          `Delete tag "${args.tag_name}" of ${String(args.project_id)}, at ${tag.commit.id.slice(0, 8)} "${tag.commit.title}".`,
        );
        await ctx.api.send('DELETE', url, ctx.token);
        return { deleted: true, tag_name: args.tag_name, commit_id: tag.commit.id };
      },
    }),
  ];
}

export const releasesToolset: ToolsetDefinition = {
  name: 'releases',
  description: 'Releases: tags (list, create, delete)',
  default: false,
  tools: releaseTools,
};
