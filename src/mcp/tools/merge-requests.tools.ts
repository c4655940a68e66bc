/**
 * The `merge_requests` toolset (issue 18 item 1): list, get with related data, diffs, save, review, merge, rebase.
 */
import { z } from 'zod';
import type { QueryValue } from './forge.client.ts';
import { detail, mergeRequestOut, mergeRequestSchema, READ } from './forge.entities.ts';
import { projectPathId, projectRef } from './forge.ids.ts';
import { decodeCursor, pageOutput, pageResult, pagingInput } from './forge.paging.ts';
import { defineTool, type ToolsetDefinition } from './tool.contract.ts';

function mergeRequestTools() {
  return [
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

export const mergeRequestsToolset: ToolsetDefinition = {
  name: 'merge_requests',
  description: 'Merge requests: list, read with diffs and discussions, create and update, review, merge, rebase',
  default: true,
  tools: mergeRequestTools,
};
