/**
 * GitLab's project wiki, releases and milestones REST API on the dev forge (issue 18 item 4), with GitLab's
 * parameter names, status codes and error bodies. Registered inside the API scope (devforge.api.routes.ts), so
 * authentication, scopes, faults and pagination headers are the API's own. Wiki pages and milestones are also
 * searchable (`wiki_blobs`, `milestones` scopes of the search API).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { boolParam, enumParam, paginate, ParamError, type ApiRouteKit } from './devforge.api.routes.ts';
import * as entities from './devforge.extras.entities.ts';
import {
  WIKI_FORMATS,
  wikiSlug,
  type DevForgeExtras,
  type MilestoneRecord,
  type ReleaseRecord,
  type WikiFormat,
} from './devforge.extras.ts';
import { baseUrl, mergedParams, param } from './devforge.http.ts';
import { resolveRef, type DevForgeRepositories } from './devforge.repository.ts';
import type { ProjectRecord } from './devforge.types.ts';

export interface WikiReleaseRouteDeps {
  extras: DevForgeExtras;
  repositories: DevForgeRepositories;
  now: () => number;
}

const notFound = (reply: FastifyReply, what: string) => reply.code(404).send({ message: `404 ${what} Not Found` });
const matches = (value: string, term: string) => value.toLowerCase().includes(term.toLowerCase());
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A required string parameter: Grape's `missing` and `empty` messages. */
export function requiredParam(source: unknown, name: string): string {
  const value = param(source, name);
  if (value === undefined) throw new ParamError({ error: `${name} is missing` });
  if (value.trim() === '') throw new ParamError({ error: `${name} is empty` });
  return value;
}

/** An optional `YYYY-MM-DD` parameter: null when given empty (clears it), undefined when absent. */
export function dateParam(source: unknown, name: string): string | null | undefined {
  const value = param(source, name);
  if (value === undefined) return undefined;
  if (value === '') return null;
  if (!DATE.test(value) || Number.isNaN(Date.parse(value))) throw new ParamError({ error: `${name} is invalid` });
  return value;
}

/** Every value of a list parameter given as a JSON array, `name[]=a&name[]=b` or a single value. */
function listOf(source: unknown, name: string): string[] | undefined {
  const s = (source ?? {}) as Record<string, unknown>;
  const raw = s[name] ?? s[`${name}[]`];
  if (raw === undefined) return undefined;
  return [raw].flat().filter((v): v is string => typeof v === 'string');
}

export function wikiReleaseRoutes(deps: WikiReleaseRouteDeps) {
  return (scope: FastifyInstance, kit: ApiRouteKit): void => {
    const { extras } = deps;
    const slugOf = (request: FastifyRequest) => (request.params as { slug: string }).slug;

    // Wikis --------------------------------------------------------------------------------------------------
    scope.get('/projects/:id/wikis', async (request, reply) => {
      const p = kit.readableProject(request, reply);
      if (!p) return reply;
      const withContent = boolParam(request.query, 'with_content');
      const pages = [...extras.of(p.id).wiki.values()].sort((a, b) => (a.slug < b.slug ? -1 : 1));
      return paginate(request, reply, pages).map((page) => entities.wikiPage(page, withContent));
    });
    scope.get('/projects/:id/wikis/:slug', async (request, reply) => {
      const p = kit.readableProject(request, reply);
      if (!p) return reply;
      const page = extras.of(p.id).wiki.get(slugOf(request));
      if (!page) return notFound(reply, 'Wiki Page');
      return entities.wikiPage(page, true);
    });
    const formatOf = (source: unknown): WikiFormat | undefined => enumParam(source, 'format', WIKI_FORMATS) as WikiFormat | undefined;
    scope.post('/projects/:id/wikis', async (request, reply) => {
      const source = mergedParams(request);
      const title = requiredParam(source, 'title');
      const content = param(source, 'content');
      if (content === undefined) throw new ParamError({ error: 'content is missing' });
      const format = formatOf(source) ?? 'markdown';
      const found = kit.writableProject(request, reply);
      if (!found) return reply;
      const wiki = extras.of(found.project.id).wiki;
      const slug = wikiSlug(title);
      if (wiki.has(slug)) return reply.code(400).send({ message: 'Duplicate page: A page with that title already exists' });
      const page = { slug, title, format, content, updatedAt: deps.now() };
      wiki.set(slug, page);
      return reply.code(201).send(entities.wikiPage(page, true));
    });
    scope.put('/projects/:id/wikis/:slug', async (request, reply) => {
      const source = mergedParams(request);
      const title = param(source, 'title');
      const content = param(source, 'content');
      const format = formatOf(source);
      if (title === undefined && content === undefined && format === undefined)
        throw new ParamError({ error: 'content, title, format are missing, at least one parameter must be provided' });
      if (title !== undefined && title.trim() === '') throw new ParamError({ error: 'title is empty' });
      const found = kit.writableProject(request, reply);
      if (!found) return reply;
      const wiki = extras.of(found.project.id).wiki;
      const page = wiki.get(slugOf(request));
      if (!page) return notFound(reply, 'Wiki Page');
      const slug = title === undefined ? page.slug : wikiSlug(title);
      if (slug !== page.slug && wiki.has(slug))
        return reply.code(400).send({ message: 'Duplicate page: A page with that title already exists' });
      wiki.delete(page.slug);
      const updated = {
        slug,
        title: title ?? page.title,
        format: format ?? page.format,
        content: content ?? page.content,
        updatedAt: deps.now(),
      };
      wiki.set(slug, updated);
      return entities.wikiPage(updated, true);
    });
    scope.delete('/projects/:id/wikis/:slug', async (request, reply) => {
      const found = kit.writableProject(request, reply);
      if (!found) return reply;
      if (!extras.of(found.project.id).wiki.delete(slugOf(request))) return notFound(reply, 'Wiki Page');
      return reply.code(204).send();
    });

    // Milestones ---------------------------------------------------------------------------------------------
    const milestonesOf = (p: ProjectRecord) => extras.of(p.id).milestones;
    const showMilestone = (request: FastifyRequest, p: ProjectRecord, m: MilestoneRecord) =>
      entities.milestone(m, p, baseUrl(request), deps.now());
    scope.get('/projects/:id/milestones', async (request, reply) => {
      const p = kit.readableProject(request, reply);
      if (!p) return reply;
      const state = enumParam(request.query, 'state', ['active', 'closed']);
      const search = param(request.query, 'search');
      const title = param(request.query, 'title');
      const iids = listOf(request.query, 'iids')?.map(Number);
      const list = milestonesOf(p)
        .filter(
          (m) =>
            (state === undefined || m.state === state) &&
            (!search || matches(m.title, search) || matches(m.description, search)) &&
            (title === undefined || m.title === title) &&
            (iids === undefined || iids.includes(m.iid)),
        )
        // GitLab's MilestonesFinder order: due date (none last), then title.
        .sort((a, b) => (a.dueDate ?? '9999').localeCompare(b.dueDate ?? '9999') || a.title.localeCompare(b.title));
      return paginate(request, reply, list).map((m) => showMilestone(request, p, m));
    });
    const milestoneParam = (request: FastifyRequest, p: ProjectRecord) => {
      const raw = (request.params as { milestone_id: string }).milestone_id;
      if (!/^\d+$/.test(raw)) throw new ParamError({ error: 'milestone_id is invalid' });
      return milestonesOf(p).find((m) => m.id === Number(raw));
    };
    scope.get('/projects/:id/milestones/:milestone_id', async (request, reply) => {
      const p = kit.readableProject(request, reply);
      if (!p) return reply;
      const m = milestoneParam(request, p);
      if (!m) return notFound(reply, 'Milestone');
      return showMilestone(request, p, m);
    });
    const titleTaken = (reply: FastifyReply) => reply.code(400).send({ message: { title: ['has already been taken'] } });
    scope.post('/projects/:id/milestones', async (request, reply) => {
      const source = mergedParams(request);
      const title = requiredParam(source, 'title');
      const dueDate = dateParam(source, 'due_date') ?? null;
      const startDate = dateParam(source, 'start_date') ?? null;
      const found = kit.writableProject(request, reply);
      if (!found) return reply;
      const list = milestonesOf(found.project);
      if (list.some((m) => m.title === title)) return titleTaken(reply);
      if (dueDate !== null && startDate !== null && dueDate < startDate)
        return reply.code(400).send({ message: { due_date: ['must be greater than start date'] } });
      const at = deps.now();
      const m: MilestoneRecord = {
        id: extras.nextMilestoneId(),
        iid: Math.max(0, ...list.map((x) => x.iid)) + 1,
        projectId: found.project.id,
        title,
        description: param(source, 'description') ?? '',
        state: 'active',
        dueDate,
        startDate,
        createdAt: at,
        updatedAt: at,
      };
      list.push(m);
      return reply.code(201).send(showMilestone(request, found.project, m));
    });
    scope.put('/projects/:id/milestones/:milestone_id', async (request, reply) => {
      const source = mergedParams(request);
      const title = param(source, 'title');
      if (title !== undefined && title.trim() === '') throw new ParamError({ error: 'title is empty' });
      const stateEvent = enumParam(source, 'state_event', ['close', 'activate']);
      const dueDate = dateParam(source, 'due_date');
      const startDate = dateParam(source, 'start_date');
      const description = param(source, 'description');
      if ([title, stateEvent, dueDate, startDate, description].every((v) => v === undefined))
        throw new ParamError({
          error: 'title, description, due_date, start_date, state_event are missing, at least one parameter must be provided',
        });
      const found = kit.writableProject(request, reply);
      if (!found) return reply;
      const m = milestoneParam(request, found.project);
      if (!m) return notFound(reply, 'Milestone');
      if (title !== undefined && title !== m.title && milestonesOf(found.project).some((x) => x.title === title)) return titleTaken(reply);
      if (title !== undefined) m.title = title;
      if (description !== undefined) m.description = description;
      if (dueDate !== undefined) m.dueDate = dueDate;
      if (startDate !== undefined) m.startDate = startDate;
      if (stateEvent !== undefined) m.state = stateEvent === 'close' ? 'closed' : 'active';
      m.updatedAt = deps.now();
      return showMilestone(request, found.project, m);
    });

    // Releases -----------------------------------------------------------------------------------------------
    const showRelease = (request: FastifyRequest, p: ProjectRecord, r: ReleaseRecord) =>
      entities.release(
        r,
        p,
        kit.author(r.authorId),
        deps.repositories.of(p.id).commits.get(r.sha),
        milestonesOf(p).filter((m) => r.milestoneIds.includes(m.id)),
        baseUrl(request),
        deps.now(),
      );
    const tagParam = (request: FastifyRequest) => (request.params as { tag_name: string }).tag_name;
    /** Milestone ids for titles, or the 400 GitLab answers for unknown ones. */
    const milestoneIds = (p: ProjectRecord, titles: string[]): number[] => {
      const unknown = titles.filter((t) => !milestonesOf(p).some((m) => m.title === t));
      if (unknown.length > 0) throw new ParamError({ message: `Milestone(s) not found: ${unknown.join(', ')}` });
      return milestonesOf(p)
        .filter((m) => titles.includes(m.title))
        .map((m) => m.id);
    };
    const releasedAt = (source: unknown): number | undefined => {
      const raw = param(source, 'released_at');
      if (raw === undefined || raw === '') return undefined;
      const at = Date.parse(raw);
      if (Number.isNaN(at)) throw new ParamError({ error: 'released_at is invalid' });
      return at;
    };
    scope.get('/projects/:id/releases', async (request, reply) => {
      const p = kit.readableProject(request, reply);
      if (!p) return reply;
      const orderBy = enumParam(request.query, 'order_by', ['released_at', 'created_at']) ?? 'released_at';
      const sort = enumParam(request.query, 'sort', ['asc', 'desc']) ?? 'desc';
      const key = (r: ReleaseRecord) => (orderBy === 'created_at' ? r.createdAt : r.releasedAt);
      const list = [...extras.of(p.id).releases.values()].sort((a, b) => (sort === 'asc' ? key(a) - key(b) : key(b) - key(a)));
      return paginate(request, reply, list).map((r) => showRelease(request, p, r));
    });
    scope.get('/projects/:id/releases/:tag_name', async (request, reply) => {
      const p = kit.readableProject(request, reply);
      if (!p) return reply;
      const r = extras.of(p.id).releases.get(tagParam(request));
      if (!r) return notFound(reply, 'Release');
      return showRelease(request, p, r);
    });
    scope.post('/projects/:id/releases', async (request, reply) => {
      const source = mergedParams(request);
      const tagName = requiredParam(source, 'tag_name');
      const at = releasedAt(source);
      const found = kit.writableProject(request, reply);
      if (!found) return reply;
      const p = found.project;
      const releases = extras.of(p.id).releases;
      if (releases.has(tagName)) return reply.code(409).send({ message: 'Release already exists' });
      const repo = deps.repositories.of(p.id);
      let tag = repo.tags.get(tagName);
      if (!tag) {
        const ref = param(source, 'ref');
        if (ref === undefined || ref === '') return reply.code(422).send({ message: 'Ref is not specified' });
        const target = resolveRef(repo, ref);
        if (!target) return reply.code(422).send({ message: 'Ref is invalid' });
        tag = { name: tagName, target: target.id, message: param(source, 'tag_message') ?? '', createdAt: deps.now() };
        repo.tags.set(tagName, tag);
      }
      const now = deps.now();
      const r: ReleaseRecord = {
        tagName,
        name: param(source, 'name') || tagName,
        description: param(source, 'description') ?? '',
        authorId: found.user.id,
        sha: tag.target,
        milestoneIds: milestoneIds(p, listOf(source, 'milestones') ?? []),
        createdAt: now,
        releasedAt: at ?? now,
      };
      releases.set(tagName, r);
      return reply.code(201).send(showRelease(request, p, r));
    });
    scope.put('/projects/:id/releases/:tag_name', async (request, reply) => {
      const source = mergedParams(request);
      const at = releasedAt(source);
      const found = kit.writableProject(request, reply);
      if (!found) return reply;
      const r = extras.of(found.project.id).releases.get(tagParam(request));
      if (!r) return notFound(reply, 'Release');
      const name = param(source, 'name');
      const description = param(source, 'description');
      const milestones = listOf(source, 'milestones');
      if (name !== undefined) r.name = name;
      if (description !== undefined) r.description = description;
      if (milestones !== undefined) r.milestoneIds = milestoneIds(found.project, milestones);
      if (at !== undefined) r.releasedAt = at;
      return showRelease(request, found.project, r);
    });

    // Search scopes this module's data answers (devforge.issues.ts runs the search).
    kit.searchScopes.set('wiki_blobs', (projects, term) =>
      projects.flatMap((p) =>
        [...extras.of(p.id).wiki.values()]
          .filter((page) => matches(page.title, term) || matches(page.content, term))
          .map((page) => entities.wikiBlob(page, p, term)),
      ),
    );
    kit.searchScopes.set('milestones', (projects, term, base) =>
      projects.flatMap((p) =>
        milestonesOf(p)
          .filter((m) => matches(m.title, term) || matches(m.description, term))
          .map((m) => entities.milestone(m, p, base, deps.now())),
      ),
    );
  };
}
