/**
 * GitLab's repository REST API on the dev forge (issue 18 item 4): files (JSON, raw, blame), tree, commits (list,
 * single with stats, diff, create with actions), compare, branches, tags, protected branches and protected tags, with GitLab's
 * parameter names, status codes and error bodies. Registered inside the API scope (devforge.api.routes.ts), so
 * authentication, scopes, faults and pagination headers are the API's own.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { boolParam, intParam, paginate, ParamError, type ApiRouteKit } from './devforge.api.routes.ts';
import { baseUrl, param } from './devforge.http.ts';
import * as entities from './devforge.repository.entities.ts';
import {
  ancestors,
  blame,
  commitActions,
  commitDiff,
  diffStats,
  isBinary,
  lastCommitFor,
  mergeBase,
  resolveRef,
  RepositoryError,
  touches,
  treeDiff,
  treeEntries,
  type CommitAction,
  type CommitRecord,
  type DevForgeRepositories,
  type RepositoryRecord,
} from './devforge.repository.ts';
import type { ProjectRecord } from './devforge.types.ts';

export interface RepositoryRouteDeps {
  repositories: DevForgeRepositories;
  now: () => number;
  /** The newest pipeline of a commit, as `last_pipeline` shows it (devforge.ci.ts), or null. */
  lastPipeline?: (project: ProjectRecord, sha: string) => Record<string, unknown> | null;
  /** The release of a tag, as a tag's `release` shows it (`{tag_name, description}`), or null. */
  releaseOf?: (project: ProjectRecord, tag: string) => { tag_name: string; description: string } | null;
}

const ACTIONS = ['create', 'update', 'delete', 'move', 'chmod'] as const;
const ACCESS_LEVELS = [0, 30, 40, 60];

/** GitLab's 404 body for a resource. */
const notFound = (reply: FastifyReply, what: string) => reply.code(404).send({ message: `404 ${what} Not Found` });

export function repositoryRoutes(deps: RepositoryRouteDeps) {
  return (scope: FastifyInstance, kit: ApiRouteKit): void => {
    // Protected-branch ids: above the seed's (`projectId * 100 + 1`).
    let ruleIds = 1_000_000;
    /** The project, its repository, for a read; undefined once an error was sent. */
    const readable = (request: FastifyRequest, reply: FastifyReply): { p: ProjectRecord; repo: RepositoryRecord } | undefined => {
      const p = kit.readableProject(request, reply);
      return p && { p, repo: deps.repositories.of(p.id) };
    };
    /** Same for a write: a signed-in member with the `api` scope (GitLab: Developer or above). */
    const writable = (request: FastifyRequest, reply: FastifyReply) => {
      const found = kit.writableProject(request, reply);
      return found && { p: found.project, repo: deps.repositories.of(found.project.id), user: found.user };
    };
    const required = (source: unknown, name: string): string => {
      const value = param(source, name);
      if (value === undefined) throw new ParamError({ error: `${name} is missing` });
      if (value.trim() === '') throw new ParamError({ error: `${name} is empty` });
      return value;
    };
    const release = (p: ProjectRecord, tag: string) => deps.releaseOf?.(p, tag) ?? null;
    const paramOf = (request: FastifyRequest, name: string): string => (request.params as Record<string, string>)[name] ?? '';
    const refOr = (request: FastifyRequest, repo: RepositoryRecord, name = 'ref'): string =>
      param(request.query, name) || repo.defaultBranch;
    const failed = (reply: FastifyReply, error: unknown) => {
      if (error instanceof RepositoryError) return reply.code(error.status).send({ message: error.message });
      throw error;
    };
    const detail = (c: CommitRecord, p: ProjectRecord, repo: RepositoryRecord, base: string, stats: boolean) =>
      entities.commitDetail(c, p, base, {
        ...(stats ? { stats: diffStats(commitDiff(repo, c)) } : {}),
        lastPipeline: deps.lastPipeline?.(p, c.id) ?? null,
      });

    // Files ---------------------------------------------------------------------------------------------------
    const fileAt = (request: FastifyRequest, reply: FastifyReply, refRequired: boolean) => {
      const found = readable(request, reply);
      if (!found) return undefined;
      const ref = refRequired ? required(request.query, 'ref') : refOr(request, found.repo);
      const path = paramOf(request, 'file_path');
      const at = resolveRef(found.repo, ref);
      const file = at?.files.get(path);
      if (!at || !file) {
        notFound(reply, 'File');
        return undefined;
      }
      return { ...found, ref, path, at, file };
    };
    scope.get('/projects/:id/repository/files/:file_path', async (request, reply) => {
      const f = fileAt(request, reply, true);
      if (!f) return reply;
      return entities.repositoryFile(f.path, f.file, f.ref, f.at, lastCommitFor(f.repo, f.at, f.path));
    });
    scope.get('/projects/:id/repository/files/:file_path/raw', async (request, reply) => {
      const f = fileAt(request, reply, false);
      if (!f) return reply;
      return reply.type('text/plain; charset=utf-8').send(f.file.content);
    });
    scope.get('/projects/:id/repository/files/:file_path/blame', async (request, reply) => {
      const f = fileAt(request, reply, true);
      if (!f) return reply;
      const ranges = blame(f.repo, f.at, f.path) ?? [];
      const start = intParam(request.query, 'range[start]', 1);
      const end = intParam(request.query, 'range[end]', Number.MAX_SAFE_INTEGER);
      if (start < 1 || end < start) throw new ParamError({ error: 'range[start] and range[end] are invalid' });
      return ranges
        .map((r) => {
          const from = Math.max(start, r.start);
          const to = Math.min(end, r.start + r.lines.length - 1);
          return to < from ? undefined : { ...r, lines: r.lines.slice(from - r.start, to - r.start + 1), start: from };
        })
        .filter((r) => r !== undefined)
        .map(entities.blameRange);
    });

    // Tree ----------------------------------------------------------------------------------------------------
    scope.get('/projects/:id/repository/tree', async (request, reply) => {
      const found = readable(request, reply);
      if (!found) return reply;
      const at = resolveRef(found.repo, refOr(request, found.repo));
      const entries = at ? treeEntries(at, param(request.query, 'path') ?? '', boolParam(request.query, 'recursive')) : undefined;
      if (!entries) return notFound(reply, 'Tree');
      if (param(request.query, 'pagination') === 'keyset') {
        // Keyset (GitLab 17.1+): `page_token` is the last path seen; only `Link: rel="next"` comes back.
        const perPage = Math.min(100, Math.max(1, intParam(request.query, 'per_page', 20)));
        const token = param(request.query, 'page_token');
        const from = token === undefined ? 0 : entries.findIndex((e) => e.path === token) + 1;
        const page = entries.slice(from, from + perPage);
        const last = page[page.length - 1];
        if (last && from + perPage < entries.length) {
          const url = new URL(request.url, baseUrl(request));
          url.searchParams.set('page_token', last.path);
          reply.header('link', `<${url.href}>; rel="next"`);
        }
        return page;
      }
      return paginate(request, reply, entries);
    });

    // Commits -------------------------------------------------------------------------------------------------
    scope.get('/projects/:id/repository/commits', async (request, reply) => {
      const found = readable(request, reply);
      if (!found) return reply;
      const { p, repo } = found;
      const head = resolveRef(repo, refOr(request, repo, 'ref_name'));
      if (!head) return notFound(reply, 'Commit');
      const path = param(request.query, 'path');
      const since = param(request.query, 'since');
      const until = param(request.query, 'until');
      const sinceMs = since ? Date.parse(since) : undefined;
      const untilMs = until ? Date.parse(until) : undefined;
      if (Number.isNaN(sinceMs) || Number.isNaN(untilMs)) throw new ParamError({ error: 'since, until are invalid' });
      const commits = ancestors(repo, head).filter(
        (c) =>
          (path === undefined || path === '' || touches(repo, c, path)) &&
          (sinceMs === undefined || c.committedAt >= sinceMs) &&
          (untilMs === undefined || c.committedAt <= untilMs),
      );
      const withStats = boolParam(request.query, 'with_stats');
      const base = baseUrl(request);
      return paginate(request, reply, commits).map((c) =>
        withStats ? { ...entities.commit(c, p, base), stats: diffStats(commitDiff(repo, c)) } : entities.commit(c, p, base),
      );
    });
    scope.get('/projects/:id/repository/commits/:sha', async (request, reply) => {
      const found = readable(request, reply);
      if (!found) return reply;
      const c = resolveRef(found.repo, paramOf(request, 'sha'));
      if (!c) return notFound(reply, 'Commit');
      const stats = param(request.query, 'stats') === undefined ? true : boolParam(request.query, 'stats');
      return detail(c, found.p, found.repo, baseUrl(request), stats);
    });
    scope.get('/projects/:id/repository/commits/:sha/diff', async (request, reply) => {
      const found = readable(request, reply);
      if (!found) return reply;
      const c = resolveRef(found.repo, paramOf(request, 'sha'));
      if (!c) return notFound(reply, 'Commit');
      return paginate(request, reply, commitDiff(found.repo, c)).map(entities.diff);
    });
    scope.post('/projects/:id/repository/commits', async (request, reply) => {
      const body = request.body;
      const branchName = required(body, 'branch');
      const message = required(body, 'commit_message');
      const rawActions = (body as { actions?: unknown } | null)?.actions;
      if (!Array.isArray(rawActions)) throw new ParamError({ error: 'actions is missing' });
      const actions: CommitAction[] = rawActions.map((raw: unknown, i) => {
        const action = param(raw, 'action');
        if (!ACTIONS.includes(action as CommitAction['action']))
          throw new ParamError({ error: `actions[${i}][action] does not have a valid value` });
        const filePath = param(raw, 'file_path');
        if (!filePath) throw new ParamError({ error: `actions[${i}][file_path] is missing` });
        const content = param(raw, 'content');
        const encoding = param(raw, 'encoding') ?? 'text';
        if (encoding !== 'text' && encoding !== 'base64')
          throw new ParamError({ error: `actions[${i}][encoding] does not have a valid value` });
        const mode = (raw as { execute_filemode?: unknown }).execute_filemode;
        return {
          action: action as CommitAction['action'],
          file_path: filePath,
          previous_path: param(raw, 'previous_path'),
          content: content === undefined ? undefined : Buffer.from(content, encoding === 'base64' ? 'base64' : 'utf8'),
          last_commit_id: param(raw, 'last_commit_id'),
          execute_filemode: typeof mode === 'boolean' ? mode : undefined,
        };
      });
      const found = writable(request, reply);
      if (!found) return reply;
      try {
        const created = commitActions(found.repo, {
          branch: branchName,
          startBranch: param(body, 'start_branch'),
          message,
          author: { name: param(body, 'author_name') ?? found.user.name, email: param(body, 'author_email') ?? found.user.email },
          at: deps.now(),
          actions,
        });
        found.p.lastActivityAt = deps.now();
        return reply.code(201).send(detail(created, found.p, found.repo, baseUrl(request), true));
      } catch (error) {
        return failed(reply, error);
      }
    });

    // Compare -------------------------------------------------------------------------------------------------
    scope.get('/projects/:id/repository/compare', async (request, reply) => {
      const from = required(request.query, 'from');
      const to = required(request.query, 'to');
      const found = readable(request, reply);
      if (!found) return reply;
      const { p, repo } = found;
      const a = resolveRef(repo, from);
      const b = resolveRef(repo, to);
      if (!a || !b) return notFound(reply, 'Ref');
      // Default: from the merge base (`from...to`); `straight=true` compares the two trees directly.
      const straight = boolParam(request.query, 'straight');
      const start = straight ? a : (mergeBase(repo, a, b) ?? a);
      const inFrom = new Set(ancestors(repo, start).map((c) => c.id));
      const commits = ancestors(repo, b)
        .filter((c) => !inFrom.has(c.id))
        .reverse();
      const base = baseUrl(request);
      return {
        commit: commits.length > 0 ? entities.commit(b, p, base) : null,
        commits: commits.map((c) => entities.commit(c, p, base)),
        diffs: treeDiff(start.files, b.files).map(entities.diff),
        compare_timeout: false,
        compare_same_ref: a.id === b.id,
        web_url: `${base}/${entities.projectPath(p)}/-/compare/${a.id.slice(0, 8)}...${b.id.slice(0, 8)}`,
      };
    });

    // Branches ------------------------------------------------------------------------------------------------
    const branchEntity = (name: string, repo: RepositoryRecord, p: ProjectRecord, base: string) => {
      const head = repo.commits.get(repo.branches.get(name) ?? '');
      if (!head) return undefined;
      const main = resolveRef(repo, repo.defaultBranch);
      const merged = name !== repo.defaultBranch && main !== undefined && ancestors(repo, main).some((c) => c.id === head.id);
      return entities.branch(name, head, repo, p, base, merged);
    };
    scope.get('/projects/:id/repository/branches', async (request, reply) => {
      const found = readable(request, reply);
      if (!found) return reply;
      const search = param(request.query, 'search');
      // GitLab's search: `^term` anchors at the start, `term$` at the end, otherwise a substring.
      const matches = (name: string) => {
        if (!search) return true;
        const lower = name.toLowerCase();
        const term = search.toLowerCase().replace(/^\^/, '').replace(/\$$/, '');
        if (search.startsWith('^')) return lower.startsWith(term);
        if (search.endsWith('$')) return lower.endsWith(term);
        return lower.includes(term);
      };
      const names = [...found.repo.branches.keys()].filter(matches).sort();
      const base = baseUrl(request);
      return paginate(request, reply, names).map((n) => branchEntity(n, found.repo, found.p, base));
    });
    scope.get('/projects/:id/repository/branches/:branch', async (request, reply) => {
      const found = readable(request, reply);
      if (!found) return reply;
      return branchEntity(paramOf(request, 'branch'), found.repo, found.p, baseUrl(request)) ?? notFound(reply, 'Branch');
    });
    scope.post('/projects/:id/repository/branches', async (request, reply) => {
      const source = { ...(request.query as object), ...(request.body as object | null) };
      const name = required(source, 'branch');
      const ref = required(source, 'ref');
      const found = writable(request, reply);
      if (!found) return reply;
      if (found.repo.branches.has(name)) return reply.code(400).send({ message: 'Branch already exists' });
      if (!/^[\w.\-/]+$/.test(name) || name.includes('..') || name.endsWith('/'))
        return reply.code(400).send({ message: 'Branch name is invalid' });
      const at = resolveRef(found.repo, ref);
      if (!at) return reply.code(400).send({ message: 'Invalid reference name: ' + ref });
      found.repo.branches.set(name, at.id);
      return reply.code(201).send(branchEntity(name, found.repo, found.p, baseUrl(request)));
    });
    scope.delete('/projects/:id/repository/branches/:branch', async (request, reply) => {
      const found = writable(request, reply);
      if (!found) return reply;
      const name = paramOf(request, 'branch');
      if (name === found.repo.defaultBranch) return reply.code(405).send({ message: 'Cannot remove HEAD branch' });
      if (!found.repo.branches.has(name)) return notFound(reply, 'Branch');
      found.repo.branches.delete(name);
      return reply.code(204).send();
    });

    // Tags ----------------------------------------------------------------------------------------------------
    scope.get('/projects/:id/repository/tags', async (request, reply) => {
      const found = readable(request, reply);
      if (!found) return reply;
      const search = param(request.query, 'search')?.toLowerCase();
      const tags = [...found.repo.tags.values()]
        .filter((t) => !search || t.name.toLowerCase().includes(search))
        // GitLab's default order: `updated` descending (the newest tag first).
        .sort((a, b) => b.createdAt - a.createdAt || (a.name < b.name ? 1 : -1));
      const base = baseUrl(request);
      return paginate(request, reply, tags).map((t) =>
        entities.tag(
          t,
          found.repo.commits.get(t.target) as CommitRecord,
          found.p,
          base,
          release(found.p, t.name),
          found.repo.protectedTags,
        ),
      );
    });
    scope.get('/projects/:id/repository/tags/:tag_name', async (request, reply) => {
      const found = readable(request, reply);
      if (!found) return reply;
      const t = found.repo.tags.get(paramOf(request, 'tag_name'));
      const target = t ? found.repo.commits.get(t.target) : undefined;
      if (!t || !target) return notFound(reply, 'Tag');
      return entities.tag(t, target, found.p, baseUrl(request), release(found.p, t.name), found.repo.protectedTags);
    });
    scope.post('/projects/:id/repository/tags', async (request, reply) => {
      const source = { ...(request.query as object), ...(request.body as object | null) };
      const name = required(source, 'tag_name');
      const ref = required(source, 'ref');
      const found = writable(request, reply);
      if (!found) return reply;
      if (found.repo.tags.has(name)) return reply.code(400).send({ message: `Tag ${name} already exists` });
      if (!/^[\w.\-/]+$/.test(name)) return reply.code(400).send({ message: 'Tag name invalid' });
      const at = resolveRef(found.repo, ref);
      if (!at) return reply.code(400).send({ message: 'Target ' + ref + ' is invalid' });
      const created = { name, target: at.id, message: param(source, 'message') ?? '', createdAt: deps.now() };
      found.repo.tags.set(name, created);
      return reply
        .code(201)
        .send(entities.tag(created, at, found.p, baseUrl(request), release(found.p, created.name), found.repo.protectedTags));
    });
    scope.delete('/projects/:id/repository/tags/:tag_name', async (request, reply) => {
      const found = writable(request, reply);
      if (!found) return reply;
      if (!found.repo.tags.delete(paramOf(request, 'tag_name'))) return notFound(reply, 'Tag');
      return reply.code(204).send();
    });

    // Protected branches --------------------------------------------------------------------------------------
    scope.get('/projects/:id/protected_branches', async (request, reply) => {
      const found = readable(request, reply);
      if (!found) return reply;
      return paginate(request, reply, [...found.repo.protectedBranches.values()]).map(entities.protectedBranch);
    });
    scope.get('/projects/:id/protected_branches/:name', async (request, reply) => {
      const found = readable(request, reply);
      if (!found) return reply;
      const rule = found.repo.protectedBranches.get(paramOf(request, 'name'));
      return rule ? entities.protectedBranch(rule) : notFound(reply, 'Protected Branch');
    });
    scope.post('/projects/:id/protected_branches', async (request, reply) => {
      const source = { ...(request.query as object), ...(request.body as object | null) };
      const name = required(source, 'name');
      const level = (field: string, fallback: number) => {
        const value = intParam(source, field, fallback);
        if (!ACCESS_LEVELS.includes(value)) throw new ParamError({ error: `${field} does not have a valid value` });
        return value;
      };
      const push = level('push_access_level', 40);
      const merge = level('merge_access_level', 40);
      const found = writable(request, reply);
      if (!found) return reply;
      if (found.repo.protectedBranches.has(name)) return reply.code(409).send({ message: `Protected branch '${name}' already exists` });
      ruleIds += 1;
      const rule = {
        id: ruleIds,
        name,
        pushAccessLevel: push,
        mergeAccessLevel: merge,
        allowForcePush: boolParam(source, 'allow_force_push'),
      };
      found.repo.protectedBranches.set(name, rule);
      return reply.code(201).send(entities.protectedBranch(rule));
    });
    scope.delete('/projects/:id/protected_branches/:name', async (request, reply) => {
      const found = writable(request, reply);
      if (!found) return reply;
      if (!found.repo.protectedBranches.delete(paramOf(request, 'name'))) return notFound(reply, 'Protected Branch');
      return reply.code(204).send();
    });

    // Protected tags: `:name` is the rule's name, matched exactly (a wildcard rule is fetched by its pattern) --------
    scope.get('/projects/:id/protected_tags', async (request, reply) => {
      const found = readable(request, reply);
      if (!found) return reply;
      return paginate(request, reply, [...found.repo.protectedTags.values()]).map(entities.protectedTag);
    });
    scope.get('/projects/:id/protected_tags/:name', async (request, reply) => {
      const found = readable(request, reply);
      if (!found) return reply;
      const rule = found.repo.protectedTags.get(paramOf(request, 'name'));
      return rule ? entities.protectedTag(rule) : notFound(reply, 'Protected Tag');
    });
    scope.post('/projects/:id/protected_tags', async (request, reply) => {
      const source = { ...(request.query as object), ...(request.body as object | null) };
      const name = required(source, 'name');
      const create = intParam(source, 'create_access_level', 40);
      if (!ACCESS_LEVELS.includes(create)) throw new ParamError({ error: 'create_access_level does not have a valid value' });
      const found = writable(request, reply);
      if (!found) return reply;
      // GitLab's model validation (name uniqueness), not the 409 of protected branches.
      if (found.repo.protectedTags.has(name)) return reply.code(422).send({ message: ['Name has already been taken'] });
      ruleIds += 1;
      const rule = { id: ruleIds, name, createAccessLevel: create };
      found.repo.protectedTags.set(name, rule);
      return reply.code(201).send(entities.protectedTag(rule));
    });
    scope.delete('/projects/:id/protected_tags/:name', async (request, reply) => {
      const found = writable(request, reply);
      if (!found) return reply;
      if (!found.repo.protectedTags.delete(paramOf(request, 'name'))) return notFound(reply, 'Protected Tag');
      return reply.code(204).send();
    });

    // Search scopes this module's data answers (devforge.issues.ts runs the search): GitLab searches the default
    // branch's files (`blobs`) and the commits reachable from it (`commits`), case-insensitively.
    const headOf = (p: ProjectRecord) => {
      const repo = deps.repositories.of(p.id);
      const head = resolveRef(repo, repo.defaultBranch);
      return head && { repo, head };
    };
    kit.searchScopes.set('blobs', (projects, term) =>
      projects.flatMap((p) => {
        const found = headOf(p);
        if (!found) return [];
        return [...found.head.files]
          .filter(([, file]) => !isBinary(file.content))
          .flatMap(([path, file]) => {
            const blob = entities.searchBlob(path, file.content.toString('utf8'), term, found.repo.defaultBranch, p);
            return blob ? [blob] : [];
          });
      }),
    );
    kit.searchScopes.set('commits', (projects, term, base) =>
      projects.flatMap((p) => {
        const found = headOf(p);
        if (!found) return [];
        const needle = term.toLowerCase();
        return ancestors(found.repo, found.head)
          .filter((c) => c.message.toLowerCase().includes(needle))
          .map((c) => ({ ...entities.commit(c, p, base), project_id: p.id }));
      }),
    );
  };
}
