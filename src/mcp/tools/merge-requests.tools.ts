/**
 * The `merge_requests` toolset (issue 18 item 1): list, get with related data, diffs, save, review, merge, rebase.
 */
import { z } from 'zod';
import { ForgeApiError, type QueryValue } from './forge.client.ts';
import {
  detail,
  discussionOut,
  discussionSchema,
  firstPage,
  includeCursor,
  includeInput,
  mergeRequestOut,
  mergeRequestSchema,
  noteOut,
  noteSchema,
  pick,
  READ,
  text,
  usernameOf,
} from './forge.entities.ts';
import { optionalTarget, projectLabel, projectPathId, projectRef, requiredTarget } from './forge.ids.ts';
import { DEFAULT_PER_PAGE, forgePaging, pageOutput, pageResult, pagingInput } from './forge.paging.ts';
import { includePages, refuseQuickActions, related, userIdsOf } from './issues.tools.ts';
import { submitReview } from './review.drafts.ts';
import { diffPositions, type DiffRefs } from './review.positions.ts';
import { confirmationInput } from './tool.confirm.ts';
import { defineTool, ToolInputError, type ToolContext, type ToolsetDefinition } from './tool.contract.ts';
import { quoted } from './tool.text.ts';

const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true } as const;
const IDEMPOTENT_WRITE = { ...WRITE, idempotentHint: true } as const;

/** Merge request numbers of tools that act on one: the field, or a merge request's web URL given as project_id. */
const iid = z.number().int().positive().optional().describe('Merge request number, or its URL as project_id');

/** `/projects/:id/merge_requests[/:iid]` for a project's `:id` segment (forge.ids.ts). */
const mrPath = (projectId: string, mrIid?: number) => `/projects/${projectId}/merge_requests${mrIid === undefined ? '' : `/${mrIid}`}`;

/** The path of the merge request a tool acts on: its number from the field or from project_id's URL. */
const mergeRequestPath = (ctx: ToolContext, args: { project_id: string | number; merge_request_iid?: number | undefined }) => {
  const target = requiredTarget(args.project_id, ctx.forgeUrl, 'merge_request', 'merge_request_iid', args.merge_request_iid);
  return mrPath(target.project, target.value);
};

/**
 * Added and removed lines of a unified diff: the first character of each line, found from one newline to the next
 * (splitting into line strings was a third of the diff window tool's own time, 100 files of 14 lines).
 */
function lineStats(diff: string): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  for (let start = 0; start < diff.length;) {
    const first = diff.charCodeAt(start);
    if (first === 43)
      additions += 1; // '+'
    else if (first === 45) deletions += 1; // '-'
    const newline = diff.indexOf('\n', start);
    if (newline === -1) break;
    start = newline + 1;
  }
  return { additions, deletions };
}

const diffFlags = ['new_file', 'renamed_file', 'deleted_file', 'too_large', 'collapsed'] as const;

const diffSummarySchema = z.object({
  old_path: z.string().describe('Path before'),
  new_path: z.string().describe('Path after'),
  additions: z.number().int().describe('Added lines'),
  deletions: z.number().int().describe('Removed lines'),
  new_file: z.boolean().optional().describe('Added file'),
  renamed_file: z.boolean().optional().describe('Renamed file'),
  deleted_file: z.boolean().optional().describe('Deleted file'),
  too_large: z.boolean().optional().describe('Over the forge’s diff limits: no patch text'),
  collapsed: z.boolean().optional().describe('Collapsed by the forge: no patch text'),
});

type DiffSummary = z.infer<typeof diffSummarySchema>;

/** A changed file's summary; one object built in place (the diff window makes a hundred per call). */
const diffSummaryOut = (d: unknown): DiffSummary => {
  const source = (d ?? {}) as { old_path?: string; new_path?: string; diff?: string } & Partial<
    Record<(typeof diffFlags)[number], unknown>
  >;
  const { additions, deletions } = lineStats(source.diff ?? '');
  const out: DiffSummary = { old_path: source.old_path ?? '', new_path: source.new_path ?? '', additions, deletions };
  for (const flag of diffFlags) if (source[flag] === true) out[flag] = true;
  return out;
};

const commitOut = (c: unknown) => pick(c, ['id', 'short_id', 'title', 'author_name', 'created_at']) as { id: string };

/** `*` matches within a path segment, `**` across segments. */
function pathMatcher(globs: readonly string[]): (path: string) => boolean {
  const patterns = globs.map(
    (g) =>
      new RegExp(
        `^${g
          .split('**')
          .map((part) =>
            part
              .replace(/[.+^${}()|[\]\\]/g, '\\$&')
              .replace(/\*/g, '[^/]*')
              .replace(/\?/g, '[^/]'),
          )
          .join('.*')}$`,
      ),
  );
  return (path) => patterns.some((p) => p.test(path));
}

/** A diff cursor: the forge page and the file offset within it (a byte cap may end a window mid-page). */
function encodeDiffCursor(page: number, offset: number): string {
  return Buffer.from(JSON.stringify({ p: page, o: offset })).toString('base64url');
}
function decodeDiffCursor(cursor: string | undefined): { page: number; offset: number } {
  if (cursor === undefined || cursor === '') return { page: 1, offset: 0 };
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { p?: unknown; o?: unknown };
    if (typeof v.p === 'number' && Number.isInteger(v.p) && v.p >= 1 && typeof v.o === 'number' && Number.isInteger(v.o) && v.o >= 0)
      return { page: v.p, offset: v.o };
  } catch {
    // fall through
  }
  throw new ToolInputError('cursor is not a next_cursor this server returned; omit it to start from the first file');
}

const MR_INCLUDES = ['notes', 'discussions', 'diffs', 'commits', 'pipelines', 'approvals', 'versions'] as const;

const REVIEW_METHODS = [
  'create_note',
  'reply_discussion',
  'create_diff_note',
  'resolve_discussion',
  'submit_review',
  'approve',
  'unapprove',
] as const;

/** Which parameters each review method takes (others are refused, as GitLab's tool does). */
const METHOD_PARAMS: Record<(typeof REVIEW_METHODS)[number], readonly string[]> = {
  create_note: ['body'],
  reply_discussion: ['body', 'discussion_id'],
  create_diff_note: ['body', 'new_path', 'old_path', 'new_line', 'old_line'],
  resolve_discussion: ['discussion_id', 'resolved'],
  submit_review: ['comments', 'summary'],
  approve: ['sha'],
  unapprove: [],
};
const METHOD_OPTIONAL = new Set(['old_path', 'new_path', 'new_line', 'old_line', 'resolved', 'summary', 'sha']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The merge request, read again while the forge is still computing its mergeability (`checking`), at most 5 times. */
async function settledMergeRequest(ctx: ToolContext, path: string): Promise<Record<string, unknown>> {
  let mr = await ctx.api.get<Record<string, unknown>>(path, ctx.token);
  for (let i = 0; i < 5 && (mr.detailed_merge_status === 'checking' || mr.merge_status === 'checking'); i += 1) {
    await sleep(100 * 2 ** i);
    mr = await ctx.api.get<Record<string, unknown>>(path, ctx.token);
  }
  return mr;
}

function mergeRequestTools() {
  return [
    defineTool({
      name: 'list_merge_requests',
      toolset: 'merge_requests',
      title: 'List merge requests',
      description: 'Merge requests of a project by state, labels, people, branches, text or date, newest first.',
      input: z.object({
        project_id: projectRef,
        state: z.enum(['opened', 'closed', 'merged', 'locked', 'all']).optional().describe('Default all'),
        labels: z.string().max(500).optional().describe('Comma-separated, all required'),
        author_username: z.string().max(255).optional().describe('Author'),
        assignee_username: z.string().max(255).optional().describe('Assignee'),
        reviewer_username: z.string().max(255).optional().describe('Reviewer'),
        source_branch: z.string().max(255).optional().describe('Branch'),
        target_branch: z.string().max(255).optional().describe('Branch'),
        search: z.string().max(255).optional().describe('Text in title or description'),
        updated_after: z.string().max(40).optional().describe('ISO 8601'),
        detail,
        ...pagingInput,
      }),
      output: pageOutput(mergeRequestSchema),
      annotations: READ,
      async run(args, ctx) {
        const { project_id, detail: level, cursor, per_page, ...filters } = args;
        const query: Record<string, QueryValue> = { ...filters, ...forgePaging({ cursor, per_page }) };
        return pageResult(
          await ctx.api.page(mrPath(projectPathId(project_id, ctx.forgeUrl)), ctx.token, query),
          mergeRequestOut(level === 'full'),
        );
      },
    }),
    defineTool({
      name: 'get_merge_request',
      toolset: 'merge_requests',
      title: 'Get a merge request',
      description: 'One merge request with diff_refs, sha and merge status; include adds related data, fetched at once.',
      input: z.object({
        project_id: projectRef,
        merge_request_iid: iid,
        include: includeInput(MR_INCLUDES),
        include_cursor: includeCursor,
      }),
      output: z.object({
        merge_request: mergeRequestSchema
          .extend({
            changes_count: z.string().optional().describe('Changed files ("1000+" above the limit)'),
            diff_refs: z
              .object({ base_sha: z.string(), head_sha: z.string(), start_sha: z.string() })
              .partial()
              .optional()
              .describe('SHAs of the latest version (diff note positions use them)'),
          })
          .describe('The merge request'),
        notes: firstPage(noteSchema, 'Notes, oldest first'),
        discussions: firstPage(discussionSchema, 'Discussion threads'),
        diffs: firstPage(diffSummarySchema, 'Changed files with line counts (patch text: get_merge_request_diffs)'),
        commits: firstPage(
          z.object({
            id: z.string().describe('SHA'),
            short_id: z.string().optional().describe('Short SHA'),
            title: text('Title').optional(),
          }),
          'Commits',
        ),
        pipelines: firstPage(
          z.object({
            id: z.number().int().describe('Pipeline id'),
            status: z.string().optional().describe('Status'),
            sha: z.string().optional().describe('SHA'),
          }),
          'Pipelines',
        ),
        approvals: z
          .object({
            approved: z.boolean().optional().describe('Approved'),
            approved_by: z.array(z.string()).describe('Approver usernames'),
            approvals_left: z.number().int().optional().describe('Approvals still needed'),
          })
          .optional()
          .describe('Approvals'),
        versions: firstPage(
          z.object({
            id: z.number().int().describe('Version id'),
            head_commit_sha: z.string().optional().describe('Head SHA'),
            created_at: z.string().optional().describe('Created'),
          }),
          'Diff versions, newest first',
        ),
      }),
      annotations: READ,
      async run(args, ctx) {
        const path = mergeRequestPath(ctx, args);
        const include = new Set(args.include ?? []);
        const when = <T>(key: (typeof MR_INCLUDES)[number], fetch: () => Promise<T>) => (include.has(key) ? fetch() : undefined);
        const page = includePages(args.include, args.include_cursor, ['notes', 'discussions', 'diffs', 'commits', 'pipelines', 'versions']);
        const [mr, notes, discussions, diffs, commits, pipelines, approvals, versions] = await Promise.all([
          ctx.api.get(path, ctx.token),
          when('notes', () => related(ctx, `${path}/notes`, noteOut, { sort: 'asc' }, page('notes'))),
          when('discussions', () => related(ctx, `${path}/discussions`, discussionOut, {}, page('discussions'))),
          when('diffs', () => related(ctx, `${path}/diffs`, diffSummaryOut, { per_page: 100 }, page('diffs'))),
          when('commits', () => related(ctx, `${path}/commits`, commitOut, {}, page('commits'))),
          when('pipelines', () =>
            related(ctx, `${path}/pipelines`, (p) => pick(p, ['id', 'status', 'sha']) as { id: number }, {}, page('pipelines')),
          ),
          when('approvals', () =>
            ctx.api.get<{ approved?: boolean; approvals_left?: number; approved_by?: { user?: unknown }[] }>(
              `${path}/approvals`,
              ctx.token,
            ),
          ),
          when('versions', () =>
            related(
              ctx,
              `${path}/versions`,
              (v) => pick(v, ['id', 'head_commit_sha', 'created_at']) as { id: number },
              {},
              page('versions'),
            ),
          ),
        ]);
        return {
          merge_request: { ...mergeRequestOut(true)(mr), ...pick(mr, ['changes_count', 'diff_refs']) },
          ...(notes ? { notes } : {}),
          ...(discussions ? { discussions } : {}),
          ...(diffs ? { diffs } : {}),
          ...(commits ? { commits } : {}),
          ...(pipelines ? { pipelines } : {}),
          ...(approvals
            ? {
                approvals: {
                  ...pick(approvals, ['approved', 'approvals_left']),
                  approved_by: (approvals.approved_by ?? []).map((a) => usernameOf(a.user)).filter((u): u is string => u !== undefined),
                },
              }
            : {}),
          ...(versions ? { versions } : {}),
        };
      },
    }),
    defineTool({
      name: 'get_merge_request_diffs',
      toolset: 'merge_requests',
      title: 'Merge request diff',
      description: 'Patch text per file, filtered by path, capped in bytes; flags too_large and collapsed.',
      input: z.object({
        project_id: projectRef,
        merge_request_iid: iid,
        paths: z.array(z.string().min(1).max(500)).max(50).optional().describe('Globs (*, **)'),
        max_bytes: z.number().int().min(1000).max(500_000).optional().describe('Per answer (default 100000)'),
        cursor: pagingInput.cursor,
        per_page: z.number().int().min(1).max(100).optional().describe('Files per forge page, 1–100 (default 20)'),
      }),
      output: z.object({
        items: z
          .array(
            diffSummarySchema.extend({
              diff: text('Unified diff').optional(),
              diff_truncated: z.boolean().optional().describe('This file’s patch was cut at max_bytes'),
            }),
          )
          .describe('Changed files, in order'),
        next_cursor: z.string().nullable().describe('Pass as cursor for the next files; null at the end'),
        has_more: z.boolean().describe('More files follow'),
        truncated: z.boolean().describe('This answer stopped at max_bytes before the forge page ended'),
        total: z.number().int().optional().describe('Changed files in all, when the forge reports it'),
      }),
      annotations: READ,
      async run(args, ctx) {
        const { page: forgePage, offset } = decodeDiffCursor(args.cursor);
        const perPage = args.per_page ?? DEFAULT_PER_PAGE;
        const cap = args.max_bytes ?? 100_000;
        const match = args.paths ? pathMatcher(args.paths) : () => true;
        const page = await ctx.api.page<{ old_path?: string; new_path?: string; diff?: string }>(
          `${mergeRequestPath(ctx, args)}/diffs`,
          ctx.token,
          { page: forgePage, per_page: perPage },
        );
        const items: (DiffSummary & { diff?: string; diff_truncated?: boolean })[] = [];
        let used = 0;
        let stoppedAt: number | undefined;
        for (let i = offset; i < page.items.length; i += 1) {
          const file = page.items[i];
          if (!file || !(match(file.new_path ?? '') || match(file.old_path ?? ''))) continue;
          const diff = file.diff ?? '';
          const bytes = Buffer.byteLength(diff);
          if (used + bytes > cap && items.length > 0) {
            stoppedAt = i;
            break;
          }
          const cut = bytes > cap;
          const item: DiffSummary & { diff?: string; diff_truncated?: boolean } = diffSummaryOut(file);
          if (diff !== '') item.diff = cut ? Buffer.from(diff).subarray(0, cap).toString('utf8') : diff;
          if (cut) item.diff_truncated = true;
          items.push(item);
          used += Math.min(bytes, cap);
        }
        const next =
          stoppedAt !== undefined
            ? encodeDiffCursor(forgePage, stoppedAt)
            : page.nextPage !== undefined
              ? encodeDiffCursor(page.nextPage, 0)
              : null;
        return {
          items,
          next_cursor: next,
          has_more: next !== null,
          truncated: stoppedAt !== undefined,
          ...(page.total !== undefined ? { total: page.total } : {}),
        };
      },
    }),
    defineTool({
      name: 'save_merge_request',
      toolset: 'merge_requests',
      title: 'Save a merge request',
      description: 'Creates a merge request without merge_request_iid, else updates, closes or rebases it.',
      input: z.object({
        project_id: projectRef,
        merge_request_iid: z.number().int().positive().optional().describe('Omit to create'),
        source_branch: z.string().min(1).max(255).optional().describe('To create'),
        target_branch: z.string().min(1).max(255).optional().describe('Branch'),
        title: z.string().min(1).max(255).optional().describe('Needed to create'),
        description: z.string().max(1_048_576).optional().describe('Markdown'),
        labels: z.string().max(500).optional().describe('Comma-separated; replaces all'),
        add_labels: z.array(z.string().max(255)).max(50).optional().describe('Label names'),
        remove_labels: z.array(z.string().max(255)).max(50).optional().describe('Label names'),
        assignee_usernames: z.array(z.string().max(255)).max(20).optional().describe('Usernames; replaces all'),
        reviewer_usernames: z.array(z.string().max(255)).max(20).optional().describe('Usernames; replaces all'),
        state_event: z.enum(['close', 'reopen']).optional().describe('Updates only'),
        // Rebasing is one more method of the merge request (one entry of the 32 KB list fewer than its own tool).
        rebase: z.boolean().optional().describe('Updates only: rebase onto target'),
      }),
      output: mergeRequestSchema.extend({ rebase_in_progress: z.boolean().optional() }),
      annotations: WRITE,
      async run(args, ctx) {
        refuseQuickActions(ctx.allowQuickActions, args.title, args.description);
        const target = optionalTarget(args.project_id, ctx.forgeUrl, 'merge_request', 'merge_request_iid', args.merge_request_iid);
        const body: Record<string, unknown> = {};
        for (const key of ['title', 'description', 'labels', 'target_branch'] as const) if (args[key] !== undefined) body[key] = args[key];
        if (args.add_labels) body.add_labels = args.add_labels.join(',');
        if (args.remove_labels) body.remove_labels = args.remove_labels.join(',');
        const [assignees, reviewers] = await Promise.all([
          args.assignee_usernames ? userIdsOf(ctx, args.assignee_usernames) : undefined,
          args.reviewer_usernames ? userIdsOf(ctx, args.reviewer_usernames) : undefined,
        ]);
        if (assignees) body.assignee_ids = assignees;
        if (reviewers) body.reviewer_ids = reviewers;
        if (target.value === undefined) {
          if (args.source_branch === undefined || args.target_branch === undefined || args.title === undefined)
            throw new ToolInputError(
              'source_branch, target_branch and title are required to create a merge request (or give merge_request_iid)',
            );
          if (args.state_event !== undefined || args.add_labels || args.remove_labels || args.rebase !== undefined)
            throw new ToolInputError('state_event, add_labels, remove_labels and rebase apply to updates only (give merge_request_iid)');
          body.source_branch = args.source_branch;
          return mergeRequestOut(true)(await ctx.api.post(mrPath(target.project), ctx.token, body));
        }
        if (args.source_branch !== undefined) throw new ToolInputError('source_branch cannot change on an existing merge request');
        if (args.state_event !== undefined) body.state_event = args.state_event;
        const path = mrPath(target.project, target.value);
        if (args.rebase === true) {
          // The update first, so a rebase of a merge request being retargeted goes onto the new target.
          if (Object.keys(body).length > 0) await ctx.api.put(path, ctx.token, body);
          const answer = await ctx.api.put<{ rebase_in_progress?: boolean }>(`${path}/rebase`, ctx.token, {});
          return { ...mergeRequestOut(true)(await ctx.api.get(path, ctx.token)), rebase_in_progress: answer.rebase_in_progress === true };
        }
        if (Object.keys(body).length === 0) throw new ToolInputError('nothing to change: give at least one field to update');
        return mergeRequestOut(true)(await ctx.api.put(path, ctx.token, body));
      },
    }),
    defineTool({
      name: 'save_merge_request_review',
      toolset: 'merge_requests',
      title: 'Review a merge request',
      description: 'One review step by method: comment (on a line), reply, resolve, publish up to 20 comments, approve.',
      input: z.object({
        project_id: projectRef,
        merge_request_iid: iid,
        method: z.enum(REVIEW_METHODS).describe('Review step'),
        body: z.string().min(1).max(1_000_000).optional().describe('Markdown'),
        discussion_id: z
          .string()
          .regex(/^[0-9a-f]{40}$/)
          .optional()
          .describe('Thread id'),
        new_path: z.string().max(1000).optional().describe('File after'),
        old_path: z.string().max(1000).optional().describe('File before'),
        new_line: z.number().int().positive().optional().describe('New-file line (added/unchanged)'),
        old_line: z.number().int().positive().optional().describe('Old-file line (removed/unchanged)'),
        resolved: z.boolean().optional().describe('Default true'),
        comments: z
          .array(
            z.object({
              // As the fields of create_diff_note, described there once.
              body: z.string().min(1).max(100_000),
              new_path: z.string().max(1000).optional(),
              old_path: z.string().max(1000).optional(),
              new_line: z.number().int().positive().optional(),
              old_line: z.number().int().positive().optional(),
            }),
          )
          .min(1)
          .max(20)
          .optional()
          .describe('submit_review: body, paths and lines as above'),
        summary: z.string().max(100_000).optional().describe('submit_review: overall comment'),
        sha: z
          .string()
          .regex(/^[0-9a-f]{7,64}$/)
          .optional()
          .describe('approve: head guard'),
      }),
      output: z.object({
        method: z.string().describe('The step done'),
        note: noteSchema.optional().describe('The note written'),
        discussion: discussionSchema.optional().describe('The thread written or resolved'),
        published: z.number().int().optional().describe('submit_review: comments published'),
        approved: z.boolean().optional().describe('approve/unapprove: whether it is approved now'),
        diff_head_sha: z.string().optional().describe('The head SHA the step saw'),
      }),
      annotations: WRITE,
      async run(args, ctx) {
        const allowed = METHOD_PARAMS[args.method];
        const given = [
          'body',
          'discussion_id',
          'new_path',
          'old_path',
          'new_line',
          'old_line',
          'resolved',
          'comments',
          'summary',
          'sha',
        ].filter((k) => args[k as keyof typeof args] !== undefined);
        const foreign = given.filter((k) => !allowed.includes(k));
        if (foreign.length > 0) throw new ToolInputError(`${args.method} does not take ${foreign.join(', ')}`);
        const missing = allowed.filter((k) => !METHOD_OPTIONAL.has(k) && !given.includes(k));
        if (missing.length > 0) throw new ToolInputError(`${args.method} needs ${missing.join(', ')}`);
        refuseQuickActions(ctx.allowQuickActions, args.body, args.summary, ...(args.comments ?? []).map((c) => c.body));
        const path = mergeRequestPath(ctx, args);
        const body = args.body ?? '';
        switch (args.method) {
          case 'create_note':
            return { method: args.method, note: noteOut(await ctx.api.post(`${path}/notes`, ctx.token, { body })) };
          case 'reply_discussion':
            return {
              method: args.method,
              note: noteOut(await ctx.api.post(`${path}/discussions/${args.discussion_id}/notes`, ctx.token, { body })),
            };
          case 'resolve_discussion':
            return {
              method: args.method,
              discussion: discussionOut(
                await ctx.api.put(`${path}/discussions/${args.discussion_id}`, ctx.token, { resolved: args.resolved ?? true }),
              ),
            };
          case 'create_diff_note': {
            const mr = await ctx.api.get<{ diff_refs?: DiffRefs }>(path, ctx.token);
            if (!mr.diff_refs) throw new ToolInputError('the merge request has no diff yet');
            const position = await diffPositions(ctx, path, mr.diff_refs)(args);
            const discussion = await ctx.api.post(`${path}/discussions`, ctx.token, { body, position });
            return { method: args.method, discussion: discussionOut(discussion), diff_head_sha: mr.diff_refs.head_sha };
          }
          case 'submit_review':
            return { method: args.method, ...(await submitReview(ctx, path, args.comments ?? [], args.summary)) };
          case 'approve':
          case 'unapprove': {
            const answer = await ctx.api.post<{ approved?: boolean }>(
              `${path}/${args.method}`,
              ctx.token,
              args.sha ? { sha: args.sha } : {},
            );
            const mr = await ctx.api.get<{ sha?: string }>(path, ctx.token);
            return { method: args.method, approved: answer.approved === true, ...(mr.sha ? { diff_head_sha: mr.sha } : {}) };
          }
        }
      },
    }),
    defineTool({
      name: 'accept_merge_request',
      toolset: 'merge_requests',
      title: 'Merge a merge request',
      description: 'Merges if the head is still sha; asks the user first; already merged is not an error.',
      input: z.object({
        project_id: projectRef,
        merge_request_iid: iid,
        sha: z
          .string()
          .regex(/^[0-9a-f]{7,64}$/)
          .describe('Head SHA you reviewed'),
        squash: z.boolean().optional().describe('Squash commits'),
        should_remove_source_branch: z.boolean().optional().describe('Delete source branch'),
        ...confirmationInput,
      }),
      output: z.object({
        status: z.enum(['merged', 'already_merged']).describe('What happened'),
        merge_request: mergeRequestSchema.describe('The merge request now'),
      }),
      annotations: IDEMPOTENT_WRITE,
      confirms: true,
      async run(args, ctx) {
        const merging = requiredTarget(args.project_id, ctx.forgeUrl, 'merge_request', 'merge_request_iid', args.merge_request_iid);
        const path = mrPath(merging.project, merging.value);
        const mr = await settledMergeRequest(ctx, path);
        if (mr.state === 'merged') return { status: 'already_merged' as const, merge_request: mergeRequestOut(true)(mr) };
        if (mr.state !== 'opened')
          throw new ForgeApiError('conflict', 405, 'merge request not open', {
            publicMessage: `The merge request is ${String(mr.state)}, not open.`,
          });
        await ctx.confirm(
          `Merge !${merging.value} of ${projectLabel(merging.project)} (${quoted(mr.source_branch)} into ${quoted(mr.target_branch)}) at ${args.sha.slice(0, 12)}`,
        );
        const body: Record<string, unknown> = { sha: args.sha };
        if (args.squash !== undefined) body.squash = args.squash;
        if (args.should_remove_source_branch !== undefined) body.should_remove_source_branch = args.should_remove_source_branch;
        return { status: 'merged' as const, merge_request: mergeRequestOut(true)(await ctx.api.put(`${path}/merge`, ctx.token, body)) };
      },
    }),
  ];
}

export const mergeRequestsToolset: ToolsetDefinition = {
  name: 'merge_requests',
  description: 'Merge requests: list, read with diffs and discussions, create, update and rebase, review, merge',
  default: true,
  tools: mergeRequestTools,
};
