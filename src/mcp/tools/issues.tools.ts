/**
 * The `issues` toolset (issue 18 item 1): list, get with related data, save (create or update) and notes.
 */
import { z } from 'zod';
import type { QueryValue } from './forge.client.ts';
import { detail, issueOut, issueSchema, READ } from './forge.entities.ts';
import { projectPathId, projectRef } from './forge.ids.ts';
import { decodeCursor, pageOutput, pageResult, pagingInput } from './forge.paging.ts';
import { defineTool, ToolInputError, type ToolsetDefinition } from './tool.contract.ts';
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

function issueTools() {
  return [
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
        refuseQuickActions(ctx.allowQuickActions, args.title, args.description);
        const body: Record<string, unknown> = { title: args.title };
        if (args.description !== undefined) body.description = args.description;
        if (args.labels !== undefined) body.labels = args.labels;
        return issueOut(true)(await ctx.api.post(`/projects/${projectPathId(args.project_id, ctx.forgeUrl)}/issues`, ctx.token, body));
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
