/**
 * GitLab's project CI/CD variables, members and webhooks REST API on the dev forge (issue 18 item 4). Variables,
 * hooks and adding, changing or removing members need a Maintainer (GitLab's `admin_cicd_variables`,
 * `admin_project` and `admin_project_member` abilities), and an Owner's membership needs an Owner
 * (`manage_owners`): others get `403 Forbidden`, someone who cannot see the project the usual 404. A hook's secret
 * token is write-only.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { boolParam, paginate, ParamError, type ApiRouteKit } from './devforge.api.routes.ts';
import * as entities from './devforge.extras.entities.ts';
import {
  accessLevelOf,
  HOOK_EVENTS,
  memberOf,
  OWNER,
  type DevForgeExtras,
  type HookRecord,
  type MemberRecord,
  type VariableRecord,
} from './devforge.extras.ts';
import { baseUrl, mergedParams, param } from './devforge.http.ts';
import type { ProjectRecord } from './devforge.types.ts';
import { dateParam, requiredParam } from './devforge.wiki-releases.routes.ts';

export interface AdminRouteDeps {
  extras: DevForgeExtras;
  now: () => number;
}

const MAINTAINER = 40;
/** A maskable value (GitLab's `Ci::Maskable` rule, simplified): one line of at least 8 characters. */
const MASKABLE = /^\S{8,}$/;
/** The levels a project member can be given (`Gitlab::Access.all_values`; Minimal access is for groups only). */
const MEMBER_LEVELS = [10, 15, 20, 30, 40, 50];
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

    /** The project for a Maintainer's read or write, or undefined once answered. */
    const maintained = (request: FastifyRequest, reply: FastifyReply, write: boolean): ProjectRecord | undefined =>
      kit.memberProject(request, reply, write, MAINTAINER)?.project;

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
    /**
     * Applies the variable parameters present in `source`; GitLab's validation message per field, or undefined.
     * One variable per key (GitLab allows one per key and environment scope).
     */
    const applyVariable = (v: VariableRecord, source: Record<string, unknown>): Record<string, string[]> | undefined => {
      const value = param(source, 'value');
      if (value !== undefined) v.value = value;
      const type = param(source, 'variable_type');
      if (type !== undefined) {
        if (type !== 'env_var' && type !== 'file') throw new ParamError({ error: 'variable_type does not have a valid value' });
        v.variableType = type;
      }
      for (const [name, field] of [
        ['protected', 'protected'],
        ['masked', 'masked'],
        ['raw', 'raw'],
      ] as const)
        if (param(source, name) !== undefined) v[field] = boolParam(source, name);
      const scopeName = param(source, 'environment_scope');
      if (scopeName !== undefined && scopeName !== '') v.environmentScope = scopeName;
      const description = param(source, 'description');
      if (description !== undefined) v.description = description;
      // `Ci::Maskable`: a masked value is one line of at least 8 characters a job log can hide.
      if (v.masked && !MASKABLE.test(v.value)) return { value: ['is invalid'] };
      return undefined;
    };
    scope.post('/projects/:id/variables', async (request, reply) => {
      const source = mergedParams(request);
      const p = maintained(request, reply, true);
      if (!p) return reply;
      const key = requiredParam(source, 'key');
      if (param(source, 'value') === undefined) throw new ParamError({ error: 'value is missing' });
      const variables = extras.of(p.id).variables;
      if (!/^[a-zA-Z0-9_]{1,255}$/.test(key))
        return reply.code(400).send({ message: { key: ["can contain only letters, digits and '_'."] } });
      if (variables.has(key)) return reply.code(400).send({ message: { key: [`(${key}) has already been taken`] } });
      const v: VariableRecord = {
        key,
        value: '',
        variableType: 'env_var',
        protected: false,
        masked: false,
        hidden: boolParam(source, 'masked_and_hidden'),
        raw: false,
        environmentScope: '*',
        description: null,
      };
      if (v.hidden) v.masked = true;
      const invalid = applyVariable(v, source);
      if (invalid || (v.hidden && !v.masked))
        return reply.code(400).send({ message: invalid ?? { masked: ['must be true for a hidden variable'] } });
      variables.set(key, v);
      return reply.code(201).send(entities.variable(v));
    });
    scope.put('/projects/:id/variables/:key', async (request, reply) => {
      const source = mergedParams(request);
      const p = maintained(request, reply, true);
      if (!p) return reply;
      const v = extras.of(p.id).variables.get((request.params as { key: string }).key);
      if (!v) return notFound(reply, 'Variable');
      // Validated on a copy, so a refused update changes nothing; a hidden variable stays masked and hidden.
      const draft: VariableRecord = { ...v };
      const invalid = applyVariable(draft, source);
      if (invalid) return reply.code(400).send({ message: invalid });
      if (v.hidden && !draft.masked) return reply.code(400).send({ message: { masked: ['cannot be unset for a hidden variable'] } });
      Object.assign(v, draft);
      return entities.variable(v);
    });
    scope.delete('/projects/:id/variables/:key', async (request, reply) => {
      const p = maintained(request, reply, true);
      if (!p) return reply;
      const variables = extras.of(p.id).variables;
      const key = (request.params as { key: string }).key;
      if (!variables.has(key)) return notFound(reply, 'Variable');
      variables.delete(key);
      return reply.code(204).send();
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
      return paginate(request, reply, members).map((u) => {
        const m = memberOf(extras, p, u.id);
        if (!m) throw new Error(`user ${String(u.id)} is listed as a member of project ${String(p.id)} without a membership`);
        return entities.member(u, m, kit.author(m.createdById), base);
      });
    };
    // The dev forge has no group memberships: inherited members are the direct ones.
    scope.get('/projects/:id/members', listMembers);
    scope.get('/projects/:id/members/all', listMembers);
    const memberUserId = (request: FastifyRequest): number => {
      const raw = (request.params as { user_id: string }).user_id;
      if (!/^\d+$/.test(raw)) throw new ParamError({ error: 'user_id is invalid' });
      return Number(raw);
    };
    const memberJson = (request: FastifyRequest, userId: number, m: MemberRecord) =>
      entities.member(kit.author(userId), m, kit.author(m.createdById), baseUrl(request));
    scope.get('/projects/:id/members/:user_id', async (request, reply) => {
      const p = kit.readableProject(request, reply);
      if (!p) return reply;
      const userId = memberUserId(request);
      const m = memberOf(extras, p, userId);
      if (!m) return notFound(reply, 'Member');
      return memberJson(request, userId, m);
    });
    const levelParam = (source: unknown): number => {
      const raw = requiredParam(source, 'access_level');
      const level = Number(raw);
      if (!MEMBER_LEVELS.includes(level)) throw new ParamError({ error: 'access_level does not have a valid value' });
      return level;
    };
    /**
     * Whether a caller of `actorLevel` may set or remove the membership of `userId`, whose level is `from` and
     * becomes `to` (undefined: none): an Owner's membership is an Owner's to manage, the last Owner stays one, and
     * the owner of a personal project's namespace is not a membership anyone can change.
     */
    const mayManage = (p: ProjectRecord, actorLevel: number, userId: number, from: number | undefined, to: number | undefined) => {
      if (p.namespace.kind === 'user' && userId === p.creatorId) return false;
      if (actorLevel < OWNER && (from === OWNER || to === OWNER)) return false;
      const owners = p.memberIds.filter((id) => accessLevelOf(extras, p, id) === OWNER).length;
      return !(from === OWNER && to !== OWNER && owners <= 1);
    };

    // POST: GitLab's `add_single_member_by_user_id` (a user_id or a username; one user per call here).
    scope.post('/projects/:id/members', async (request, reply) => {
      const source = mergedParams(request);
      const found = kit.memberProject(request, reply, true, MAINTAINER);
      if (!found) return reply;
      const { project: p, user } = found;
      const rawId = param(source, 'user_id');
      const username = param(source, 'username');
      if (rawId === undefined && username === undefined)
        throw new ParamError({ error: 'user_id, username are missing, at least one parameter must be provided' });
      if (rawId !== undefined && !/^\d+$/.test(rawId)) throw new ParamError({ error: 'user_id is invalid' });
      const level = levelParam(source);
      const expiresAt = dateParam(source, 'expires_at') ?? null;
      const target = rawId !== undefined ? kit.store.users.get(Number(rawId)) : kit.store.findUserByUsername(username ?? '');
      if (!target) return notFound(reply, 'User');
      if (p.memberIds.includes(target.id)) return reply.code(409).send({ message: 'Member already exists' });
      if (!mayManage(p, found.level, target.id, undefined, level)) return reply.code(403).send({ message: '403 Forbidden' });
      const m: MemberRecord = { accessLevel: level, createdAt: deps.now(), createdById: user.id, expiresAt };
      p.memberIds.push(target.id);
      extras.of(p.id).members.set(target.id, m);
      return reply.code(201).send(memberJson(request, target.id, m));
    });
    scope.put('/projects/:id/members/:user_id', async (request, reply) => {
      const source = mergedParams(request);
      const found = kit.memberProject(request, reply, true, MAINTAINER);
      if (!found) return reply;
      const p = found.project;
      const userId = memberUserId(request);
      const level = levelParam(source);
      const expiresAt = dateParam(source, 'expires_at');
      const m = memberOf(extras, p, userId);
      if (!m) return notFound(reply, 'Member');
      if (!mayManage(p, found.level, userId, m.accessLevel, level)) return reply.code(403).send({ message: '403 Forbidden' });
      const updated: MemberRecord = { ...m, accessLevel: level, ...(expiresAt !== undefined ? { expiresAt } : {}) };
      extras.of(p.id).members.set(userId, updated);
      return memberJson(request, userId, updated);
    });
    // DELETE: a Maintainer removes others; anyone may leave (GitLab's `destroy_project_member` on one's own).
    scope.delete('/projects/:id/members/:user_id', async (request, reply) => {
      const found = kit.memberProject(request, reply, true, 0);
      if (!found) return reply;
      const p = found.project;
      const userId = memberUserId(request);
      const m = memberOf(extras, p, userId);
      if (!m) return notFound(reply, 'Member');
      const self = userId === found.user.id;
      if ((!self && found.level < MAINTAINER) || !mayManage(p, self ? OWNER : found.level, userId, m.accessLevel, undefined))
        return reply.code(403).send({ message: '403 Forbidden' });
      p.memberIds.splice(p.memberIds.indexOf(userId), 1);
      extras.of(p.id).members.delete(userId);
      return reply.code(204).send();
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
