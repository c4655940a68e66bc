/**
 * A batched review (save_merge_request_review `submit_review`): the comments become draft notes, then each draft
 * this call created is published on its own (`PUT …/draft_notes/:id/publish`). Bulk publishing would also publish
 * drafts the user wrote elsewhere (in the web page, or left by an earlier failed call), under a count that did not
 * include them. When a step fails, the drafts of this call not yet published are deleted, so that a retry writes
 * each comment once; what could not be undone is said in the error.
 */
import { ForgeApiError } from './forge.client.ts';
import { noteOut } from './forge.entities.ts';
import { diffPositions, type DiffRefs, type LineComment } from './review.positions.ts';
import { ToolInputError, type ToolContext } from './tool.contract.ts';

interface ReviewComment extends LineComment {
  body: string;
}

/** `error` with `extra` appended to what the client is told, its type and status kept. */
function withNote(error: unknown, extra: string): unknown {
  if (error instanceof ForgeApiError)
    return new ForgeApiError(error.type, error.status, error.message, {
      publicMessage: `${error.publicMessage} ${extra}`,
      ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
      ...(error.requiredScope !== undefined ? { requiredScope: error.requiredScope } : {}),
    });
  if (error instanceof ToolInputError) return new ToolInputError(`${error.message} ${extra}`);
  return error;
}

/** Deletes the drafts `ids` (best effort; one already gone counts as deleted) and returns those still there. */
async function deleteDrafts(ctx: ToolContext, mrPath: string, ids: readonly number[]): Promise<number[]> {
  const left: number[] = [];
  for (const id of ids) {
    try {
      await ctx.api.send('DELETE', `${mrPath}/draft_notes/${id}`, ctx.token);
    } catch (error) {
      if (error instanceof ForgeApiError && error.status === 404) continue;
      ctx.log.warn({ draft_note_id: id, cause: (error as Error).message }, 'a draft note of a failed review could not be deleted');
      left.push(id);
    }
  }
  return left;
}

/** The error of a failed step, after deleting the call's unpublished drafts, saying what stays behind. */
async function failed(ctx: ToolContext, mrPath: string, error: unknown, unpublished: readonly number[], published: number) {
  const left = await deleteDrafts(ctx, mrPath, unpublished);
  const notes: string[] = [];
  if (published > 0) notes.push(`${published} comment(s) of this review were published before the failure; do not send them again.`);
  if (left.length > 0)
    notes.push(
      `${left.length} draft note(s) of this review could not be deleted and remain pending on the merge request (draft ids ${left.join(', ')}).`,
    );
  if (published === 0 && left.length === 0) notes.push('Nothing of this review was kept; it can be sent again.');
  return withNote(error, notes.join(' '));
}

/** Writes and publishes a review of `comments` and the optional summary note; returns what the tool reports. */
export async function submitReview(ctx: ToolContext, mrPath: string, comments: readonly ReviewComment[], summary: string | undefined) {
  const mr = await ctx.api.get<{ diff_refs?: DiffRefs }>(mrPath, ctx.token);
  const refs = mr.diff_refs;
  const positionOf = refs ? diffPositions(ctx, mrPath, refs) : undefined;
  // Positions are worked out and checked before anything is written.
  const drafts: Record<string, unknown>[] = [];
  for (const [i, c] of comments.entries()) {
    if (c.new_path === undefined && c.old_path === undefined) drafts.push({ note: c.body });
    else if (!positionOf) throw new ToolInputError('the merge request has no diff yet');
    else drafts.push({ note: c.body, position: await positionOf(c, `comments[${i}]`) });
  }
  const created: number[] = [];
  try {
    for (const draft of drafts) {
      const answer = await ctx.api.post<{ id?: unknown }>(`${mrPath}/draft_notes`, ctx.token, draft);
      if (typeof answer.id !== 'number') throw new ForgeApiError('upstream', 201, 'forge answered a draft note without an id');
      created.push(answer.id);
    }
  } catch (error) {
    throw await failed(ctx, mrPath, error, created, 0);
  }
  let published = 0;
  try {
    for (const id of created) {
      await ctx.api.send('PUT', `${mrPath}/draft_notes/${id}/publish`, ctx.token);
      published += 1;
    }
  } catch (error) {
    throw await failed(ctx, mrPath, error, created.slice(published), published);
  }
  let note: ReturnType<typeof noteOut> | undefined;
  try {
    if (summary) note = noteOut(await ctx.api.post(`${mrPath}/notes`, ctx.token, { body: summary }));
  } catch (error) {
    throw withNote(error, `All ${published} comment(s) were published; only the summary note failed.`);
  }
  return { published, ...(note ? { note } : {}), ...(refs ? { diff_head_sha: refs.head_sha } : {}) };
}
