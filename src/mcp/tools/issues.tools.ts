/**
 * The `issues` toolset (issue 18 item 1): list, get with related data, save (create or update) and notes.
 */
import { z } from 'zod';
import type { QueryValue } from './forge.client.ts';
import {
  detail,
  discussionOut,
  discussionSchema,
  firstPage,
  includeCursor,
  includeInput,
  issueOut,
  issueSchema,
  noteOut,
  noteSchema,
  READ,
  refOut,
  refSchema,
} from './forge.entities.ts';
import { optionalTarget, projectLabel, projectPathId, projectRef, requiredTarget } from './forge.ids.ts';
import { DEFAULT_PER_PAGE, decodeCursor, encodeCursor, forgePaging, pageOutput, pageResult, pagingInput } from './forge.paging.ts';
import { confirmationInput } from './tool.confirm.ts';
import { defineTool, ToolInputError, type ToolContext, type ToolsetDefinition } from './tool.contract.ts';
import { quickActionLines } from './tool.text.ts';

/** Refuses bodies with GitLab quick actions unless the operator allows them (issue 17 item 3). */
export function refuseQuickActions(allowed: boolean, ...bodies: (string | undefined)[]): void {
  if (allowed) return;
  const lines = bodies.flatMap((b) => quickActionLines(b ?? ''));
  if (lines.length > 0)
    throw new ToolInputError(
      `lines starting with "/" would run as GitLab quick actions and are refused (first: ${JSON.stringify(lines[0]?.slice(0, 40))}); indent or reword them`,
    );
}

const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true } as const;

const iso = z.string().max(40).optional();

/** The issue's path, `/projects/:id/issues[/:iid]`, for a project's `:id` segment (forge.ids.ts). */
const issuePath = (projectId: string, iid?: number) => `/projects/${projectId}/issues${iid === undefined ? '' : `/${iid}`}`;

/** Issue numbers of tools that read one: the field, or an issue's web URL given as project_id. */
const issueIid = z.number().int().positive().optional().describe('Issue number, or its URL as project_id');

/** Usernames to user ids (one lookup each, concurrently); an unknown username is a validation error. */
export async function userIdsOf(ctx: ToolContext, names: readonly string[]): Promise<number[]> {
  return Promise.all(
    names.map(async (name) => {
      const found = await ctx.api.get<{ id: number }[]>('/users', ctx.token, { username: name.replace(/^@/, '') });
      const id = found[0]?.id;
      if (id === undefined) throw new ToolInputError(`no forge user with the username ${JSON.stringify(name)}`);
      return id;
    }),
  );
}

/** One page of a related list (the first without `page`), as `{items, next_cursor, has_more}`. */
export async function related<T>(
  ctx: ToolContext,
  path: string,
  map: (item: unknown) => T,
  query: Record<string, QueryValue> = {},
  page: number | string = 1,
) {
  const answer = await ctx.api.page<unknown>(path, ctx.token, { per_page: DEFAULT_PER_PAGE, ...query, page });
  const next = answer.nextKeyset ?? answer.nextPage;
  return { items: answer.items.map(map), next_cursor: next === undefined ? null : encodeCursor(next), has_more: next !== undefined };
}

/**
 * The forge page of each include of a get tool: `include_cursor` (an include's `next_cursor`) pages the one list it
 * came from. A cursor does not say which list that is, so it must come with that include alone.
 */
export function includePages(include: readonly string[] | undefined, cursor: string | undefined, paged: readonly string[]) {
  if (cursor === undefined) return () => 1;
  const only = include?.length === 1 ? include[0] : undefined;
  if (only === undefined || !paged.includes(only))
    throw new ToolInputError(`include_cursor needs include with just the one list it came from (${paged.join(', ')})`);
  const page = decodeCursor(cursor);
  return (key: string) => (key === only ? page : 1);
}

const ISSUE_INCLUDES = ['notes', 'discussions', 'links', 'related_merge_requests'] as const;

function issueTools() {
  return [
    defineTool({
      name: 'list_issues',
      toolset: 'issues',
      title: 'List issues',
      description: 'Issues of a project by state, labels, people, milestone, text or dates, newest first.',
      input: z.object({
        project_id: projectRef,
        state: z.enum(['opened', 'closed', 'all']).optional().describe('Default all'),
        labels: z.string().max(500).optional().describe('Comma-separated, all required; None, Any'),
        assignee_username: z.string().max(255).optional().describe('Assignee'),
        author_username: z.string().max(255).optional().describe('Author'),
        milestone: z.string().max(255).optional().describe('Title; None, Any'),
        search: z.string().max(255).optional().describe('Text in title or description'),
        created_after: iso.describe('ISO 8601'),
        created_before: iso.describe('ISO 8601'),
        updated_after: iso.describe('ISO 8601'),
        updated_before: iso.describe('ISO 8601'),
        order_by: z.enum(['created_at', 'updated_at']).optional().describe('Default created_at'),
        sort: z.enum(['asc', 'desc']).optional().describe('Default desc'),
        detail,
        ...pagingInput,
      }),
      output: pageOutput(issueSchema),
      annotations: READ,
      async run(args, ctx) {
        const { project_id, detail: level, cursor, per_page, ...filters } = args;
        const query: Record<string, QueryValue> = { ...filters, ...forgePaging({ cursor, per_page }) };
        return pageResult(
          await ctx.api.page(issuePath(projectPathId(project_id, ctx.forgeUrl)), ctx.token, query),
          issueOut(level === 'full'),
        );
      },
    }),
    defineTool({
      name: 'get_issue',
      toolset: 'issues',
      title: 'Get an issue',
      description: 'One issue; include adds notes, discussions, links and related merge requests.',
      input: z.object({
        project_id: projectRef,
        issue_iid: issueIid,
        include: includeInput(ISSUE_INCLUDES),
        include_cursor: includeCursor,
      }),
      output: z.object({
        issue: issueSchema.describe('The issue'),
        notes: firstPage(noteSchema, 'Notes, oldest first'),
        discussions: firstPage(discussionSchema, 'Discussion threads'),
        links: z.array(refSchema).optional().describe('Linked issues'),
        related_merge_requests: firstPage(refSchema, 'Merge requests that mention or close it'),
      }),
      annotations: READ,
      async run(args, ctx) {
        const target = requiredTarget(args.project_id, ctx.forgeUrl, 'issue', 'issue_iid', args.issue_iid);
        const path = issuePath(target.project, target.value);
        const include = new Set(args.include ?? []);
        const page = includePages(args.include, args.include_cursor, ['notes', 'discussions', 'related_merge_requests']);
        const [issue, notes, discussions, links, mergeRequests] = await Promise.all([
          ctx.api.get(path, ctx.token),
          include.has('notes') ? related(ctx, `${path}/notes`, noteOut, { sort: 'asc' }, page('notes')) : undefined,
          include.has('discussions') ? related(ctx, `${path}/discussions`, discussionOut, {}, page('discussions')) : undefined,
          include.has('links') ? ctx.api.get<unknown[]>(`${path}/links`, ctx.token) : undefined,
          include.has('related_merge_requests')
            ? related(ctx, `${path}/related_merge_requests`, refOut, {}, page('related_merge_requests'))
            : undefined,
        ]);
        return {
          issue: issueOut(true)(issue),
          ...(notes ? { notes } : {}),
          ...(discussions ? { discussions } : {}),
          ...(links ? { links: links.map(refOut) } : {}),
          ...(mergeRequests ? { related_merge_requests: mergeRequests } : {}),
        };
      },
    }),
    defineTool({
      name: 'save_issue',
      aliases: ['create_issue'],
      toolset: 'issues',
      title: 'Save an issue',
      description: 'Creates an issue without issue_iid, else updates it; making one public asks the user.',
      input: z.object({
        project_id: projectRef,
        issue_iid: z.number().int().positive().optional().describe('Omit to create'),
        title: z.string().min(1).max(255).optional().describe('Needed to create'),
        description: z.string().max(100_000).optional().describe('Markdown'),
        labels: z.string().max(500).optional().describe('Comma-separated; replaces all'),
        add_labels: z.array(z.string().max(255)).max(50).optional().describe('Label names'),
        remove_labels: z.array(z.string().max(255)).max(50).optional().describe('Label names'),
        assignee_usernames: z.array(z.string().max(255)).max(20).optional().describe('Usernames; replaces all'),
        state_event: z.enum(['close', 'reopen']).optional().describe('Updates only'),
        confidential: z.boolean().optional().describe('Members only'),
        ...confirmationInput,
      }),
      output: issueSchema,
      annotations: WRITE,
      confirms: true,
      async run(args, ctx) {
        refuseQuickActions(ctx.allowQuickActions, args.title, args.description);
        const target = optionalTarget(args.project_id, ctx.forgeUrl, 'issue', 'issue_iid', args.issue_iid);
        const body: Record<string, unknown> = {};
        for (const key of ['title', 'description', 'labels', 'confidential'] as const) if (args[key] !== undefined) body[key] = args[key];
        if (args.add_labels) body.add_labels = args.add_labels.join(',');
        if (args.remove_labels) body.remove_labels = args.remove_labels.join(',');
        if (args.assignee_usernames) body.assignee_ids = await userIdsOf(ctx, args.assignee_usernames);
        if (target.value === undefined) {
          if (args.title === undefined) throw new ToolInputError('title is required to create an issue (or give issue_iid to update one)');
          if (args.state_event !== undefined || args.add_labels || args.remove_labels)
            throw new ToolInputError('state_event, add_labels and remove_labels apply to updates only (give issue_iid)');
          return issueOut(true)(await ctx.api.post(issuePath(target.project), ctx.token, body));
        }
        if (args.state_event !== undefined) body.state_event = args.state_event;
        if (Object.keys(body).length === 0) throw new ToolInputError('nothing to change: give at least one field to update');
        const path = issuePath(target.project, target.value);
        if (args.confidential === false) {
          const current = await ctx.api.get<{ confidential?: unknown }>(path, ctx.token);
          if (current.confidential === true)
            await ctx.confirm(
              `Make confidential issue #${target.value} of ${projectLabel(target.project)} visible to everyone who can see the project`,
            );
        }
        return issueOut(true)(await ctx.api.put(path, ctx.token, body));
      },
    }),
    defineTool({
      name: 'save_issue_note',
      toolset: 'issues',
      title: 'Comment on an issue',
      description: 'Comments on an issue, or replies in one of its discussions.',
      input: z.object({
        project_id: projectRef,
        issue_iid: issueIid,
        body: z.string().min(1).max(1_000_000).describe('Markdown'),
        discussion_id: z
          .string()
          .regex(/^[0-9a-f]{40}$/)
          .optional()
          .describe('Reply in this thread'),
      }),
      output: noteSchema,
      annotations: WRITE,
      async run(args, ctx) {
        refuseQuickActions(ctx.allowQuickActions, args.body);
        const issue = requiredTarget(args.project_id, ctx.forgeUrl, 'issue', 'issue_iid', args.issue_iid);
        const path = issuePath(issue.project, issue.value);
        const target = args.discussion_id === undefined ? `${path}/notes` : `${path}/discussions/${args.discussion_id}/notes`;
        return noteOut(await ctx.api.post(target, ctx.token, { body: args.body }));
      },
    }),
  ];
}

export const issuesToolset: ToolsetDefinition = {
  name: 'issues',
  description: 'Issues: list, read with notes and links, create and update, comment',
  default: true,
  tools: issueTools,
};
