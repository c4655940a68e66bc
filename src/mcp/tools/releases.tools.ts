/**
 * The opt-in `releases` toolset (issue 18 item 1): releases (list, get, save), milestones (list, save; milestones.tools.ts)
 * and tags (list, create, delete after confirmation). GitLab's own MCP server has `list_tags` in its repository
 * toolset; here tags sit with releases as the issue groups them, so the default tool list stays small. Release
 * parameters are GitLab's (`tag_name`, `ref`, `milestones`, `released_at`).
 */
import { z } from 'zod';
import { ForgeApiError } from './forge.client.ts';
import { READ, text, usernameOf, type Json } from './forge.entities.ts';
import { projectPathId, projectRef, projectRefLabel } from './forge.ids.ts';
import { forgePaging, pageOutput, pageResult, pagingInput } from './forge.paging.ts';
import { confirmationInput } from './tool.confirm.ts';
import { milestoneTools } from './milestones.tools.ts';
import { defineTool, type ToolContext, type ToolsetDefinition } from './tool.contract.ts';
import { quoted } from './tool.text.ts';

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

const releases = (ctx: ToolContext, project: string | number) => `/projects/${projectPathId(project, ctx.forgeUrl)}/releases`;
const tagNameInput = z.string().min(1).max(255).describe('Tag name of the release, e.g. v1.2.0');

const releaseSchema = z.object({
  tag_name: z.string(),
  name: text('Release name'),
  released_at: z.string(),
  upcoming_release: z.boolean(),
  author: z.string().optional().describe('Username'),
  commit_id: z.string().optional(),
  milestones: z.array(text('Milestone title')),
  web_url: z.string().optional(),
  description: text('Release notes').optional(),
  assets: z
    .array(z.object({ format: z.string(), url: z.string() }))
    .optional()
    .describe('Source archives'),
});

const releaseOut = (full: boolean) => (r: unknown) => {
  const v = r as Json;
  const commit = v.commit as Json | null | undefined;
  const author = usernameOf(v.author);
  const self = (v._links as Json | undefined)?.self;
  const sources = ((v.assets as Json | undefined)?.sources ?? []) as { format: string; url: string }[];
  return {
    tag_name: String(v.tag_name),
    name: String(v.name ?? v.tag_name),
    released_at: String(v.released_at),
    upcoming_release: v.upcoming_release === true,
    ...(author !== undefined ? { author } : {}),
    ...(commit && typeof commit.id === 'string' ? { commit_id: commit.id } : {}),
    milestones: ((v.milestones ?? []) as Json[]).map((m) => String(m.title)),
    ...(typeof self === 'string' ? { web_url: self } : {}),
    ...(full
      ? {
          description: typeof v.description === 'string' ? v.description : '',
          assets: sources.map((s) => ({ format: s.format, url: s.url })),
        }
      : {}),
  };
};

function releaseTools() {
  return [
    defineTool({
      name: 'list_releases',
      toolset: 'releases',
      title: 'List releases',
      description: 'Releases, newest first (by release date, or by creation with order_by), without their notes.',
      input: z.object({
        project_id: projectRef,
        order_by: z.enum(['released_at', 'created_at']).optional().describe('Order field (default released_at)'),
        sort: z.enum(['asc', 'desc']).optional().describe('Order direction (default desc)'),
        ...pagingInput,
      }),
      output: pageOutput(releaseSchema),
      annotations: READ,
      async run(args, ctx) {
        const query = { order_by: args.order_by, sort: args.sort, ...forgePaging(args) };
        return pageResult(await ctx.api.page(releases(ctx, args.project_id), ctx.token, query), releaseOut(false));
      },
    }),
    defineTool({
      name: 'get_release',
      toolset: 'releases',
      title: 'Get a release',
      description: 'One release by tag name, with its notes and source archives.',
      input: z.object({ project_id: projectRef, tag_name: tagNameInput }),
      output: releaseSchema,
      annotations: READ,
      async run(args, ctx) {
        return releaseOut(true)(await ctx.api.get(`${releases(ctx, args.project_id)}/${encodeURIComponent(args.tag_name)}`, ctx.token));
      },
    }),
    defineTool({
      name: 'save_release',
      toolset: 'releases',
      title: 'Create or update a release',
      description:
        'Creates the release of tag_name (the tag is created from ref when missing) or, when it exists, updates its name, notes, milestones or date.',
      input: z.object({
        project_id: projectRef,
        tag_name: tagNameInput,
        ref: z.string().min(1).max(255).optional().describe('Branch or SHA to tag when the tag does not exist yet'),
        tag_message: z.string().max(10_000).optional().describe('Annotation of a tag created here'),
        name: z.string().max(255).optional().describe('Release name (default: the tag name)'),
        description: z.string().max(1_000_000).optional().describe('Release notes (Markdown)'),
        milestones: z.array(z.string().max(255)).max(50).optional().describe('Milestone titles ([] removes all)'),
        released_at: z.string().max(40).optional().describe('Release date (ISO 8601; a future date makes an upcoming release)'),
      }),
      output: releaseSchema.extend({ created: z.boolean() }),
      annotations: WRITE,
      async run(args, ctx) {
        const path = `${releases(ctx, args.project_id)}/${encodeURIComponent(args.tag_name)}`;
        const exists = await ctx.api.get(path, ctx.token).then(
          () => true,
          (error: unknown) => {
            if (error instanceof ForgeApiError && error.type === 'not_found') return false;
            throw error;
          },
        );
        const body: Record<string, unknown> = {};
        for (const key of ['name', 'description', 'milestones', 'released_at'] as const) if (args[key] !== undefined) body[key] = args[key];
        if (exists) return { ...releaseOut(true)(await ctx.api.put(path, ctx.token, body)), created: false };
        for (const key of ['ref', 'tag_message'] as const) if (args[key] !== undefined) body[key] = args[key];
        body.tag_name = args.tag_name;
        return { ...releaseOut(true)(await ctx.api.post(releases(ctx, args.project_id), ctx.token, body)), created: true };
      },
    }),
    ...milestoneTools(),
    defineTool({
      name: 'list_tags',
      toolset: 'releases',
      title: 'List tags',
      description: 'Tags, newest first, with the commit each points at; optionally only names containing a text.',
      input: z.object({ project_id: projectRef, search: z.string().max(255).optional().describe('Name contains this'), ...pagingInput }),
      output: pageOutput(tagSchema),
      annotations: READ,
      async run(args, ctx) {
        const query = { search: args.search, ...forgePaging(args) };
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
          `Delete tag ${quoted(args.tag_name)} of ${projectRefLabel(args.project_id, ctx.forgeUrl)}, at ${tag.commit.id.slice(0, 8)} ${quoted(tag.commit.title)}.`,
        );
        await ctx.api.send('DELETE', url, ctx.token);
        return { deleted: true, tag_name: args.tag_name, commit_id: tag.commit.id };
      },
    }),
  ];
}

export const releasesToolset: ToolsetDefinition = {
  name: 'releases',
  description: 'Releases, milestones and tags (delete confirmed)',
  default: false,
  tools: releaseTools,
};
