/**
 * GitLab's issues API and what the `core` tools read beside it: users (`/users`), project labels, search at
 * global, group and project level, issues (list with GitLab's filters, get, create, update with `state_event`,
 * `add_labels`/`remove_labels`, `assignee_ids`, `confidential`), issue links, related merge requests, and the
 * issue notes and discussions (devforge.notes.ts). Offset pages with GitLab's headers; a confidential issue is a
 * 404 to a non-member, as a private project is.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { boolParam, enumParam, intParam, paginate, ParamError, READ_SCOPES, sendError, type ApiRouteKit } from './devforge.api.routes.ts';
import { currentUser, projectFull } from './devforge.api.serializers.ts';
import { baseUrl, param } from './devforge.http.ts';
import { bodyString, updatedTitle, registerNoteRoutes, requireMember } from './devforge.notes.ts';
import type { DevForgeStore } from './devforge.store.ts';
import type { IssueRecord, MergeRequestRecord, ProjectRecord } from './devforge.types.ts';
import {
  fullIssue,
  fullMergeRequest,
  issueDetails,
  labelEntity,
  noteEntity,
  projectLabels,
  relatedMergeRequests,
  workOf,
} from './devforge.work.ts';
import { userBasic } from './devforge.api.serializers.ts';

const matches = (text: string | null, needle: string): boolean => text !== null && text.toLowerCase().includes(needle.toLowerCase());

/** A comma-separated list parameter (or a repeated one), trimmed; undefined when absent. */
export function listParam(source: unknown, name: string): string[] | undefined {
  const value =
    (source as Record<string, unknown> | null | undefined)?.[name] ?? (source as Record<string, unknown> | null | undefined)?.[`${name}[]`];
  if (value === undefined || value === null || value === '') return undefined;
  const asText = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
  const items = Array.isArray(value) ? value.map(asText) : asText(value).split(',');
  return items.map((s) => s.trim()).filter((s) => s !== '');
}

function timeParam(query: unknown, name: string): number | undefined {
  const raw = param(query, name);
  if (raw === undefined || raw === '') return undefined;
  const at = Date.parse(raw);
  if (Number.isNaN(at)) throw new ParamError({ error: `${name} is invalid` });
  return at;
}

/** Filters shared by the issue and merge-request lists (GitLab's `IssuableFinder` parameters). */
export function issuableFilter(store: DevForgeStore, query: unknown, states: readonly string[]) {
  const state = enumParam(query, 'state', states);
  const labels = listParam(query, 'labels');
  const search = param(query, 'search');
  const author = param(query, 'author_username');
  const authorId = param(query, 'author_id');
  const assignee = param(query, 'assignee_username');
  const assigneeId = param(query, 'assignee_id');
  const milestone = param(query, 'milestone');
  const createdAfter = timeParam(query, 'created_after');
  const createdBefore = timeParam(query, 'created_before');
  const updatedAfter = timeParam(query, 'updated_after');
  const updatedBefore = timeParam(query, 'updated_before');
  const orderBy = enumParam(query, 'order_by', ['created_at', 'updated_at']) ?? 'created_at';
  const sort = enumParam(query, 'sort', ['asc', 'desc']) ?? 'desc';
  const userId = (username: string) => store.findUserByUsername(username)?.id ?? -1;
  return {
    test(item: IssueRecord | MergeRequestRecord, assignees: number[], itemMilestone: string | null): boolean {
      if (state && state !== 'all' && item.state !== state) return false;
      if (labels) {
        if (labels.length === 1 && labels[0] === 'None') {
          if (item.labels.length > 0) return false;
        } else if (labels.length === 1 && labels[0] === 'Any') {
          if (item.labels.length === 0) return false;
        } else if (!labels.every((l) => item.labels.includes(l))) return false;
      }
      if (search && !matches(item.title, search) && !matches(item.description, search)) return false;
      if (author && item.authorId !== userId(author)) return false;
      if (authorId && item.authorId !== Number(authorId)) return false;
      if (assignee && !assignees.includes(userId(assignee))) return false;
      if (assigneeId === 'None' && assignees.length > 0) return false;
      if (assigneeId === 'Any' && assignees.length === 0) return false;
      if (assigneeId && /^\d+$/.test(assigneeId) && !assignees.includes(Number(assigneeId))) return false;
      if (milestone === 'None' && itemMilestone !== null) return false;
      if (milestone === 'Any' && itemMilestone === null) return false;
      if (milestone && milestone !== 'None' && milestone !== 'Any' && itemMilestone !== milestone) return false;
      if (createdAfter !== undefined && item.createdAt < createdAfter) return false;
      if (createdBefore !== undefined && item.createdAt > createdBefore) return false;
      if (updatedAfter !== undefined && item.updatedAt < updatedAfter) return false;
      if (updatedBefore !== undefined && item.updatedAt > updatedBefore) return false;
      return true;
    },
    compare(a: IssueRecord | MergeRequestRecord, b: IssueRecord | MergeRequestRecord): number {
      const key = orderBy === 'updated_at' ? 'updatedAt' : 'createdAt';
      const order = a[key] - b[key] || a.id - b.id;
      return sort === 'asc' ? order : -order;
    },
  };
}

/** Usernames or ids to user ids; an unknown one is a 400 naming it. */
function userIds(store: DevForgeStore, request: FastifyRequest, name: string): number[] | undefined {
  const ids = listParam(request.body, name);
  if (ids === undefined) {
    const raw = (request.body as Record<string, unknown> | null)?.[name];
    return Array.isArray(raw) && raw.length === 0 ? [] : undefined;
  }
  return ids.map((id) => {
    if (!/^\d+$/.test(id) || !store.users.has(Number(id))) throw new ParamError({ error: `${name} is invalid` });
    return Number(id);
  });
}

export function registerIssueRoutes(scope: FastifyInstance, kit: ApiRouteKit): void {
  const { store } = kit;
  const viewerId = (request: FastifyRequest) => {
    const c = kit.caller(request);
    return c.kind === 'user' ? c.user.id : undefined;
  };
  const canSeeIssue = (request: FastifyRequest, project: ProjectRecord, i: IssueRecord) => {
    const viewer = viewerId(request);
    return !issueDetails(store, i).confidential || (viewer !== undefined && (project.memberIds.includes(viewer) || i.authorId === viewer));
  };
  const readable = (request: FastifyRequest, reply: FastifyReply): boolean => {
    const denied = kit.scopeError(request, READ_SCOPES);
    if (denied) sendError(reply, denied);
    return denied === null;
  };
  const findIssue = (project: ProjectRecord, iid: number) => store.issues.find((i) => i.projectId === project.id && i.iid === iid);
  const issueOr404 = (request: FastifyRequest, reply: FastifyReply, project: ProjectRecord): IssueRecord | undefined => {
    const found = findIssue(project, intParam(request.params, 'issue_iid', 0));
    if (!found || !canSeeIssue(request, project, found)) {
      void reply.code(404).send({ message: '404 Issue Not Found' });
      return undefined;
    }
    return found;
  };

  // ---- users ----
  scope.get('/users', async (request, reply) => {
    if (!readable(request, reply)) return reply;
    const username = param(request.query, 'username');
    const search = param(request.query, 'search');
    const list = [...store.users.values()]
      .filter((u) => username === undefined || u.username.toLowerCase() === username.toLowerCase())
      .filter((u) => search === undefined || matches(u.username, search) || matches(u.name, search))
      .sort((a, b) => a.id - b.id);
    return paginate(request, reply, list).map((u) => userBasic(u, baseUrl(request)));
  });
  scope.get('/users/:user_id', async (request, reply) => {
    if (!readable(request, reply)) return reply;
    const raw = (request.params as { user_id: string }).user_id;
    const user = /^\d+$/.test(raw) ? store.users.get(Number(raw)) : undefined;
    if (!user) return reply.code(404).send({ message: '404 User Not Found' });
    const { email: _email, commit_email: _commit, ...visible } = currentUser(user, baseUrl(request));
    return visible;
  });

  // ---- labels ----
  scope.get('/projects/:id/labels', async (request, reply) => {
    if (!readable(request, reply)) return reply;
    const project = kit.project(request, reply);
    if (!project) return reply;
    const search = param(request.query, 'search');
    const labels = projectLabels(store, project).filter((l) => search === undefined || matches(l.name, search));
    return paginate(request, reply, labels).map((l) => labelEntity(store, l));
  });

  // ---- search ----
  const searchIn = (request: FastifyRequest, reply: FastifyReply, projects: ProjectRecord[], scopes: readonly string[]) => {
    const scopeName = param(request.query, 'scope');
    if (scopeName === undefined || scopeName === '') throw new ParamError({ error: 'scope is missing, scope does not have a valid value' });
    if (!scopes.includes(scopeName)) throw new ParamError({ error: 'scope does not have a valid value' });
    const term = param(request.query, 'search');
    if (term === undefined || term === '') throw new ParamError({ error: 'search is missing' });
    const base = baseUrl(request);
    const ids = new Set(projects.map((p) => p.id));
    const projectOf = (id: number) => store.projects.get(id) as ProjectRecord;
    const viewer = viewerId(request);
    let results: Record<string, unknown>[] = [];
    if (scopeName === 'projects')
      results = projects
        .filter((p) => matches(p.name, term) || matches(p.path, term) || matches(p.description, term))
        .map((p) => projectFull(p, base, viewer, 0));
    else if (scopeName === 'issues')
      results = store.issues
        .filter(
          (i) =>
            ids.has(i.projectId) &&
            canSeeIssue(request, projectOf(i.projectId), i) &&
            (matches(i.title, term) || matches(i.description, term)),
        )
        .sort((a, b) => b.createdAt - a.createdAt || b.id - a.id)
        .map((i) => fullIssue(store, i, projectOf(i.projectId), base));
    else if (scopeName === 'merge_requests')
      results = store.mergeRequests
        .filter((m) => ids.has(m.projectId) && (matches(m.title, term) || matches(m.description, term)))
        .sort((a, b) => b.createdAt - a.createdAt || b.id - a.id)
        .map((m) => fullMergeRequest(store, m, projectOf(m.projectId), base, false));
    else if (scopeName === 'notes')
      results = workOf(store)
        .notes.filter((n) => ids.has(n.projectId) && !n.system && matches(n.body, term))
        .map((n) => noteEntity(store, n, base));
    else if (scopeName === 'users')
      results = [...store.users.values()].filter((u) => matches(u.username, term) || matches(u.name, term)).map((u) => userBasic(u, base));
    // Scopes whose data another route module holds (blobs and commits: the repositories; wiki_blobs, milestones).
    else results = kit.searchScopes.get(scopeName)?.(projects, term, base) ?? [];
    return paginate(request, reply, results);
  };
  const visibleProjects = (request: FastifyRequest) => kit.api.listProjects(kit.caller(request), { membership: false, owned: false });

  scope.get('/search', async (request, reply) => {
    if (!readable(request, reply)) return reply;
    return searchIn(request, reply, visibleProjects(request), [
      'projects',
      'issues',
      'merge_requests',
      'milestones',
      'users',
      'blobs',
      'commits',
      'wiki_blobs',
      'snippet_titles',
    ]);
  });
  scope.get('/groups/:id/search', async (request, reply) => {
    if (!readable(request, reply)) return reply;
    const id = decodeURIComponent((request.params as { id: string }).id).toLowerCase();
    const group = [...store.namespaces.values()].find((n) => n.kind === 'group' && (String(n.id) === id || n.path.toLowerCase() === id));
    const projects = visibleProjects(request).filter((p) => p.namespace.id === group?.id);
    if (!group || projects.length === 0) return reply.code(404).send({ message: '404 Group Not Found' });
    return searchIn(request, reply, projects, [
      'projects',
      'issues',
      'merge_requests',
      'milestones',
      'users',
      'blobs',
      'commits',
      'wiki_blobs',
    ]);
  });
  scope.get('/projects/:id/search', async (request, reply) => {
    if (!readable(request, reply)) return reply;
    const project = kit.project(request, reply);
    if (!project) return reply;
    return searchIn(
      request,
      reply,
      [project],
      ['issues', 'merge_requests', 'milestones', 'notes', 'users', 'blobs', 'commits', 'wiki_blobs'],
    );
  });

  // ---- issues ----
  scope.get('/projects/:id/issues', async (request, reply) => {
    if (!readable(request, reply)) return reply;
    const project = kit.project(request, reply);
    if (!project) return reply;
    const filter = issuableFilter(store, request.query, ['opened', 'closed', 'all']);
    const confidential = param(request.query, 'confidential');
    const iids = listParam(request.query, 'iids');
    const list = store.issues
      .filter((i) => i.projectId === project.id && canSeeIssue(request, project, i))
      .filter((i) => {
        const d = issueDetails(store, i);
        return (
          filter.test(i, d.assigneeIds, d.milestone) &&
          (confidential === undefined || String(d.confidential) === confidential) &&
          (iids === undefined || iids.includes(String(i.iid)))
        );
      })
      .sort((a, b) => filter.compare(a, b));
    return paginate(request, reply, list).map((i) => fullIssue(store, i, project, baseUrl(request)));
  });

  scope.get('/projects/:id/issues/:issue_iid', async (request, reply) => {
    if (!readable(request, reply)) return reply;
    const project = kit.project(request, reply);
    if (!project) return reply;
    const found = issueOr404(request, reply, project);
    if (!found) return reply;
    return fullIssue(store, found, project, baseUrl(request));
  });

  scope.post('/projects/:id/issues', async (request, reply) => {
    const user = kit.requireUser(request, reply);
    if (!user) return reply;
    const project = kit.project(request, reply);
    if (!project) return reply;
    if (!requireMember(kit, request, reply, project)) return reply;
    const title = bodyString(request, 'title');
    if (title === undefined) throw new ParamError({ error: 'title is missing' });
    if (title.trim() === '') throw new ParamError({ error: 'title is empty' });
    if (title.length > 255) return reply.code(400).send({ message: { title: ['is too long (maximum is 255 characters)'] } });
    const now = kit.now();
    const created: IssueRecord = {
      id: store.nextId('issue'),
      iid: project.nextIssueIid++,
      projectId: project.id,
      title,
      description: bodyString(request, 'description') ?? null,
      state: 'opened',
      labels: [...new Set(listParam(request.body, 'labels') ?? [])],
      authorId: user.id,
      createdAt: now,
      updatedAt: now,
      closedAt: null,
    };
    store.issues.push(created);
    project.lastActivityAt = now;
    const d = issueDetails(store, created);
    d.assigneeIds = userIds(store, request, 'assignee_ids') ?? [];
    d.confidential = boolParam(request.body, 'confidential');
    d.milestone = bodyString(request, 'milestone_title') ?? null;
    request.log.info({ event: 'devforge.issue.created', projectId: project.id, iid: created.iid }, 'issue created');
    return reply.code(201).send(fullIssue(store, created, project, baseUrl(request)));
  });

  scope.put('/projects/:id/issues/:issue_iid', async (request, reply) => {
    const user = kit.requireUser(request, reply);
    if (!user) return reply;
    const project = kit.project(request, reply);
    if (!project) return reply;
    const found = issueOr404(request, reply, project);
    if (!found) return reply;
    if (!requireMember(kit, request, reply, project)) return reply;
    const body = (request.body ?? {}) as Record<string, unknown>;
    const known = [
      'title',
      'description',
      'state_event',
      'labels',
      'add_labels',
      'remove_labels',
      'assignee_ids',
      'confidential',
      'milestone_title',
      'discussion_locked',
    ];
    const d = issueDetails(store, found);
    const title = updatedTitle(request, known);
    if (title !== undefined) {
      found.title = title;
    }
    const description = bodyString(request, 'description');
    if (description !== undefined) found.description = description;
    const labels = listParam(body, 'labels');
    if (labels !== undefined || body.labels === '') found.labels = [...new Set(labels ?? [])];
    const add = listParam(body, 'add_labels') ?? [];
    const remove = listParam(body, 'remove_labels') ?? [];
    found.labels = [...new Set([...found.labels, ...add])].filter((l) => !remove.includes(l));
    const assignees = userIds(store, request, 'assignee_ids');
    if (assignees !== undefined) d.assigneeIds = assignees;
    if (body.confidential !== undefined) d.confidential = boolParam(body, 'confidential');
    const milestone = bodyString(request, 'milestone_title');
    if (milestone !== undefined) d.milestone = milestone === '' ? null : milestone;
    const now = kit.now();
    const event = enumParam(body, 'state_event', ['close', 'reopen']);
    if (event === 'close' && found.state === 'opened') {
      found.state = 'closed';
      found.closedAt = now;
      d.closedById = user.id;
    } else if (event === 'reopen' && found.state === 'closed') {
      found.state = 'opened';
      found.closedAt = null;
      d.closedById = null;
    }
    found.updatedAt = now;
    return fullIssue(store, found, project, baseUrl(request));
  });

  scope.get('/projects/:id/issues/:issue_iid/links', async (request, reply) => {
    if (!readable(request, reply)) return reply;
    const project = kit.project(request, reply);
    if (!project) return reply;
    const found = issueOr404(request, reply, project);
    if (!found) return reply;
    const base = baseUrl(request);
    return workOf(store)
      .links.filter((l) => l.sourceIssueId === found.id || l.targetIssueId === found.id)
      .flatMap((l) => {
        const otherId = l.sourceIssueId === found.id ? l.targetIssueId : l.sourceIssueId;
        const other = store.issues.find((i) => i.id === otherId);
        const otherProject = other ? store.projects.get(other.projectId) : undefined;
        if (!other || !otherProject || !kit.api.findProject(kit.caller(request), String(otherProject.id))) return [];
        return [
          {
            ...fullIssue(store, other, otherProject, base),
            issue_link_id: l.id,
            link_type: l.linkType,
            link_created_at: new Date(l.createdAt).toISOString(),
            link_updated_at: new Date(l.createdAt).toISOString(),
          },
        ];
      });
  });

  scope.post('/projects/:id/issues/:issue_iid/links', async (request, reply) => {
    const project = kit.project(request, reply);
    if (!project) return reply;
    const found = issueOr404(request, reply, project);
    if (!found) return reply;
    if (!requireMember(kit, request, reply, project)) return reply;
    const targetProject = kit.api.findProject(kit.caller(request), bodyString(request, 'target_project_id') ?? '');
    const target = targetProject ? findIssue(targetProject, Number(bodyString(request, 'target_issue_iid'))) : undefined;
    if (!targetProject || !target) return reply.code(404).send({ message: '404 Not found' });
    const link = {
      id: workOf(store).nextId('link'),
      sourceIssueId: found.id,
      targetIssueId: target.id,
      linkType: 'relates_to' as const,
      createdAt: kit.now(),
    };
    workOf(store).links.push(link);
    const base = baseUrl(request);
    return reply.code(201).send({
      source_issue: fullIssue(store, found, project, base),
      target_issue: fullIssue(store, target, targetProject, base),
      link_type: link.linkType,
    });
  });

  scope.get('/projects/:id/issues/:issue_iid/related_merge_requests', async (request, reply) => {
    if (!readable(request, reply)) return reply;
    const project = kit.project(request, reply);
    if (!project) return reply;
    const found = issueOr404(request, reply, project);
    if (!found) return reply;
    return paginate(request, reply, relatedMergeRequests(store, found)).map((m) =>
      fullMergeRequest(store, m, project, baseUrl(request), false),
    );
  });

  registerNoteRoutes(scope, kit, 'issues', (project, iid) => {
    const record = findIssue(project, iid);
    return record ? { type: 'Issue', record } : undefined;
  });
}
