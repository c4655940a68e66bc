/**
 * GitLab's merge requests API: list with the issuable filters, get (with `diff_refs`, `changes_count` and a
 * `merge_status` that answers `checking` on the first read after a change, as GitLab computes it asynchronously),
 * create, update (`state_event`, labels, assignees, reviewers), diffs (offset pages; `too_large`/`collapsed` with
 * an empty `diff`), commits, pipelines, versions, approvals (approve with a `sha` guard, unapprove), merge (the
 * `sha` guard, 405 once merged or closed), rebase (202), draft notes (create, delete, publish one, publish all), and the merge-request
 * notes and discussions (devforge.notes.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { intParam, paginate, ParamError, READ_SCOPES, sendError, type ApiRouteKit } from './devforge.api.routes.ts';
import { baseUrl } from './devforge.http.ts';
import { issuableFilter, listParam } from './devforge.issues.ts';
import { bodyString, updatedTitle, parsePosition, registerNoteRoutes, requireMember } from './devforge.notes.ts';
import type { UserRecord } from './devforge.store.ts';
import type { MergeRequestRecord, ProjectRecord } from './devforge.types.ts';
import {
  commitEntity,
  diffEntity,
  diffLines,
  fakeSha,
  fullMergeRequest,
  issueDetails,
  mergeRequestDetails,
  workOf,
  type DiffPosition,
  type DraftNoteRecord,
} from './devforge.work.ts';
import { userBasic } from './devforge.api.serializers.ts';

export function registerMergeRequestRoutes(scope: FastifyInstance, kit: ApiRouteKit): void {
  const { store } = kit;
  const viewerId = (request: FastifyRequest) => {
    const c = kit.caller(request);
    return c.kind === 'user' ? c.user.id : undefined;
  };
  const readable = (request: FastifyRequest, reply: FastifyReply): boolean => {
    const denied = kit.scopeError(request, READ_SCOPES);
    if (denied) sendError(reply, denied);
    return denied === null;
  };
  const find = (project: ProjectRecord, iid: number) => store.mergeRequests.find((m) => m.projectId === project.id && m.iid === iid);
  /** The merge request of the path in `project`, or undefined with GitLab's 404 sent. */
  const pathMergeRequest = (request: FastifyRequest, reply: FastifyReply, project: ProjectRecord): MergeRequestRecord | undefined => {
    const mr = find(project, intParam(request.params, 'merge_request_iid', 0));
    if (!mr) void reply.code(404).send({ message: '404 Merge Request Not Found' });
    return mr;
  };
  /** The project and merge request of the path (read scope checked), or undefined with the answer sent. */
  const target = (request: FastifyRequest, reply: FastifyReply): { project: ProjectRecord; mr: MergeRequestRecord } | undefined => {
    if (!readable(request, reply)) return undefined;
    const project = kit.project(request, reply);
    if (!project) return undefined;
    const mr = pathMergeRequest(request, reply, project);
    return mr && { project, mr };
  };
  const writable = (
    request: FastifyRequest,
    reply: FastifyReply,
  ): { project: ProjectRecord; mr: MergeRequestRecord; user: UserRecord } | undefined => {
    const t = target(request, reply);
    if (!t) return undefined;
    const user = requireMember(kit, request, reply, t.project);
    return user ? { ...t, user } : undefined;
  };
  /** A change to the merge request itself (edit, approve, merge, rebase): GitLab asks Developer or above of those. */
  const developerWritable = (
    request: FastifyRequest,
    reply: FastifyReply,
  ): { project: ProjectRecord; mr: MergeRequestRecord; user: UserRecord } | undefined => {
    const found = kit.writableProject(request, reply);
    if (!found) return undefined;
    const mr = pathMergeRequest(request, reply, found.project);
    return mr && { ...found, mr };
  };
  const single = (request: FastifyRequest, project: ProjectRecord, mr: MergeRequestRecord) =>
    fullMergeRequest(store, mr, project, baseUrl(request), true, viewerId(request));

  scope.get('/projects/:id/merge_requests', async (request, reply) => {
    if (!readable(request, reply)) return reply;
    const project = kit.project(request, reply);
    if (!project) return reply;
    const filter = issuableFilter(store, request.query, ['opened', 'closed', 'locked', 'merged', 'all']);
    const source = bodyString(request, 'source_branch');
    const targetBranch = bodyString(request, 'target_branch');
    const reviewer = bodyString(request, 'reviewer_username');
    const list = store.mergeRequests
      .filter((m) => m.projectId === project.id)
      .filter((m) => {
        const d = mergeRequestDetails(store, m);
        return (
          filter.test(m, d.assigneeIds, null) &&
          (source === undefined || m.sourceBranch === source) &&
          (targetBranch === undefined || m.targetBranch === targetBranch) &&
          (reviewer === undefined || d.reviewerIds.includes(store.findUserByUsername(reviewer)?.id ?? -1))
        );
      })
      .sort((a, b) => filter.compare(a, b));
    return paginate(request, reply, list).map((m) => fullMergeRequest(store, m, project, baseUrl(request), false));
  });

  scope.get('/projects/:id/merge_requests/:merge_request_iid', async (request, reply) => {
    const t = target(request, reply);
    if (!t) return reply;
    const value = single(request, t.project, t.mr);
    // The asynchronous mergeability check settles after this read.
    const d = mergeRequestDetails(store, t.mr);
    if (d.checksPending > 0) d.checksPending -= 1;
    return value;
  });

  scope.post('/projects/:id/merge_requests', async (request, reply) => {
    const found = kit.writableProject(request, reply);
    if (!found) return reply;
    const { project, user } = found;
    const missing = ['source_branch', 'target_branch', 'title'].filter((k) => (bodyString(request, k) ?? '') === '');
    if (missing.length > 0) throw new ParamError({ error: missing.map((k) => `${k} is missing`).join(', ') });
    const source = bodyString(request, 'source_branch') as string;
    const targetBranch = bodyString(request, 'target_branch') as string;
    if (source === targetBranch) return reply.code(422).send({ message: ['You can’t use same project/branch for source and target'] });
    if (
      store.mergeRequests.some(
        (m) => m.projectId === project.id && m.state === 'opened' && m.sourceBranch === source && m.targetBranch === targetBranch,
      )
    )
      return reply.code(409).send({ message: [`Another open merge request already exists for this source branch: !${source}`] });
    const now = kit.now();
    const mr: MergeRequestRecord = {
      id: store.nextId('mergeRequest'),
      iid: project.nextMergeRequestIid++,
      projectId: project.id,
      title: bodyString(request, 'title') as string,
      description: bodyString(request, 'description') ?? null,
      state: 'opened',
      sourceBranch: source,
      targetBranch,
      labels: [...new Set(listParam(request.body, 'labels') ?? [])],
      authorId: user.id,
      createdAt: now,
      updatedAt: now,
      mergedAt: null,
      closedAt: null,
    };
    store.mergeRequests.push(mr);
    const d = mergeRequestDetails(store, mr);
    d.assigneeIds = (listParam(request.body, 'assignee_ids') ?? []).map(Number).filter((id) => store.users.has(id));
    d.reviewerIds = (listParam(request.body, 'reviewer_ids') ?? []).map(Number).filter((id) => store.users.has(id));
    d.checksPending = 1;
    project.lastActivityAt = now;
    return reply.code(201).send(single(request, project, mr));
  });

  scope.put('/projects/:id/merge_requests/:merge_request_iid', async (request, reply) => {
    const t = developerWritable(request, reply);
    if (!t) return reply;
    const { mr } = t;
    const body = (request.body ?? {}) as Record<string, unknown>;
    const known = [
      'title',
      'description',
      'state_event',
      'labels',
      'add_labels',
      'remove_labels',
      'assignee_ids',
      'reviewer_ids',
      'target_branch',
      'discussion_locked',
    ];
    const d = mergeRequestDetails(store, mr);
    const title = updatedTitle(request, known);
    if (title !== undefined) {
      mr.title = title;
      d.draft = /^(draft:|\[draft\]|\(draft\))/i.test(title);
    }
    const description = bodyString(request, 'description');
    if (description !== undefined) mr.description = description;
    const targetBranch = bodyString(request, 'target_branch');
    if (targetBranch !== undefined) mr.targetBranch = targetBranch;
    const labels = listParam(body, 'labels');
    if (labels !== undefined || body.labels === '') mr.labels = [...new Set(labels ?? [])];
    const add = listParam(body, 'add_labels') ?? [];
    const remove = listParam(body, 'remove_labels') ?? [];
    mr.labels = [...new Set([...mr.labels, ...add])].filter((l) => !remove.includes(l));
    const assignees = listParam(body, 'assignee_ids');
    if (assignees !== undefined) d.assigneeIds = assignees.map(Number).filter((id) => store.users.has(id));
    const reviewers = listParam(body, 'reviewer_ids');
    if (reviewers !== undefined) d.reviewerIds = reviewers.map(Number).filter((id) => store.users.has(id));
    const event = bodyString(request, 'state_event');
    const now = kit.now();
    if (event !== undefined && !['close', 'reopen'].includes(event))
      throw new ParamError({ error: 'state_event does not have a valid value' });
    if (event === 'close' && mr.state === 'opened') {
      mr.state = 'closed';
      mr.closedAt = now;
    } else if (event === 'reopen' && mr.state === 'closed') {
      mr.state = 'opened';
      mr.closedAt = null;
      d.checksPending = 1;
    }
    mr.updatedAt = now;
    return single(request, t.project, mr);
  });

  scope.get('/projects/:id/merge_requests/:merge_request_iid/diffs', async (request, reply) => {
    const t = target(request, reply);
    if (!t) return reply;
    return paginate(request, reply, mergeRequestDetails(store, t.mr).diffs).map(diffEntity);
  });

  scope.get('/projects/:id/merge_requests/:merge_request_iid/commits', async (request, reply) => {
    const t = target(request, reply);
    if (!t) return reply;
    return paginate(request, reply, mergeRequestDetails(store, t.mr).commits).map((c) => commitEntity(c, t.project, baseUrl(request)));
  });

  scope.get('/projects/:id/merge_requests/:merge_request_iid/pipelines', async (request, reply) => {
    const t = target(request, reply);
    if (!t) return reply;
    // No CI runs behind merge requests here (the ci toolset's pipelines are separate): GitLab's empty answer.
    return paginate(request, reply, [] as Record<string, unknown>[]);
  });

  scope.get('/projects/:id/merge_requests/:merge_request_iid/versions', async (request, reply) => {
    const t = target(request, reply);
    if (!t) return reply;
    const d = mergeRequestDetails(store, t.mr);
    return paginate(request, reply, d.versions).map((v) => ({
      id: v.id,
      head_commit_sha: v.headSha,
      base_commit_sha: v.baseSha,
      start_commit_sha: v.startSha,
      created_at: new Date(v.createdAt).toISOString(),
      merge_request_id: t.mr.id,
      state: 'collected',
      real_size: String(d.diffs.length),
      patch_id_sha: fakeSha(`patch:${v.headSha}`),
    }));
  });

  const approvals = (request: FastifyRequest, project: ProjectRecord, mr: MergeRequestRecord) => {
    const d = mergeRequestDetails(store, mr);
    const viewer = viewerId(request);
    const base = baseUrl(request);
    return {
      id: mr.id,
      iid: mr.iid,
      project_id: project.id,
      title: mr.title,
      description: mr.description,
      state: mr.state,
      created_at: new Date(mr.createdAt).toISOString(),
      updated_at: new Date(mr.updatedAt).toISOString(),
      merge_status: 'can_be_merged',
      approved: d.approvedBy.length > 0,
      approvals_required: 0,
      approvals_left: 0,
      require_password_to_approve: false,
      approved_by: d.approvedBy.flatMap((id) => {
        const u = store.users.get(id);
        return u ? [{ user: userBasic(u, base) }] : [];
      }),
      suggested_approvers: [],
      approvers: [],
      approver_groups: [],
      user_has_approved: viewer !== undefined && d.approvedBy.includes(viewer),
      user_can_approve: viewer !== undefined && project.memberIds.includes(viewer) && !d.approvedBy.includes(viewer),
      approval_rules_left: [],
      has_approval_rules: false,
      merge_request_approvers_available: false,
      multiple_approval_rules_available: false,
      invalid_approvers_rules: [],
    };
  };

  scope.get('/projects/:id/merge_requests/:merge_request_iid/approvals', async (request, reply) => {
    const t = target(request, reply);
    if (!t) return reply;
    return approvals(request, t.project, t.mr);
  });

  scope.post('/projects/:id/merge_requests/:merge_request_iid/approve', async (request, reply) => {
    const t = developerWritable(request, reply);
    if (!t) return reply;
    const d = mergeRequestDetails(store, t.mr);
    const sha = bodyString(request, 'sha');
    if (sha !== undefined && sha !== d.headSha) return reply.code(409).send({ message: 'SHA does not match HEAD of source branch' });
    if (d.approvedBy.includes(t.user.id) || t.mr.state !== 'opened') return reply.code(401).send({ message: '401 Unauthorized' });
    d.approvedBy.push(t.user.id);
    return reply.code(201).send(approvals(request, t.project, t.mr));
  });

  scope.post('/projects/:id/merge_requests/:merge_request_iid/unapprove', async (request, reply) => {
    const t = developerWritable(request, reply);
    if (!t) return reply;
    const d = mergeRequestDetails(store, t.mr);
    if (!d.approvedBy.includes(t.user.id)) return reply.code(404).send({ message: '404 Not found' });
    d.approvedBy = d.approvedBy.filter((id) => id !== t.user.id);
    return reply.code(201).send(approvals(request, t.project, t.mr));
  });

  scope.put('/projects/:id/merge_requests/:merge_request_iid/merge', async (request, reply) => {
    const t = developerWritable(request, reply);
    if (!t) return reply;
    const { mr } = t;
    const d = mergeRequestDetails(store, mr);
    if (mr.state !== 'opened' || d.draft) return reply.code(405).send({ message: '405 Method Not Allowed' });
    const sha = bodyString(request, 'sha');
    if (sha !== undefined && sha !== d.headSha) return reply.code(409).send({ message: 'SHA does not match HEAD of source branch' });
    if (d.checksPending > 0) return reply.code(422).send({ message: 'Branch cannot be merged' });
    const now = kit.now();
    mr.state = 'merged';
    mr.mergedAt = now;
    mr.updatedAt = now;
    d.mergeCommitSha = fakeSha(`merge:${mr.id}:${now}`);
    // `Closes #n` in the description closes those issues, as GitLab does on merge.
    for (const iid of d.closesIssueIids) {
      const issue = store.issues.find((i) => i.projectId === mr.projectId && i.iid === iid && i.state === 'opened');
      if (issue) {
        issue.state = 'closed';
        issue.closedAt = now;
        issueDetails(store, issue).closedById = t.user.id;
      }
    }
    return single(request, t.project, mr);
  });

  scope.put('/projects/:id/merge_requests/:merge_request_iid/rebase', async (request, reply) => {
    const t = developerWritable(request, reply);
    if (!t) return reply;
    if (t.mr.state !== 'opened') return reply.code(403).send({ message: '403 Forbidden' });
    return reply.code(202).send({ rebase_in_progress: true });
  });

  // ---- draft notes (a batched review) ----
  scope.get('/projects/:id/merge_requests/:merge_request_iid/draft_notes', async (request, reply) => {
    const t = target(request, reply);
    if (!t) return reply;
    const viewer = viewerId(request);
    return workOf(store)
      .drafts.filter((n) => n.mergeRequestId === t.mr.id && n.authorId === viewer)
      .map(draftEntity);
  });

  scope.post('/projects/:id/merge_requests/:merge_request_iid/draft_notes', async (request, reply) => {
    const t = writable(request, reply);
    if (!t) return reply;
    const note = bodyString(request, 'note');
    if (note === undefined || note.trim() === '') throw new ParamError({ error: 'note is missing' });
    const raw = (request.body as { position?: Record<string, unknown> } | null)?.position;
    const d = mergeRequestDetails(store, t.mr);
    let position: DiffPosition | null = null;
    if (raw) {
      position = parsePosition(raw);
      const file = d.diffs.find((f) => f.newPath === position?.new_path);
      const ok =
        position.head_sha === d.headSha &&
        file !== undefined &&
        diffLines(file.diff).some(([o, n]) => o === position?.old_line && n === position?.new_line);
      if (!ok)
        return reply.code(400).send({ message: '400 Bad request - Note {:line_code=>["can\'t be blank", "must be a valid line code"]}' });
    }
    const draft = {
      id: workOf(store).nextId('draft'),
      mergeRequestId: t.mr.id,
      authorId: t.user.id,
      note,
      position,
      inReplyToDiscussionId: bodyString(request, 'in_reply_to_discussion_id') ?? null,
    };
    workOf(store).drafts.push(draft);
    return reply.code(201).send(draftEntity(draft));
  });

  /** Turns a draft into a note of its thread (a reply) or of a new one, and drops the draft. */
  const publish = (t: { project: ProjectRecord; mr: MergeRequestRecord; user: UserRecord }, draft: DraftNoteRecord, now: number) => {
    const work = workOf(store);
    const reply_ = draft.inReplyToDiscussionId ? work.notes.find((n) => n.discussionId === draft.inReplyToDiscussionId) : undefined;
    work.notes.push({
      id: work.nextId('note'),
      discussionId: reply_?.discussionId ?? randomBytes(20).toString('hex'),
      noteableType: 'MergeRequest',
      noteableId: t.mr.id,
      noteableIid: t.mr.iid,
      projectId: t.project.id,
      body: draft.note,
      authorId: t.user.id,
      createdAt: now,
      updatedAt: now,
      system: false,
      type: draft.position ? 'DiffNote' : 'DiscussionNote',
      position: draft.position ?? reply_?.position ?? null,
      resolvable: true,
      resolvedById: null,
      resolvedAt: null,
    });
    work.drafts = work.drafts.filter((n) => n !== draft);
  };

  /**
   * The caller's draft of the path: GitLab looks drafts up among the caller's own (`authored_by(current_user)`), so
   * another user's draft or a missing one is its RecordNotFound 404.
   */
  const ownDraft = (request: FastifyRequest, reply: FastifyReply, t: { mr: MergeRequestRecord; user: UserRecord }) => {
    const id = intParam(request.params, 'draft_note_id', 0);
    const draft = workOf(store).drafts.find((n) => n.id === id && n.mergeRequestId === t.mr.id && n.authorId === t.user.id);
    if (!draft) void reply.code(404).send({ message: '404 Not found' });
    return draft;
  };

  scope.delete('/projects/:id/merge_requests/:merge_request_iid/draft_notes/:draft_note_id', async (request, reply) => {
    const t = writable(request, reply);
    if (!t) return reply;
    const draft = ownDraft(request, reply, t);
    if (!draft) return reply;
    const work = workOf(store);
    work.drafts = work.drafts.filter((n) => n !== draft);
    return reply.code(204).send();
  });

  scope.put('/projects/:id/merge_requests/:merge_request_iid/draft_notes/:draft_note_id/publish', async (request, reply) => {
    const t = writable(request, reply);
    if (!t) return reply;
    const draft = ownDraft(request, reply, t);
    if (!draft) return reply;
    publish(t, draft, kit.now());
    return reply.code(204).send();
  });

  scope.post('/projects/:id/merge_requests/:merge_request_iid/draft_notes/bulk_publish', async (request, reply) => {
    const t = writable(request, reply);
    if (!t) return reply;
    const now = kit.now();
    for (const draft of workOf(store).drafts.filter((n) => n.mergeRequestId === t.mr.id && n.authorId === t.user.id))
      publish(t, draft, now);
    return reply.code(204).send();
  });

  registerNoteRoutes(scope, kit, 'merge_requests', (project, iid) => {
    const record = find(project, iid);
    return record ? { type: 'MergeRequest', record } : undefined;
  });
}

function draftEntity(n: {
  id: number;
  authorId: number;
  mergeRequestId: number;
  note: string;
  position: DiffPosition | null;
  inReplyToDiscussionId: string | null;
}) {
  return {
    id: n.id,
    author_id: n.authorId,
    merge_request_id: n.mergeRequestId,
    resolve_discussion: false,
    discussion_id: n.inReplyToDiscussionId,
    note: n.note,
    commit_id: null,
    line_code: null,
    position: n.position,
  };
}
