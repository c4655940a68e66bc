/**
 * The dev forge: a GitLab-compatible stand-in (OAuth provider with sign-in and authorize pages, and a part of the
 * REST API v4) used by `npm start` and by the MCP server's end-to-end tests. State is in memory, saved to a file
 * after every change when `stateFile` is given (`devforge.state.ts`); the behaviour
 * follows GitLab/Doorkeeper as `forge-facts.md` describes it (issue 3, item 12).
 *
 * Composition root: `buildDevForge(options)` wires the store, services and routes into a Fastify instance.
 */
import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import { registerApiRoutes } from './devforge.api.routes.ts';
import { createApiService } from './devforge.api.service.ts';
import { sendPage } from './devforge.http.ts';
import { createOAuthService } from './devforge.oauth.service.ts';
import { registerOAuthRoutes } from './devforge.oauth.routes.ts';
import { errorPage, notFoundPage } from './devforge.pages.ts';
import { seedDevForge } from './devforge.seed.ts';
import { createSessionManager } from './devforge.session.ts';
import { createDevForgeStore, hashSecret, snapshotDevForgeStore } from './devforge.store.ts';
import { readDevForgeState, shownPasswordKey, writeStateText, type DevForgeState } from './devforge.state.ts';
import { createDevForgeFaults, type DevForgeFaults } from './devforge.faults.ts';
import type { DevForgeCounters, DevForgeOptions } from './devforge.types.ts';
import { registerWebRoutes } from './devforge.web.routes.ts';
import { createDevForgeCi } from './devforge.ci.ts';
import { ciRoutes, lastPipelineOf } from './devforge.ci.routes.ts';
import { createDevForgeRepositories } from './devforge.repository.ts';
import { repositoryRoutes } from './devforge.repository.routes.ts';
import { seedRepositories } from './devforge.repository.seed.ts';
import { restoreRecords, snapshotRecords } from './devforge.state.records.ts';
import { setMergeRequestFiles, type MergeRequestFile } from './devforge.work.ts';
import { adminRoutes } from './devforge.admin.routes.ts';
import { accessLevelOf, createDevForgeExtras, seedExtras } from './devforge.extras.ts';
import { wikiReleaseRoutes } from './devforge.wiki-releases.routes.ts';

export type { DevForgeApplication, DevForgeCounters, DevForgeOptions, DevForgeUser } from './devforge.types.ts';
export { devForgeSeed } from './devforge.seed.ts';

/** A built dev forge. */
export interface DevForge {
  app: FastifyInstance;
  /** Requests served per endpoint (mutated in place). */
  counters: DevForgeCounters;
  /** Test hook: the next REST requests answer with a documented failure (devforge.faults.ts). */
  faults: Pick<DevForgeFaults, 'add' | 'clear'>;
  /** Test hook: revokes every authorization code, OAuth token and personal access token of a user. */
  revokeAllTokensOf(username: string): void;
  /**
   * Creates a personal access token (`glpat-…`) for a user, as GitLab's settings page does. Personal access tokens
   * are what `PRIVATE-TOKEN` carries (GitLab does not accept OAuth tokens there). Default scopes: `api`.
   */
  createPersonalAccessToken(username: string, scopes?: string[], name?: string): string;
  /**
   * The personal access token a banner shows: the one remembered under `name` while it is still valid (so a
   * restarted forge prints the same token), otherwise a new one, remembered. With a state file it is kept there in
   * clear, like the seeded password, so that every start can print it.
   */
  bannerPersonalAccessToken(username: string, scopes: string[], name: string): string;
  /** Test and bench hook: merge request `iid` of project `projectId` changes `files` (new files, or diff hunks). */
  setMergeRequestFiles(projectId: number, iid: number, files: readonly MergeRequestFile[]): void;
}

/** A dev forge listening on a port. */
export interface StartedDevForge extends DevForge {
  /** Base URL, e.g. `http://127.0.0.1:3100` (no trailing slash). */
  url: string;
  close(): Promise<void>;
}

/** Default access-token lifetime: GitLab's `access_token_expires_in 7200`. */
export const DEFAULT_ACCESS_TOKEN_TTL_SECONDS = 7200;

/**
 * Builds the dev forge without listening. Every user gets sample projects (see `seedSampleProjects`).
 * Options: `clock` (default `Date.now`), `logger` (default none), `accessTokenTtlSeconds` (default 7200).
 */
export async function buildDevForge(options: DevForgeOptions): Promise<DevForge> {
  const clock = options.clock ?? Date.now;
  const accessTokenTtlSeconds = options.accessTokenTtlSeconds ?? DEFAULT_ACCESS_TOKEN_TTL_SECONDS;
  const stateFile = options.stateFile;
  const state = stateFile ? readDevForgeState(stateFile) : undefined;
  const store = createDevForgeStore({
    users: options.users,
    applications: options.applications,
    now: clock(),
    ...(state ? { restore: state.store } : {}),
  });
  if (!state) seedDevForge(store, clock());
  // Repositories, CI and the work records of issues and merge requests (issue 18): from the state file when it has
  // them; otherwise the sample repositories are seeded (also under a state file written before it kept them).
  const restored = state?.records
    ? restoreRecords(store, state.records)
    : { repositories: createDevForgeRepositories(), ci: createDevForgeCi(), extras: undefined };
  const { repositories, ci } = restored;
  if (!state?.records) seedRepositories(store, repositories, ci, clock());
  // Wikis, releases, milestones, variables, hooks and memberships likewise (seeded under a file that predates them).
  const extras = restored.extras ?? createDevForgeExtras();
  if (!restored.extras) seedExtras(store, extras, clock(), (p, tag) => repositories.of(p.id).tags.get(tag)?.target);
  const shown: Record<string, string> = { ...state?.shown };
  // Seeded users the store did not have yet: their clear password is what the banner prints on every start.
  for (const u of options.users) shown[shownPasswordKey(u.username)] ??= u.password;
  let savedText: string | undefined;
  let recordsText = '';
  /**
   * Saves the state when it changed; a no-op in memory. Synchronous, so it completes before a response leaves.
   * The records (repositories, CI, notes: most of the file's bytes) are serialised again only when `records` says
   * they may have changed (after a request that is not a read): serialising them on every request cost 0.6 ms of
   * CPU per request (measured at load 14). What a read changes in them (a merge status settling) is saved with
   * the next write.
   */
  const persist = (records = false): void => {
    if (!stateFile) return;
    if (records || recordsText === '') recordsText = JSON.stringify(snapshotRecords(store, repositories, ci, extras));
    const content: Omit<DevForgeState, 'records'> = { version: 1, shown, store: snapshotDevForgeStore(store) };
    // The records are spliced in as text already serialised: `{…,"records":…}` is the JSON of the whole state.
    const text = `${JSON.stringify(content).slice(0, -1)},"records":${recordsText}}`;
    if (text === savedText) return;
    writeStateText(stateFile, text);
    savedText = text;
  };
  persist();
  const oauth = createOAuthService({ store, clock, accessTokenTtlSeconds });
  const api = createApiService({ store, oauth, clock });
  const sessions = createSessionManager({ store, clock });
  const counters: DevForgeCounters = { authorize: 0, token: 0, tokenInfo: 0, user: 0, revoke: 0, api: 0 };

  // Fastify's own request logs would print query strings (codes, states, `private_token`): replaced below by a
  // path-only line.
  const quietRequests = (): LogController => new LogController({ disableRequestLogging: true });
  let app: FastifyInstance;
  if (typeof options.logger === 'object') {
    // Widened to Fastify's logger type so the instance has the contract's plain `FastifyInstance` type.
    const loggerInstance: FastifyBaseLogger = options.logger;
    app = Fastify({ loggerInstance, logController: quietRequests() });
  } else {
    app = Fastify({ logger: options.logger === true, logController: quietRequests() });
  }

  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, path: request.url.split('?')[0], statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request completed',
    );
  });

  // Every change (a code, a token, a revocation, an issue) is on disk before the response that reveals it is sent:
  // a crash or restart right after cannot lose a token a client already holds.
  app.addHook('onSend', async (request, _reply, payload) => {
    try {
      persist(request.method !== 'GET' && request.method !== 'HEAD');
    } catch (error) {
      request.log.error({ err: error }, 'dev forge state could not be saved');
    }
    return payload;
  });

  await app.register(fastifyCookie);
  await app.register(fastifyFormbody);

  registerWebRoutes(app, { store, sessions });
  await registerOAuthRoutes(app, { oauth, sessions, store, counters });
  const faults = createDevForgeFaults();
  const extensions = [
    repositoryRoutes({
      repositories,
      now: () => clock(),
      lastPipeline: (p, sha) => lastPipelineOf(ci, p, sha),
      releaseOf: (p, tag) => {
        const r = extras.of(p.id).releases.get(tag);
        return r ? { tag_name: r.tagName, description: r.description } : null;
      },
    }),
    ciRoutes({ ci, repositories, now: () => clock() }),
    wikiReleaseRoutes({ extras, repositories, now: () => clock() }),
    adminRoutes({ extras, now: () => clock() }),
  ];
  await registerApiRoutes(app, {
    api,
    store,
    counters,
    faults,
    now: () => clock(),
    extensions,
    accessLevel: (p, userId) => accessLevelOf(extras, p, userId),
  });

  app.setNotFoundHandler(async (_request, reply) => sendPage(reply, notFoundPage()));
  app.setErrorHandler((error: { statusCode?: number }, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) request.log.error({ err: error }, 'dev forge request failed');
    return sendPage(
      reply,
      errorPage(status >= 500 ? 'Something went wrong on our side.' : 'The request could not be understood.', status >= 500 ? 500 : 400),
    );
  });

  const userByName = (username: string) => {
    const user = store.findUserByUsername(username);
    if (!user) throw new Error(`no dev forge user named ${username}`);
    return user;
  };

  return {
    app,
    counters,
    faults,
    revokeAllTokensOf(username) {
      const user = userByName(username);
      oauth.revokeAllOf(user.id);
      api.revokePersonalAccessTokensOf(user.id);
      persist();
    },
    setMergeRequestFiles(projectId, iid, files) {
      const mr = store.mergeRequests.find((m) => m.projectId === projectId && m.iid === iid);
      if (!mr) throw new Error(`no merge request !${iid} in project ${projectId}`);
      setMergeRequestFiles(store, mr, files);
    },
    createPersonalAccessToken(username, scopes = ['api'], name = 'dev forge token') {
      const token = api.createPersonalAccessToken(userByName(username).id, scopes, name);
      persist();
      return token;
    },
    bannerPersonalAccessToken(username, scopes, name) {
      const user = userByName(username);
      const key = `pat:${user.username.toLowerCase()}:${name}`;
      const remembered = shown[key];
      const record = remembered === undefined ? undefined : store.personalTokens.get(hashSecret(remembered));
      if (
        remembered !== undefined &&
        record &&
        record.userId === user.id &&
        record.revokedAt === undefined &&
        (record.expiresAt === undefined || record.expiresAt > clock())
      ) {
        return remembered;
      }
      const token = api.createPersonalAccessToken(user.id, scopes, name);
      shown[key] = token;
      persist();
      return token;
    },
  };
}

/**
 * Builds and starts the dev forge on `host` (default 127.0.0.1) and `port` (default 0: a free port; the CLI uses
 * 3100). Resolves once it listens; `url` is its base URL.
 */
export async function startDevForge(options: DevForgeOptions & { host?: string; port?: number }): Promise<StartedDevForge> {
  const forge = await buildDevForge(options);
  const host = options.host ?? '127.0.0.1';
  try {
    await forge.app.listen({ host, port: options.port ?? 0 });
  } catch (err) {
    await forge.app.close();
    throw err;
  }
  const address = forge.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('dev forge is not listening on a TCP port');
  // A wildcard bind is reached through loopback; the URL must be one a local client can open.
  const reachable = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  const urlHost = reachable.includes(':') ? `[${reachable}]` : reachable;
  return {
    ...forge,
    url: `http://${urlHost}:${address.port}`,
    close: () => forge.app.close(),
  };
}
