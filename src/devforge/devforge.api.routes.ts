/**
 * The part of GitLab's REST API v4 the MCP tools use: the current user, projects, issues and merge requests, with
 * GitLab's authentication errors, scope checks, 404 bodies and offset-pagination headers.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import * as entities from './devforge.api.serializers.ts';
import type { ApiCaller, ApiError, ApiService } from './devforge.api.service.ts';
import { baseUrl, bearerToken, param } from './devforge.http.ts';
import { registerIssueRoutes } from './devforge.issues.ts';
import { registerMergeRequestRoutes } from './devforge.merge-requests.ts';
import type { DevForgeStore, UserRecord } from './devforge.store.ts';
import type { DevForgeFaults } from './devforge.faults.ts';
import type { DevForgeCounters, ProjectRecord } from './devforge.types.ts';

/** What `GET /api/v4/version` reports: a GitLab version whose REST shapes the dev forge follows. */
export const DEV_FORGE_VERSION = '17.11.0-devforge';

/** Scopes that may read through the API, and those that may also read `/user` (GitLab's API guard). */
export const READ_SCOPES = ['api', 'read_api'] as const;
const USER_READ_SCOPES = ['api', 'read_api', 'read_user'] as const;
export const WRITE_SCOPES = ['api'] as const;

/** Pagination headers GitLab exposes to browsers through CORS. */
const EXPOSED_HEADERS = 'link, x-next-page, x-page, x-per-page, x-prev-page, x-total, x-total-pages';

/** A Grape parameter error: 400 `{"error":"<name> is invalid"}` and friends. */
export class ParamError extends Error {
  constructor(
    readonly body: Record<string, string>,
    readonly status = 400,
  ) {
    super(body.error ?? body.message);
  }
}

export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply.code(error.status).headers(error.headers).send(error.body);
}

export function intParam(query: unknown, name: string, fallback: number): number {
  const raw = param(query, name);
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw.trim())) throw new ParamError({ error: `${name} is invalid` });
  return Number(raw.trim());
}

/** Grape's Boolean coercion (dry-types `Params::Bool`). */
export function boolParam(query: unknown, name: string): boolean {
  const raw = param(query, name);
  if (raw === undefined || raw === '') return false;
  const v = raw.toLowerCase();
  if (['true', 't', '1', 'yes', 'y', 'on'].includes(v)) return true;
  if (['false', 'f', '0', 'no', 'n', 'off'].includes(v)) return false;
  throw new ParamError({ error: `${name} is invalid` });
}

export function enumParam(query: unknown, name: string, values: readonly string[]): string | undefined {
  const raw = param(query, name);
  if (raw === undefined || raw === '') return undefined;
  if (!values.includes(raw)) throw new ParamError({ error: `${name} does not have a valid value` });
  return raw;
}

/**
 * GitLab's keyset pagination as `/projects` offers it (forge-facts.md 2.1): `pagination=keyset` with `order_by=id`
 * (any other order is refused, as GitLab does) and `sort` (default `desc`); the position is `id_after` (asc) or
 * `id_before` (desc). Only `Link: <…>; rel="next"` is sent, and only while items remain; no `x-total`, no `x-page`.
 */
function keysetPaginate<T extends { id: number }>(request: FastifyRequest, reply: FastifyReply, items: T[]): T[] {
  const orderBy = param(request.query, 'order_by') ?? 'id';
  if (orderBy !== 'id') throw new ParamError({ message: 'Keyset pagination is not yet available for this type of request' }, 405);
  const sort = param(request.query, 'sort') ?? 'desc';
  if (sort !== 'asc' && sort !== 'desc') throw new ParamError({ error: 'sort does not have a valid value' });
  const perPage = Math.min(100, Math.max(1, intParam(request.query, 'per_page', 20)));
  const after = param(request.query, 'id_after') === undefined ? undefined : intParam(request.query, 'id_after', 0);
  const before = param(request.query, 'id_before') === undefined ? undefined : intParam(request.query, 'id_before', 0);
  const ordered = [...items]
    .sort((a, b) => (sort === 'asc' ? a.id - b.id : b.id - a.id))
    .filter((item) => (after === undefined || item.id > after) && (before === undefined || item.id < before));
  const page = ordered.slice(0, perPage);
  const last = page.at(-1);
  if (last !== undefined && ordered.length > perPage) {
    const url = new URL(request.url, baseUrl(request));
    url.searchParams.delete('id_after');
    url.searchParams.delete('id_before');
    url.searchParams.delete('page');
    url.searchParams.set(sort === 'asc' ? 'id_after' : 'id_before', String(last.id));
    url.searchParams.set('per_page', String(perPage));
    reply.header('link', `<${url.href}>; rel="next"`);
  }
  return page;
}

/** Above this many records GitLab stops counting: no `x-total`, `x-total-pages` or `rel="last"` link. */
const COUNTED_RECORDS = 10_000;

/**
 * GitLab's offset pagination: `page` (default 1), `per_page` (default 20, at most 100) and the headers `x-total`,
 * `x-total-pages`, `x-page`, `x-per-page`, `x-next-page`, `x-prev-page` and `link` (prev, next, first, last), the
 * totals and the last link only for collections of at most {@link COUNTED_RECORDS}.
 */
export function paginate<T>(request: FastifyRequest, reply: FastifyReply, items: T[]): T[] {
  const perPage = Math.min(100, Math.max(1, intParam(request.query, 'per_page', 20)));
  const page = Math.max(1, intParam(request.query, 'page', 1));
  const total = items.length;
  const totalPages = Math.max(1, Math.ceil(total / perPage));
  const next = page < totalPages ? page + 1 : undefined;
  const prev = page > 1 ? Math.min(page - 1, totalPages) : undefined;
  const href = (p: number): string => {
    const url = new URL(request.url, baseUrl(request));
    url.searchParams.set('page', String(p));
    url.searchParams.set('per_page', String(perPage));
    return url.href;
  };
  const links: string[] = [];
  if (prev !== undefined) links.push(`<${href(prev)}>; rel="prev"`);
  if (next !== undefined) links.push(`<${href(next)}>; rel="next"`);
  links.push(`<${href(1)}>; rel="first"`);
  if (total <= COUNTED_RECORDS) {
    links.push(`<${href(totalPages)}>; rel="last"`);
    reply.headers({ 'x-total': String(total), 'x-total-pages': String(totalPages) });
  }
  reply.headers({
    'x-page': String(page),
    'x-per-page': String(perPage),
    'x-next-page': next === undefined ? '' : String(next),
    'x-prev-page': prev === undefined ? '' : String(prev),
    link: links.join(', '),
  });
  return items.slice((page - 1) * perPage, page * perPage);
}

/** GitLab's Developer access level: what pushing, running pipelines and editing wikis and releases need. */
const DEVELOPER = 30;

/**
 * What the resource route modules (devforge.issues.ts, devforge.merge-requests.ts, …) get from the API scope:
 * the caller of a request, the checks every route makes, and the store.
 */
export interface ApiRouteKit {
  api: ApiService;
  store: DevForgeStore;
  now: () => number;
  caller(request: FastifyRequest): ApiCaller;
  /** The signed-in user, or undefined with a 401 already sent. */
  requireUser(request: FastifyRequest, reply: FastifyReply): UserRecord | undefined;
  /** Null when the token carries one of `allowed`; the 403 `insufficient_scope` answer otherwise. */
  scopeError(request: FastifyRequest, allowed: readonly string[]): ApiError | null;
  /** The `:id` project if the caller can see it, or undefined with GitLab's 404 already sent. */
  project(request: FastifyRequest, reply: FastifyReply): ProjectRecord | undefined;
  /**
   * The `:id` project for a read (`api` or `read_api`) or, with `write`, a write (`api`), whoever the caller is
   * (a public project reads anonymously), or undefined with the 403 or 404 already sent.
   */
  scopedProject(request: FastifyRequest, reply: FastifyReply, write: boolean): ProjectRecord | undefined;
  /** The `:id` project for a read (`api` or `read_api`), or undefined with the 403 or 404 already sent. */
  readableProject(request: FastifyRequest, reply: FastifyReply): ProjectRecord | undefined;
  /**
   * The `:id` project, the signed-in caller and their access level in it, for a read or (`write`) a write by
   * someone of at least `level` (0: anyone who can see it), or undefined with the 401, 403 or 404 already sent.
   */
  memberProject(
    request: FastifyRequest,
    reply: FastifyReply,
    write: boolean,
    level: number,
  ): { project: ProjectRecord; user: UserRecord; level: number } | undefined;
  /**
   * The `:id` project and the signed-in member writing to it (`api` scope; GitLab: Developer or above), or undefined
   * with the 401, 403 or 404 already sent.
   */
  writableProject(request: FastifyRequest, reply: FastifyReply): { project: ProjectRecord; user: UserRecord } | undefined;
  author(id: number): UserRecord;
  /**
   * Search scopes answered by a route module's own data (wiki pages, milestones), by scope name: the search
   * routes (devforge.issues.ts) call them with the projects in reach and the term.
   */
  searchScopes: Map<string, (projects: ProjectRecord[], term: string, base: string) => Record<string, unknown>[]>;
}

/** Registers `/api/v4/...` in its own scope (own 404 handler, CORS and error handler). */
export async function registerApiRoutes(
  app: FastifyInstance,
  deps: {
    api: ApiService;
    store: DevForgeStore;
    counters: DevForgeCounters;
    faults: DevForgeFaults;
    now: () => number;
    /** Route modules registered inside this scope, behind the same hooks (devforge.repository.routes.ts, …). */
    extensions?: readonly ApiRouteExtension[];
    /** A member's access level (devforge.extras.ts), undefined for a non-member. */
    accessLevel: (project: ProjectRecord, userId: number) => number | undefined;
  },
): Promise<void> {
  const { api, store, counters } = deps;
  const callers = new WeakMap<FastifyRequest, ApiCaller>();

  await app.register(
    async (scope) => {
      scope.addHook('onRequest', async (request, reply) => {
        if (request.method === 'GET' && request.routeOptions.url === '/api/v4/user') counters.user += 1;
        else counters.api += 1;
        // Test faults answer before authentication, as a proxy or Rack::Attack in front of the API does.
        if (await deps.faults.apply(request, reply, deps.now())) return reply;
        return undefined;
      });
      // GitLab allows any origin on /api/* without credentials (rack-cors in config/application.rb).
      scope.addHook('onSend', async (request, reply, payload) => {
        if (request.headers.origin) {
          reply.header('access-control-allow-origin', '*');
          reply.header('access-control-expose-headers', EXPOSED_HEADERS);
        }
        return payload;
      });
      scope.options('/*', async (request, reply) =>
        reply
          .code(200)
          .headers({
            'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS',
            'access-control-allow-headers': request.headers['access-control-request-headers'] ?? '*',
            'access-control-max-age': '7200',
          })
          .send(''),
      );
      scope.setNotFoundHandler(async (_request, reply) => reply.code(404).send({ error: '404 Not Found' }));
      scope.setErrorHandler((error: { statusCode?: number; message?: string }, request, reply) => {
        if (error instanceof ParamError) return reply.code(error.status).send(error.body);
        const status = error.statusCode ?? 500;
        if (status >= 500) {
          request.log.error({ err: error }, 'dev forge API request failed');
          return reply.code(500).send({ message: '500 Internal Server Error' });
        }
        return reply.code(status).send({ error: error.message ?? 'Bad Request' });
      });

      // Authentication runs before everything else: a bad token is 401 even where anonymous access is allowed.
      scope.addHook('preHandler', async (request, reply) => {
        if (request.method === 'OPTIONS') return;
        const headerToken = request.headers['private-token'];
        const result = api.authenticate({
          bearer: bearerToken(request) || param(request.query, 'access_token') || undefined,
          privateToken: (typeof headerToken === 'string' ? headerToken : undefined) || param(request.query, 'private_token') || undefined,
        });
        if (!result.ok) return sendError(reply, result.error);
        callers.set(request, result.caller);
      });

      const caller = (request: FastifyRequest): ApiCaller => callers.get(request) ?? { kind: 'anonymous' };

      /** The signed-in user, or a 401 already sent. */
      const requireUser = (request: FastifyRequest, reply: FastifyReply): UserRecord | undefined => {
        const c = caller(request);
        if (c.kind === 'user') return c.user;
        void reply.code(401).send({ message: '401 Unauthorized' });
        return undefined;
      };
      const scopeError = (request: FastifyRequest, allowed: readonly string[]): ApiError | null =>
        api.checkScopes(caller(request), allowed);
      const project = (request: FastifyRequest, reply: FastifyReply): ProjectRecord | undefined => {
        const id = (request.params as { id: string }).id;
        const found = api.findProject(caller(request), id);
        if (!found) void reply.code(404).send({ message: '404 Project Not Found' });
        return found;
      };
      const scopedProject = (request: FastifyRequest, reply: FastifyReply, write: boolean): ProjectRecord | undefined => {
        const denied = scopeError(request, write ? WRITE_SCOPES : READ_SCOPES);
        if (denied) {
          sendError(reply, denied);
          return undefined;
        }
        return project(request, reply);
      };
      const readableProject = (request: FastifyRequest, reply: FastifyReply) => scopedProject(request, reply, false);
      const memberProject = (request: FastifyRequest, reply: FastifyReply, write: boolean, level: number) => {
        const user = requireUser(request, reply);
        if (!user) return undefined;
        const p = scopedProject(request, reply, write);
        if (!p) return undefined;
        const own = deps.accessLevel(p, user.id) ?? 0;
        if (own < level) {
          void reply.code(403).send({ message: '403 Forbidden' });
          return undefined;
        }
        return { project: p, user, level: own };
      };
      const writableProject = (request: FastifyRequest, reply: FastifyReply) => {
        const found = memberProject(request, reply, true, DEVELOPER);
        return found && { project: found.project, user: found.user };
      };
      const author = (id: number): UserRecord => {
        const user = store.users.get(id);
        if (!user) throw new Error(`dev forge record refers to missing user ${id}`);
        return user;
      };

      // GitLab's `GET /version` (any authenticated caller).
      scope.get('/version', async (request, reply) => {
        if (caller(request).kind === 'anonymous') return reply.code(401).send({ message: '401 Unauthorized' });
        return { version: DEV_FORGE_VERSION, revision: 'devforge', kas: { enabled: false }, enterprise: false };
      });

      scope.get('/user', async (request, reply) => {
        const user = requireUser(request, reply);
        if (!user) return reply;
        const denied = scopeError(request, USER_READ_SCOPES);
        if (denied) return sendError(reply, denied);
        return entities.currentUser(user, baseUrl(request));
      });

      scope.get('/projects', async (request, reply) => {
        const denied = scopeError(request, READ_SCOPES);
        if (denied) return sendError(reply, denied);
        const search = param(request.query, 'search');
        const simple = boolParam(request.query, 'simple');
        const projects = api.listProjects(caller(request), {
          membership: boolParam(request.query, 'membership'),
          owned: boolParam(request.query, 'owned'),
          search: search === undefined || search === '' ? undefined : search,
        });
        const c = caller(request);
        const base = baseUrl(request);
        const keyset = param(request.query, 'pagination') === 'keyset';
        return (keyset ? keysetPaginate(request, reply, projects) : paginate(request, reply, projects)).map((p) =>
          simple
            ? entities.projectSimple(p, base)
            : entities.projectFull(p, base, c.kind === 'user' ? c.user.id : undefined, api.openIssuesCount(p)),
        );
      });

      scope.get('/projects/:id', async (request, reply) => {
        const denied = scopeError(request, READ_SCOPES);
        if (denied) return sendError(reply, denied);
        const p = project(request, reply);
        if (!p) return reply;
        const c = caller(request);
        return entities.projectFull(p, baseUrl(request), c.kind === 'user' ? c.user.id : undefined, api.openIssuesCount(p));
      });

      // Issues, merge requests, notes, labels, users and search (devforge.issues.ts, devforge.merge-requests.ts).
      const kit: ApiRouteKit = {
        api,
        store,
        now: deps.now,
        caller,
        requireUser,
        scopeError,
        project,
        scopedProject,
        readableProject,
        memberProject,
        writableProject,
        author,
        searchScopes: new Map(),
      };
      registerIssueRoutes(scope, kit);
      registerMergeRequestRoutes(scope, kit);
      // Route modules with dependencies of their own (repositories, CI), given by the composition root.
      for (const extend of deps.extensions ?? []) await extend(scope, kit);
    },
    { prefix: '/api/v4' },
  );
}

/** A route module with its own dependencies: registers its routes on the API scope. */
export type ApiRouteExtension = (scope: FastifyInstance, kit: ApiRouteKit) => Promise<void> | void;
