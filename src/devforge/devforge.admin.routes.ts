/**
 * GitLab's project CI/CD variables, members and webhooks REST API on the dev forge (issue 18 item 4). Variables
 * and hooks need a Maintainer (GitLab's `admin_cicd_variables` and `admin_project` abilities): others get
 * `403 Forbidden`, someone who cannot see the project the usual 404. A hook's secret token is write-only.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { boolParam, paginate, ParamError, READ_SCOPES, sendError, WRITE_SCOPES, type ApiRouteKit } from './devforge.api.routes.ts';
import * as entities from './devforge.extras.entities.ts';
import { accessLevelOf, HOOK_EVENTS, type DevForgeExtras, type HookRecord } from './devforge.extras.ts';
import { baseUrl, mergedParams, param } from './devforge.http.ts';
import type { ProjectRecord } from './devforge.types.ts';
import { requiredParam } from './devforge.wiki-releases.routes.ts';

export interface AdminRouteDeps {
  extras: DevForgeExtras;
  now: () => number;
}

const MAINTAINER = 40;
const notFound = (reply: FastifyReply, what: string) => reply.code(404).send({ message: `404 ${what} Not Found` });

/** Every value of a list parameter given as a JSON array, `name[]=a&name[]=b` or a single value. */
function numbersOf(source: unknown, name: string): number[] | undefined {
  const s = (source ?? {}) as Record<string, unknown>;
  const raw = s[name] ?? s[`${name}[]`];
  if (raw === undefined) return undefined;
  const values = [raw].flat().map((v) => Number(v));
  if (values.some((v) => !Number.isInteger(v))) throw new ParamError({ error: `${name} is invalid` });
  return values;
}

/** GitLab's URL check of a hook (`AddressableUrlValidator`): http or https, with a host. */
function hookUrlError(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'is blocked: Only allowed schemes are http, https';
    return undefined;
  } catch {
    return 'must be a valid URL';
  }
}

export function adminRoutes(deps: AdminRouteDeps) {
  return (scope: FastifyInstance, kit: ApiRouteKit): void => {
    const { extras } = deps;

    /** The project for a Maintainer's read (`read_api` suffices) or write (`api`), or undefined once answered. */
    const maintained = (request: FastifyRequest, reply: FastifyReply, write: boolean): ProjectRecord | undefined => {
      const user = kit.requireUser(request, reply);
      if (!user) return undefined;
      const denied = kit.scopeError(request, write ? WRITE_SCOPES : READ_SCOPES);
      if (denied) {
        sendError(reply, denied);
        return undefined;
      }
      const p = kit.project(request, reply);
      if (!p) return undefined;
      if ((accessLevelOf(extras, p, user.id) ?? 0) < MAINTAINER) {
        void reply.code(403).send({ message: '403 Forbidden' });
        return undefined;
      }
      return p;
    };

    // CI/CD variables ----------------------------------------------------------------------------------------
    scope.get('/projects/:id/variables', async (request, reply) => {
      const p = maintained(request, reply, false);
      if (!p) return reply;
      const list = [...extras.of(p.id).variables.values()].sort((a, b) => a.key.localeCompare(b.key));
      return paginate(request, reply, list).map(entities.variable);
    });
    scope.get('/projects/:id/variables/:key', async (request, reply) => {
      const p = maintained(request, reply, false);
      if (!p) return reply;
      const v = extras.of(p.id).variables.get((request.params as { key: string }).key);
      if (!v) return notFound(reply, 'Variable');
      return entities.variable(v);
    });

    // Members ------------------------------------------------------------------------------------------------
    const listMembers = (request: FastifyRequest, reply: FastifyReply) => {
      const p = kit.readableProject(request, reply);
      if (!p) return reply;
      const query = param(request.query, 'query')?.toLowerCase();
      const userIds = numbersOf(request.query, 'user_ids');
      const base = baseUrl(request);
      const members = p.memberIds
        .map((id) => kit.author(id))
        .filter(
          (u) =>
            (!query || u.username.toLowerCase().includes(query) || u.name.toLowerCase().includes(query)) &&
            (userIds === undefined || userIds.includes(u.id)),
        );
      return paginate(request, reply, members).map((u) =>
        entities.member(u, accessLevelOf(extras, p, u.id) ?? 0, kit.author(p.creatorId), p.createdAt, base),
      );
    };
    // The dev forge has no group memberships: inherited members are the direct ones.
    scope.get('/projects/:id/members', listMembers);
    scope.get('/projects/:id/members/all', listMembers);
    scope.get('/projects/:id/members/:user_id', async (request, reply) => {
      const p = kit.readableProject(request, reply);
      if (!p) return reply;
      const raw = (request.params as { user_id: string }).user_id;
      if (!/^\d+$/.test(raw)) throw new ParamError({ error: 'user_id is invalid' });
      const level = accessLevelOf(extras, p, Number(raw));
      if (level === undefined) return notFound(reply, 'Member');
      return entities.member(kit.author(Number(raw)), level, kit.author(p.creatorId), p.createdAt, baseUrl(request));
    });

    // Webhooks -----------------------------------------------------------------------------------------------
    const hookOf = (request: FastifyRequest, p: ProjectRecord): HookRecord | undefined => {
      const raw = (request.params as { hook_id: string }).hook_id;
      if (!/^\d+$/.test(raw)) throw new ParamError({ error: 'hook_id is invalid' });
      return extras.of(p.id).hooks.find((h) => h.id === Number(raw));
    };
    /** Applies the hook parameters present in `source`; a validation error as GitLab words it, or undefined. */
    const applyHook = (h: HookRecord, source: Record<string, unknown>): string | undefined => {
      const url = param(source, 'url');
      if (url !== undefined) {
        const invalid = hookUrlError(url);
        if (invalid) return invalid;
        h.url = url;
      }
      for (const event of HOOK_EVENTS) if (param(source, event) !== undefined) h.events[event] = boolParam(source, event);
      const name = param(source, 'name');
      if (name !== undefined) h.name = name;
      const description = param(source, 'description');
      if (description !== undefined) h.description = description;
      const token = param(source, 'token');
      if (token !== undefined) h.token = token;
      const filter = param(source, 'push_events_branch_filter');
      if (filter !== undefined) h.pushEventsBranchFilter = filter;
      if (param(source, 'enable_ssl_verification') !== undefined) h.enableSslVerification = boolParam(source, 'enable_ssl_verification');
      return undefined;
    };
    scope.get('/projects/:id/hooks', async (request, reply) => {
      const p = maintained(request, reply, false);
      if (!p) return reply;
      return paginate(request, reply, extras.of(p.id).hooks).map(entities.hook);
    });
    scope.get('/projects/:id/hooks/:hook_id', async (request, reply) => {
      const p = maintained(request, reply, false);
      if (!p) return reply;
      const h = hookOf(request, p);
      if (!h) return notFound(reply, 'Hook');
      return entities.hook(h);
    });
    scope.post('/projects/:id/hooks', async (request, reply) => {
      const source = mergedParams(request);
      requiredParam(source, 'url');
      const p = maintained(request, reply, true);
      if (!p) return reply;
      // GitLab's defaults: push events on, every other event off, TLS verified.
      const events = Object.fromEntries(HOOK_EVENTS.map((e) => [e, e === 'push_events'])) as HookRecord['events'];
      const h: HookRecord = {
        id: 0,
        projectId: p.id,
        url: '',
        name: '',
        description: '',
        token: '',
        events,
        pushEventsBranchFilter: '',
        enableSslVerification: true,
        createdAt: deps.now(),
      };
      const invalid = applyHook(h, source);
      if (invalid) return reply.code(422).send({ message: { url: [invalid] } });
      h.id = extras.nextHookId();
      extras.of(p.id).hooks.push(h);
      return reply.code(201).send(entities.hook(h));
    });
    scope.put('/projects/:id/hooks/:hook_id', async (request, reply) => {
      const source = mergedParams(request);
      const p = maintained(request, reply, true);
      if (!p) return reply;
      const h = hookOf(request, p);
      if (!h) return notFound(reply, 'Hook');
      // Validated on a copy, so a refused update changes nothing.
      const draft: HookRecord = { ...h, events: { ...h.events } };
      const invalid = applyHook(draft, source);
      if (invalid) return reply.code(422).send({ message: { url: [invalid] } });
      Object.assign(h, draft);
      return entities.hook(h);
    });
    scope.delete('/projects/:id/hooks/:hook_id', async (request, reply) => {
      const p = maintained(request, reply, true);
      if (!p) return reply;
      const h = hookOf(request, p);
      if (!h) return notFound(reply, 'Hook');
      const hooks = extras.of(p.id).hooks;
      hooks.splice(hooks.indexOf(h), 1);
      return reply.code(204).send();
    });
  };
}
