/**
 * The opt-in `wiki` toolset (issue 18 item 1): a project's wiki pages listed, read, created or updated, and deleted
 * after the user confirms (item 2). Names and parameters follow the community GitLab MCP servers
 * (`list_wiki_pages`, `get_wiki_page`, `slug`, `with_content`); create and update are one `save_wiki_page`.
 */
import { z } from 'zod';
import { READ, text, type Json } from './forge.entities.ts';
import { projectPathId, projectRef, projectRefLabel } from './forge.ids.ts';
import { forgePaging, pageOutput, pageResult, pagingInput } from './forge.paging.ts';
import { confirmationInput } from './tool.confirm.ts';
import { defineTool, ToolInputError, type ToolContext, type ToolsetDefinition } from './tool.contract.ts';
import { quoted } from './tool.text.ts';

const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true } as const;
const FORMATS = ['markdown', 'rdoc', 'asciidoc', 'org'] as const;

const wikis = (ctx: ToolContext, project: string | number) => `/projects/${projectPathId(project, ctx.forgeUrl)}/wikis`;
const pagePath = (ctx: ToolContext, project: string | number, slug: string) => `${wikis(ctx, project)}/${encodeURIComponent(slug)}`;
const slugInput = z.string().min(1).max(500).describe('Page slug, e.g. home or ops/deploy');

const pageSchema = z.object({
  slug: z.string(),
  title: text('Page title'),
  format: z.string(),
  content: text('Page content').optional(),
});

function pageOut(value: unknown) {
  const v = value as Json;
  return {
    slug: String(v.slug),
    title: String(v.title),
    format: String(v.format),
    ...(typeof v.content === 'string' ? { content: v.content } : {}),
  };
}

function wikiTools() {
  return [
    defineTool({
      name: 'list_wiki_pages',
      toolset: 'wiki',
      title: 'List wiki pages',
      description: 'The wiki pages of a project (slug, title, format); with_content adds each page’s text.',
      input: z.object({
        project_id: projectRef,
        with_content: z.boolean().optional().describe('Include each page’s content (default false)'),
        ...pagingInput,
      }),
      output: pageOutput(pageSchema),
      annotations: READ,
      async run(args, ctx) {
        const query = { with_content: args.with_content ? 1 : undefined, ...forgePaging(args) };
        return pageResult(await ctx.api.page(wikis(ctx, args.project_id), ctx.token, query), pageOut);
      },
    }),
    defineTool({
      name: 'get_wiki_page',
      toolset: 'wiki',
      title: 'Get a wiki page',
      description: 'One wiki page with its content, by slug.',
      input: z.object({ project_id: projectRef, slug: slugInput }),
      output: pageSchema,
      annotations: READ,
      async run(args, ctx) {
        return pageOut(await ctx.api.get(pagePath(ctx, args.project_id, args.slug), ctx.token));
      },
    }),
    defineTool({
      name: 'save_wiki_page',
      toolset: 'wiki',
      title: 'Create or update a wiki page',
      description: 'Creates a page (title and content) when no slug is given; updates the page at slug otherwise (a new title renames it).',
      input: z.object({
        project_id: projectRef,
        slug: slugInput.optional().describe('Slug of the page to update; omit to create'),
        title: z.string().min(1).max(255).optional().describe('Page title (required to create)'),
        content: z.string().max(1_000_000).optional().describe('Page content (required to create)'),
        format: z.enum(FORMATS).optional().describe('Markup format (default markdown)'),
      }),
      output: pageSchema.extend({ created: z.boolean() }),
      annotations: WRITE,
      async run(args, ctx) {
        const body: Record<string, unknown> = {};
        for (const key of ['title', 'content', 'format'] as const) if (args[key] !== undefined) body[key] = args[key];
        if (args.slug === undefined) {
          if (args.title === undefined || args.content === undefined) throw new ToolInputError('to create a page give title and content');
          return { ...pageOut(await ctx.api.post(wikis(ctx, args.project_id), ctx.token, body)), created: true };
        }
        if (Object.keys(body).length === 0) throw new ToolInputError('nothing to change: give title, content or format');
        return { ...pageOut(await ctx.api.put(pagePath(ctx, args.project_id, args.slug), ctx.token, body)), created: false };
      },
    }),
    defineTool({
      name: 'delete_wiki_page',
      toolset: 'wiki',
      title: 'Delete a wiki page',
      description: 'Deletes a wiki page after the user confirms.',
      input: z.object({ project_id: projectRef, slug: slugInput, ...confirmationInput }),
      output: z.object({ deleted: z.boolean(), slug: z.string(), title: text('Title of the deleted page') }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
      confirms: true,
      async run(args, ctx) {
        const path = pagePath(ctx, args.project_id, args.slug);
        const page = pageOut(await ctx.api.get(path, ctx.token));
        const lines = (page.content ?? '').split('\n').length;
        await ctx.confirm(
          `Delete wiki page ${quoted(page.title)} (${quoted(args.slug)}, ${lines} lines) of ${projectRefLabel(args.project_id, ctx.forgeUrl)}.`,
        );
        await ctx.api.send('DELETE', path, ctx.token);
        return { deleted: true, slug: args.slug, title: page.title };
      },
    }),
  ];
}

export const wikiToolset: ToolsetDefinition = {
  name: 'wiki',
  description: 'Wiki: pages listed, read, saved, deleted (confirmed)',
  default: false,
  tools: wikiTools,
};
