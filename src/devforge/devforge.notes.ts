/**
 * Notes and discussions of issues and merge requests (GitLab's notes and discussions APIs): list (offset pages,
 * `sort`/`order_by` on notes), create a note (a new individual thread), start a discussion, reply in one, resolve
 * one (merge requests). Diff-note positions are validated against the merge request's latest version and diff.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { intParam, paginate, ParamError, sendError, WRITE_SCOPES, type ApiRouteKit } from './devforge.api.routes.ts';
import { baseUrl, param } from './devforge.http.ts';
import type { UserRecord } from './devforge.store.ts';
import type { IssueRecord, MergeRequestRecord, ProjectRecord } from './devforge.types.ts';
import {
  diffLines,
  discussionEntity,
  discussionsOf,
  mergeRequestDetails,
  noteEntity,
  workOf,
  type DiffPosition,
  type NoteRecord,
} from './devforge.work.ts';

type Noteable = { type: 'Issue'; record: IssueRecord } | { type: 'MergeRequest'; record: MergeRequestRecord };

/** GitLab's answer to a diff position that names no line of the diff (seen in many client issues). */
const BAD_POSITION = { message: '400 Bad request - Note {:line_code=>["can\'t be blank", "must be a valid line code"]}' };

/** Refuses a write by a user who can see the project but is not a member: GitLab's 403. */
export function requireMember(
  kit: ApiRouteKit,
  request: FastifyRequest,
  reply: FastifyReply,
  project: ProjectRecord,
): UserRecord | undefined {
  const user = kit.requireUser(request, reply);
  if (!user) return undefined;
  const denied = kit.scopeError(request, WRITE_SCOPES);
  if (denied) {
    sendError(reply, denied);
    return undefined;
  }
  if (!project.memberIds.includes(user.id)) {
    void reply.code(403).send({ message: '403 Forbidden' });
    return undefined;
  }
  return user;
}

/** A body string field, `undefined` when absent. */
export function bodyString(request: FastifyRequest, name: string): string | undefined {
  return param(request.body, name) ?? param(request.query, name);
}

/**
 * GitLab's checks on an issue or merge-request update: at least one of `known` given (its 400 names them all) and a
 * title, when given, not blank. Returns the new title, if any.
 */
export function updatedTitle(request: FastifyRequest, known: readonly string[]): string | undefined {
  const body = (request.body ?? {}) as Record<string, unknown>;
  if (!known.some((k) => body[k] !== undefined))
    throw new ParamError({ error: `${known.join(', ')} are missing, at least one parameter must be provided` });
  const title = bodyString(request, 'title');
  if (title !== undefined && title.trim() === '') throw new ParamError({ error: 'title is empty' });
  return title;
}

/** The position of a new diff note, checked against the merge request; a 400 sent and undefined when invalid. */
function diffPosition(kit: ApiRouteKit, mr: MergeRequestRecord, raw: unknown, reply: FastifyReply): DiffPosition | undefined | null {
  if (raw === undefined || raw === null) return null;
  const p = raw as Record<string, unknown>;
  const d = mergeRequestDetails(kit.store, mr);
  const position = parsePosition(p);
  if (p.position_type !== 'text') {
    void reply.code(400).send({ error: 'position[position_type] does not have a valid value' });
    return undefined;
  }
  const file = d.diffs.find((f) => f.newPath === position.new_path || f.oldPath === position.old_path);
  const fits =
    position.base_sha === d.baseSha &&
    position.start_sha === d.startSha &&
    position.head_sha === d.headSha &&
    file !== undefined &&
    !file.tooLarge &&
    (position.old_line !== null || position.new_line !== null) &&
    diffLines(file.diff).some(([o, n]) => o === position.old_line && n === position.new_line);
  if (!fits) {
    void reply.code(400).send(BAD_POSITION);
    return undefined;
  }
  return position;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const lineOf = (v: unknown): number | null => (typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null);

/** A `position` parameter as GitLab reads it (`text` positions; paths default to each other). */
export function parsePosition(p: Record<string, unknown>): DiffPosition {
  return {
    base_sha: str(p.base_sha),
    start_sha: str(p.start_sha),
    head_sha: str(p.head_sha),
    position_type: 'text',
    old_path: str(p.old_path) || str(p.new_path),
    new_path: str(p.new_path) || str(p.old_path),
    old_line: lineOf(p.old_line),
    new_line: lineOf(p.new_line),
  };
}

/** Registers the notes and discussions routes of issues (`issues`) or merge requests (`merge_requests`). */
export function registerNoteRoutes(
  scope: FastifyInstance,
  kit: ApiRouteKit,
  kind: 'issues' | 'merge_requests',
  find: (project: ProjectRecord, iid: number) => Noteable | undefined,
): void {
  const iidParam = kind === 'issues' ? 'issue_iid' : 'merge_request_iid';
  const missing = kind === 'issues' ? '404 Issue Not Found' : '404 Merge Request Not Found';
  const work = () => workOf(kit.store);

  /** The project and noteable of the path, or undefined with the answer sent. */
  const target = (request: FastifyRequest, reply: FastifyReply, write: boolean) => {
    const project = kit.scopedProject(request, reply, write);
    if (!project) return undefined;
    const noteable = find(project, intParam(request.params, iidParam, 0));
    if (!noteable) {
      void reply.code(404).send({ message: missing });
      return undefined;
    }
    return { project, noteable };
  };

  const addNote = (t: { project: ProjectRecord; noteable: Noteable }, user: UserRecord, fields: Partial<NoteRecord> & { body: string }) => {
    const now = kit.now();
    const id = work().nextId('note');
    const note: NoteRecord = {
      id,
      discussionId: randomBytes(20).toString('hex'),
      noteableType: t.noteable.type,
      noteableId: t.noteable.record.id,
      noteableIid: t.noteable.record.iid,
      projectId: t.project.id,
      authorId: user.id,
      createdAt: now,
      updatedAt: now,
      system: false,
      type: null,
      position: null,
      resolvable: false,
      resolvedById: null,
      resolvedAt: null,
      ...fields,
    };
    work().notes.push(note);
    t.noteable.record.updatedAt = now;
    return note;
  };

  const noteBody = (request: FastifyRequest): string => {
    const body = bodyString(request, 'body');
    if (body === undefined) throw new ParamError({ error: 'body is missing' });
    if (body.trim() === '') throw new ParamError({ error: 'body is empty' });
    if (body.length > 1_000_000) throw new ParamError({ error: 'body is too long (maximum is 1000000 characters)' });
    return body;
  };

  const base = `/projects/:id/${kind}/:${iidParam}`;

  scope.get(`${base}/notes`, async (request, reply) => {
    const t = target(request, reply, false);
    if (!t) return reply;
    const sort = param(request.query, 'sort') === 'asc' ? 1 : -1;
    const notes = work()
      .notes.filter((n) => n.noteableType === t.noteable.type && n.noteableId === t.noteable.record.id)
      .sort((a, b) => sort * (a.createdAt - b.createdAt || a.id - b.id));
    return paginate(request, reply, notes).map((n) => noteEntity(kit.store, n, baseUrl(request)));
  });

  scope.post(`${base}/notes`, async (request, reply) => {
    const t = target(request, reply, true);
    if (!t) return reply;
    const user = requireMember(kit, request, reply, t.project);
    if (!user) return reply;
    const note = addNote(t, user, { body: noteBody(request) });
    return reply.code(201).send(noteEntity(kit.store, note, baseUrl(request)));
  });

  scope.get(`${base}/discussions`, async (request, reply) => {
    const t = target(request, reply, false);
    if (!t) return reply;
    const threads = discussionsOf(work(), t.noteable.type, t.noteable.record.id);
    return paginate(request, reply, threads).map(([id, notes]) => discussionEntity(kit.store, id, notes, baseUrl(request)));
  });

  scope.post(`${base}/discussions`, async (request, reply) => {
    const t = target(request, reply, true);
    if (!t) return reply;
    const user = requireMember(kit, request, reply, t.project);
    if (!user) return reply;
    const body = noteBody(request);
    let position: DiffPosition | null = null;
    if (t.noteable.type === 'MergeRequest') {
      const checked = diffPosition(kit, t.noteable.record, (request.body as { position?: unknown } | null)?.position, reply);
      if (checked === undefined) return reply;
      position = checked;
    }
    const note = addNote(t, user, {
      body,
      type: position ? 'DiffNote' : 'DiscussionNote',
      position,
      resolvable: t.noteable.type === 'MergeRequest',
    });
    return reply.code(201).send(discussionEntity(kit.store, note.discussionId, [note], baseUrl(request)));
  });

  scope.post(`${base}/discussions/:discussion_id/notes`, async (request, reply) => {
    const t = target(request, reply, true);
    if (!t) return reply;
    const user = requireMember(kit, request, reply, t.project);
    if (!user) return reply;
    const id = (request.params as { discussion_id: string }).discussion_id;
    const thread = discussionsOf(work(), t.noteable.type, t.noteable.record.id).find(([d]) => d === id);
    if (!thread) return reply.code(404).send({ message: '404 Discussion Not Found' });
    const first = thread[1][0];
    const note = addNote(t, user, {
      body: noteBody(request),
      discussionId: id,
      type: first?.type === 'DiffNote' ? 'DiffNote' : 'DiscussionNote',
      position: first?.position ?? null,
      resolvable: first?.resolvable ?? false,
    });
    // A reply to an individual note turns it into a thread.
    if (first && first.type === null) first.type = 'DiscussionNote';
    return reply.code(201).send(noteEntity(kit.store, note, baseUrl(request)));
  });

  if (kind === 'merge_requests')
    scope.put(`${base}/discussions/:discussion_id`, async (request, reply) => {
      const t = target(request, reply, true);
      if (!t) return reply;
      const user = requireMember(kit, request, reply, t.project);
      if (!user) return reply;
      const id = (request.params as { discussion_id: string }).discussion_id;
      const thread = discussionsOf(work(), t.noteable.type, t.noteable.record.id).find(([d]) => d === id);
      if (!thread) return reply.code(404).send({ message: '404 Discussion Not Found' });
      const resolved = bodyString(request, 'resolved');
      if (resolved === undefined) throw new ParamError({ error: 'resolved is missing' });
      const notes = thread[1];
      if (!notes.some((n) => n.resolvable)) return reply.code(403).send({ message: '403 Forbidden' });
      const now = kit.now();
      for (const n of notes)
        if (n.resolvable) {
          n.resolvedById = resolved === 'true' ? user.id : null;
          n.resolvedAt = resolved === 'true' ? now : null;
        }
      return discussionEntity(kit.store, id, notes, baseUrl(request));
    });
}
