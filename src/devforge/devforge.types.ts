import type { Logger } from 'pino';

/**
 * Public types of the dev forge (the contract other services build against) and its internal records.
 * `devforge.app.ts` re-exports the public ones.
 */

/** A seeded forge user. `password` is the plain sign-in password (a dev stand-in; it is compared by hash). */
export interface DevForgeUser {
  id: number;
  username: string;
  name: string;
  email: string;
  password: string;
}

/** A registered OAuth application, like one created under GitLab's "Applications" settings. */
export interface DevForgeApplication {
  /** The application id (`client_id`). */
  uid: string;
  name: string;
  /** Registered callback URLs, matched exactly (only the port of loopback IP literals may vary). */
  redirectUris: string[];
  /** Confidential applications must authenticate with `secret` at the token endpoint. */
  confidential: boolean;
  secret?: string;
  /** Scopes the application may request. */
  scopes: string[];
  /** GitLab's "trusted" flag: the authorize page is skipped for it. Optional extension of the contract. */
  trusted?: boolean;
}

/** Options of {@link buildDevForge}. */
export interface DevForgeOptions {
  users: DevForgeUser[];
  applications: DevForgeApplication[];
  /** Milliseconds since the epoch; tests pass a fake clock. Default `Date.now`. */
  clock?: () => number;
  /** A pino logger, `true` for Fastify's default logger, `false`/absent for none. */
  logger?: Logger | boolean;
  /** Access-token lifetime, default 7200 s like GitLab. */
  accessTokenTtlSeconds?: number;
  /**
   * Where the state is kept across restarts (see `devforge.state.ts`); absent: in memory only (tests). The CLI and
   * `platform serve` use `$PLATFORM_DATA_DIR/devforge.json`.
   */
  stateFile?: string;
}

/** Requests served per endpoint, for tests that count forge round trips. */
export interface DevForgeCounters {
  /** `GET`/`POST`/`DELETE /oauth/authorize`. */
  authorize: number;
  /** `POST /oauth/token`. */
  token: number;
  /** `GET /oauth/token/info`. */
  tokenInfo: number;
  /** `GET /api/v4/user`. */
  user: number;
  /** `POST /oauth/revoke`. */
  revoke: number;
  /** Every other `/api/v4` request. */
  api: number;
}

/** The OAuth scopes GitLab knows (forge-facts.md, "Scopes"). */
export const KNOWN_SCOPES = ['api', 'read_api', 'read_user', 'read_repository', 'write_repository', 'openid', 'profile', 'email'] as const;

/** GitLab's default scope when an authorization request names none (`Gitlab::Auth::DEFAULT_SCOPES`). */
export const DEFAULT_SCOPES = ['api'] as const;

/** An authorization code (Doorkeeper's access grant). Only the hash of the code is kept. */
export interface AccessGrantRecord {
  codeHash: string;
  applicationUid: string;
  userId: number;
  redirectUri: string;
  scopes: string[];
  codeChallenge?: string | undefined;
  codeChallengeMethod?: 'plain' | 'S256' | undefined;
  createdAt: number;
  expiresInSeconds: number;
  revokedAt?: number;
}

/** An OAuth access token and its refresh token (one Doorkeeper record). Only hashes are kept. */
export interface AccessTokenRecord {
  id: number;
  tokenHash: string;
  refreshTokenHash: string;
  applicationUid: string;
  userId: number;
  scopes: string[];
  createdAt: number;
  expiresInSeconds: number;
  revokedAt?: number;
}

/** A personal access token (`glpat-…`), accepted in `PRIVATE-TOKEN` and as a bearer on the REST API. */
export interface PersonalAccessTokenRecord {
  id: number;
  tokenHash: string;
  userId: number;
  name: string;
  scopes: string[];
  createdAt: number;
  expiresAt?: number | undefined;
  revokedAt?: number;
}

/** A browser session behind the `_gitlab_session` cookie. */
export interface SessionRecord {
  id: string;
  userId?: number;
  /** The Rails-style authenticity token bound to this session. */
  csrfToken: string;
  /** Where to go after signing in (a local path, e.g. the `/oauth/authorize?...` URL). */
  returnTo?: string | undefined;
  /** A one-shot message for the next page (Rails' flash). */
  flash?: string | undefined;
  createdAt: number;
}

/** A namespace (user or group) owning projects. */
export interface NamespaceRecord {
  id: number;
  name: string;
  path: string;
  kind: 'user' | 'group';
}

/** A project. `memberIds` hold users with access (all Owners in the seed). */
export interface ProjectRecord {
  id: number;
  name: string;
  path: string;
  description: string;
  namespace: NamespaceRecord;
  visibility: 'private' | 'internal' | 'public';
  creatorId: number;
  memberIds: number[];
  createdAt: number;
  lastActivityAt: number;
  nextIssueIid: number;
  nextMergeRequestIid: number;
}

/** An issue of a project. */
export interface IssueRecord {
  id: number;
  iid: number;
  projectId: number;
  title: string;
  description: string | null;
  state: 'opened' | 'closed';
  labels: string[];
  authorId: number;
  createdAt: number;
  updatedAt: number;
  closedAt: number | null;
}

/** A merge request of a project. */
export interface MergeRequestRecord {
  id: number;
  iid: number;
  projectId: number;
  title: string;
  description: string | null;
  state: 'opened' | 'closed' | 'merged' | 'locked';
  sourceBranch: string;
  targetBranch: string;
  labels: string[];
  authorId: number;
  createdAt: number;
  updatedAt: number;
  mergedAt: number | null;
  closedAt: number | null;
}
