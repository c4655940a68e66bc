/**
 * The dev forge's REST API v4 rules: who the caller is (OAuth bearer, personal access token), which scopes a request
 * needs, which projects the caller may see, and the issue / merge-request data. HTTP shapes are in the routes and
 * serializers.
 */
import { randomBytes } from 'node:crypto';
import {
  API_INSUFFICIENT_SCOPE_DESCRIPTION,
  API_REALM,
  API_TOKEN_EXPIRED_DESCRIPTION,
  API_TOKEN_REVOKED_DESCRIPTION,
  API_UNAUTHORIZED_BODY,
} from './devforge.errors.ts';
import type { OAuthService } from './devforge.oauth.service.ts';
import { hashSecret } from './devforge.store.ts';
import type { DevForgeStore, UserRecord } from './devforge.store.ts';
import type { IssueRecord, MergeRequestRecord, ProjectRecord } from './devforge.types.ts';

/** Who is calling: a user and the scopes of their token, or nobody. */
export type ApiCaller = { kind: 'anonymous' } | { kind: 'user'; user: UserRecord; scopes: string[] };

/** An API error answer. */
export interface ApiError {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

/** Where the request carried its credentials. */
interface ApiCredentials {
  /** `Authorization: Bearer …` or the `access_token` parameter. */
  bearer?: string | undefined;
  /** `PRIVATE-TOKEN` header or the `private_token` parameter (personal access tokens only, as in GitLab). */
  privateToken?: string | undefined;
}

/** Filters of the issue and merge-request lists. */
export interface ListFilters {
  state?: string | undefined;
  search?: string | undefined;
  labels?: string[] | undefined;
}

/** The API service. */
export interface ApiService {
  authenticate(credentials: ApiCredentials): { ok: true; caller: ApiCaller } | { ok: false; error: ApiError };
  /** Null when the caller's token carries one of `allowed`; a 403 `insufficient_scope` otherwise. */
  checkScopes(caller: ApiCaller, allowed: readonly string[]): ApiError | null;
  /** Projects the caller can see, newest first, filtered like `GET /projects`. */
  listProjects(caller: ApiCaller, filters: { membership: boolean; owned: boolean; search?: string | undefined }): ProjectRecord[];
  /** A project by numeric id or full path (case-insensitive), if the caller can see it. */
  findProject(caller: ApiCaller, idOrPath: string): ProjectRecord | undefined;
  openIssuesCount(project: ProjectRecord): number;
  listIssues(project: ProjectRecord, filters: ListFilters): IssueRecord[];
  findIssue(project: ProjectRecord, iid: number): IssueRecord | undefined;
  createIssue(
    project: ProjectRecord,
    author: UserRecord,
    input: { title: string; description?: string | undefined; labels?: string[] | undefined },
  ): IssueRecord;
  listMergeRequests(project: ProjectRecord, filters: ListFilters): MergeRequestRecord[];
  findMergeRequest(project: ProjectRecord, iid: number): MergeRequestRecord | undefined;
  /** Creates a personal access token (`glpat-…`) for a user; the plain token is returned once. */
  createPersonalAccessToken(userId: number, scopes: string[], name: string, expiresAt?: number): string;
  /** Revokes every personal access token of a user. */
  revokePersonalAccessTokensOf(userId: number): void;
}

function unauthorized(): ApiError {
  return { status: 401, body: { ...API_UNAUTHORIZED_BODY }, headers: {} };
}

/** GitLab's API guard answer for a known but unusable token (rack-oauth2 `Bearer::Unauthorized`). */
function invalidToken(description: string): ApiError {
  return {
    status: 401,
    body: { error: 'invalid_token', error_description: description },
    headers: {
      'www-authenticate': `Bearer realm="${API_REALM}", error="invalid_token", error_description="${description}"`,
    },
  };
}

const matches = (text: string | null, needle: string): boolean => text !== null && text.toLowerCase().includes(needle.toLowerCase());

/** Creates the API service. */
export function createApiService(deps: { store: DevForgeStore; oauth: OAuthService; clock: () => number }): ApiService {
  const { store, oauth, clock } = deps;

  function personalToken(token: string): { ok: true; caller: ApiCaller } | { ok: false; error: ApiError } {
    const pat = store.personalTokens.get(hashSecret(token));
    const user = pat ? store.users.get(pat.userId) : undefined;
    if (!pat || !user) return { ok: false, error: unauthorized() };
    if (pat.revokedAt !== undefined) return { ok: false, error: invalidToken(API_TOKEN_REVOKED_DESCRIPTION) };
    if (pat.expiresAt !== undefined && clock() >= pat.expiresAt) {
      return { ok: false, error: invalidToken(API_TOKEN_EXPIRED_DESCRIPTION) };
    }
    return { ok: true, caller: { kind: 'user', user, scopes: pat.scopes } };
  }

  const canSee = (caller: ApiCaller, p: ProjectRecord): boolean =>
    p.visibility === 'public' || (caller.kind === 'user' && (p.visibility === 'internal' || p.memberIds.includes(caller.user.id)));

  return {
    authenticate(credentials) {
      if (credentials.privateToken) return personalToken(credentials.privateToken);
      if (!credentials.bearer) return { ok: true, caller: { kind: 'anonymous' } };
      // A bearer may be an OAuth token or (as in GitLab) a personal access token.
      if (credentials.bearer.startsWith('glpat-')) return personalToken(credentials.bearer);
      const found = oauth.lookupAccessToken(credentials.bearer);
      const user = found ? store.users.get(found.record.userId) : undefined;
      if (!found || !user) return { ok: false, error: unauthorized() };
      if (found.state === 'revoked') return { ok: false, error: invalidToken(API_TOKEN_REVOKED_DESCRIPTION) };
      if (found.state === 'expired') return { ok: false, error: invalidToken(API_TOKEN_EXPIRED_DESCRIPTION) };
      return { ok: true, caller: { kind: 'user', user, scopes: found.record.scopes } };
    },

    checkScopes(caller, allowed) {
      if (caller.kind === 'anonymous' || caller.scopes.some((s) => allowed.includes(s))) return null;
      // rack-oauth2's `Bearer::Forbidden`: GitLab notes it carries no WWW-Authenticate header.
      return {
        status: 403,
        body: { error: 'insufficient_scope', error_description: API_INSUFFICIENT_SCOPE_DESCRIPTION, scope: allowed.join(' ') },
        headers: {},
      };
    },

    listProjects(caller, filters) {
      const userId = caller.kind === 'user' ? caller.user.id : undefined;
      return [...store.projects.values()]
        .filter((p) => canSee(caller, p))
        .filter((p) => !filters.membership || (userId !== undefined && p.memberIds.includes(userId)))
        .filter((p) => !filters.owned || (userId !== undefined && p.creatorId === userId && p.namespace.kind === 'user'))
        .filter(
          (p) =>
            filters.search === undefined ||
            matches(p.name, filters.search) ||
            matches(p.path, filters.search) ||
            matches(p.description, filters.search),
        )
        .sort((a, b) => b.createdAt - a.createdAt || b.id - a.id);
    },

    findProject(caller, idOrPath) {
      let project: ProjectRecord | undefined;
      if (/^\d+$/.test(idOrPath)) {
        project = store.projects.get(Number(idOrPath));
      } else {
        const key = idOrPath.toLowerCase();
        project = [...store.projects.values()].find((p) => `${p.namespace.path}/${p.path}`.toLowerCase() === key);
      }
      return project && canSee(caller, project) ? project : undefined;
    },

    openIssuesCount(project) {
      return store.issues.filter((i) => i.projectId === project.id && i.state === 'opened').length;
    },

    listIssues(project, filters) {
      return store.issues
        .filter((i) => i.projectId === project.id)
        .filter((i) => !filters.state || filters.state === 'all' || i.state === filters.state)
        .filter((i) => filters.search === undefined || matches(i.title, filters.search) || matches(i.description, filters.search))
        .filter((i) => !filters.labels || filters.labels.every((l) => i.labels.includes(l)))
        .sort((a, b) => b.createdAt - a.createdAt || b.id - a.id);
    },

    findIssue(project, iid) {
      return store.issues.find((i) => i.projectId === project.id && i.iid === iid);
    },

    createIssue(project, author, input) {
      const now = clock();
      const created: IssueRecord = {
        id: store.nextId('issue'),
        iid: project.nextIssueIid++,
        projectId: project.id,
        title: input.title,
        description: input.description ?? null,
        state: 'opened',
        labels: input.labels ?? [],
        authorId: author.id,
        createdAt: now,
        updatedAt: now,
        closedAt: null,
      };
      store.issues.push(created);
      project.lastActivityAt = now;
      return created;
    },

    listMergeRequests(project, filters) {
      return store.mergeRequests
        .filter((m) => m.projectId === project.id)
        .filter((m) => !filters.state || filters.state === 'all' || m.state === filters.state)
        .filter((m) => filters.search === undefined || matches(m.title, filters.search) || matches(m.description, filters.search))
        .filter((m) => !filters.labels || filters.labels.every((l) => m.labels.includes(l)))
        .sort((a, b) => b.createdAt - a.createdAt || b.id - a.id);
    },

    findMergeRequest(project, iid) {
      return store.mergeRequests.find((m) => m.projectId === project.id && m.iid === iid);
    },

    createPersonalAccessToken(userId, scopes, name, expiresAt) {
      if (!store.users.has(userId)) throw new Error(`no dev forge user with id ${userId}`);
      // GitLab's format: the `glpat-` prefix and 20 URL-safe characters.
      const token = `glpat-${randomBytes(15).toString('base64url')}`;
      store.personalTokens.set(hashSecret(token), {
        id: store.nextId('pat'),
        tokenHash: hashSecret(token),
        userId,
        name,
        scopes: [...scopes],
        createdAt: clock(),
        expiresAt,
      });
      return token;
    },

    revokePersonalAccessTokensOf(userId) {
      const now = clock();
      for (const t of store.personalTokens.values()) if (t.userId === userId) t.revokedAt ??= now;
    },
  };
}
