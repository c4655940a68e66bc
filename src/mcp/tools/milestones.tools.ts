/**
 * Milestones, part of the opt-in `releases` toolset (issue 18 item 1): listed with GitLab's state and search
 * filters, and saved (created without `milestone_id`, updated, closed or reopened with it).
 */
import { z } from 'zod';
import { READ, text, type Json } from './forge.entities.ts';
import { projectPathId, projectRef } from './forge.ids.ts';
import { forgePaging, pageOutput, pageResult, pagingInput } from './forge.paging.ts';
import { defineTool, ToolInputError, type ToolContext } from './tool.contract.ts';

const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true } as const;
const milestones = (ctx: ToolContext, project: string | number) => `/projects/${projectPathId(project, ctx.forgeUrl)}/milestones`;
const date = z
  .string()
  .regex(/^(\d{4}-\d{2}-\d{2})?$/)
  .optional();

const milestoneSchema = z.object({
  id: z.number().int(),
  iid: z.number().int(),
  title: text('Milestone title'),
  state: z.string().describe('active or closed'),
  start_date: z.string().nullable(),
  due_date: z.string().nullable(),
  expired: z.boolean(),
  description: text('Description').optional(),
  web_url: z.string().optional(),
});

function milestoneOut(m: unknown) {
  const v = m as Json;
  return {
    id: Number(v.id),
    iid: Number(v.iid),
    title: String(v.title),
    state: String(v.state),
    start_date: typeof v.start_date === 'string' ? v.start_date : null,
    due_date: typeof v.due_date === 'string' ? v.due_date : null,
    expired: v.expired === true,
    ...(typeof v.description === 'string' && v.description !== '' ? { description: v.description } : {}),
    ...(typeof v.web_url === 'string' ? { web_url: v.web_url } : {}),
  };
}

export function milestoneTools() {
  return [
    defineTool({
      name: 'list_milestones',
      toolset: 'releases',
      title: 'List milestones',
      description:
        'A project’s milestones by due date, optionally only active or closed ones, or those whose title or description has a text.',
      input: z.object({
        project_id: projectRef,
        state: z.enum(['active', 'closed']).optional().describe('Only active or closed milestones'),
        search: z.string().max(255).optional().describe('Title or description contains this'),
        ...pagingInput,
      }),
      output: pageOutput(milestoneSchema),
      annotations: READ,
      async run(args, ctx) {
        const query = { state: args.state, search: args.search, ...forgePaging(args) };
        return pageResult(await ctx.api.page(milestones(ctx, args.project_id), ctx.token, query), milestoneOut);
      },
    }),
    defineTool({
      name: 'save_milestone',
      toolset: 'releases',
      title: 'Create or update a milestone',
      description: 'Creates a milestone (title required) without milestone_id; with it, updates, closes or reopens that milestone.',
      input: z.object({
        project_id: projectRef,
        milestone_id: z.number().int().positive().optional().describe('Id (not iid) of the milestone to update; omit to create'),
        title: z.string().min(1).max(255).optional().describe('Title (required to create)'),
        description: z.string().max(100_000).optional().describe('Description'),
        start_date: date.describe('YYYY-MM-DD; empty clears it'),
        due_date: date.describe('YYYY-MM-DD; empty clears it'),
        state_event: z.enum(['close', 'activate']).optional().describe('Close or reopen (update only)'),
      }),
      output: milestoneSchema.extend({ created: z.boolean() }),
      annotations: WRITE,
      async run(args, ctx) {
        const body: Record<string, unknown> = {};
        for (const key of ['title', 'description', 'start_date', 'due_date', 'state_event'] as const)
          if (args[key] !== undefined) body[key] = args[key];
        if (args.milestone_id === undefined) {
          if (args.title === undefined) throw new ToolInputError('to create a milestone give its title');
          if (args.state_event !== undefined) throw new ToolInputError('state_event applies to an existing milestone: give milestone_id');
          return { ...milestoneOut(await ctx.api.post(milestones(ctx, args.project_id), ctx.token, body)), created: true };
        }
        if (Object.keys(body).length === 0) throw new ToolInputError('nothing to change: give at least one field to update');
        const path = `${milestones(ctx, args.project_id)}/${args.milestone_id}`;
        return { ...milestoneOut(await ctx.api.put(path, ctx.token, body)), created: false };
      },
    }),
  ];
}
