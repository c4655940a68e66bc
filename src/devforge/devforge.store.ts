/**
 * The dev forge's state, in memory (it is a development stand-in). Secrets (codes, tokens, passwords) are kept only
 * as SHA-256 hashes, like GitLab's `hash_token_secrets`, so a dump of the store reveals none of them.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type {
  AccessGrantRecord,
  AccessTokenRecord,
  DevForgeApplication,
  DevForgeUser,
  IssueRecord,
  MergeRequestRecord,
  NamespaceRecord,
  PersonalAccessTokenRecord,
  ProjectRecord,
  SessionRecord,
} from './devforge.types.ts';

/** SHA-256 of a secret, hex encoded: the key under which codes and tokens are stored. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time comparison of two strings (by their hashes, so lengths may differ). */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(Buffer.from(hashSecret(a), 'hex'), Buffer.from(hashSecret(b), 'hex'));
}

/** 64 hex characters, the shape of GitLab's OAuth codes and tokens (`default_generator_method :hex`). */
export function randomHexToken(): string {
  return randomBytes(32).toString('hex');
}

/** A stored user: the seed without its plain password. */
export interface UserRecord {
  id: number;
  username: string;
  name: string;
  email: string;
  passwordHash: string;
  createdAt: number;
}

/** The dev forge's in-memory store. Plain data access; the rules live in the services. */
export interface DevForgeStore {
  users: Map<number, UserRecord>;
  applications: Map<string, DevForgeApplication>;
  grants: Map<string, AccessGrantRecord>;
  /** Keyed by access-token hash. */
  tokens: Map<string, AccessTokenRecord>;
  /** Refresh-token hash → access-token hash. */
  refreshIndex: Map<string, string>;
  personalTokens: Map<string, PersonalAccessTokenRecord>;
  sessions: Map<string, SessionRecord>;
  namespaces: Map<number, NamespaceRecord>;
  projects: Map<number, ProjectRecord>;
  issues: IssueRecord[];
  mergeRequests: MergeRequestRecord[];
  /** Next id for a new record of any kind (ids only need to be unique per kind, like GitLab's). */
  nextId(kind: 'token' | 'pat' | 'namespace' | 'project' | 'issue' | 'mergeRequest'): number;
  findUserByLogin(login: string): UserRecord | undefined;
  findUserByUsername(username: string): UserRecord | undefined;
}

/** Creates the store from seeded users and applications. Duplicate usernames or application ids are refused. */
export function createDevForgeStore(deps: {
  users: readonly DevForgeUser[];
  applications: readonly DevForgeApplication[];
  now: number;
}): DevForgeStore {
  const users = new Map<number, UserRecord>();
  const seenNames = new Set<string>();
  for (const u of deps.users) {
    const key = u.username.toLowerCase();
    if (users.has(u.id) || seenNames.has(key)) throw new Error(`duplicate dev forge user ${u.username} (id ${u.id})`);
    seenNames.add(key);
    users.set(u.id, {
      id: u.id,
      username: u.username,
      name: u.name,
      email: u.email,
      passwordHash: hashSecret(u.password),
      createdAt: deps.now,
    });
  }
  const applications = new Map<string, DevForgeApplication>();
  for (const a of deps.applications) {
    if (applications.has(a.uid)) throw new Error(`duplicate dev forge application ${a.uid}`);
    if (a.confidential && !a.secret) throw new Error(`confidential application ${a.name} needs a secret`);
    applications.set(a.uid, { ...a, redirectUris: [...a.redirectUris], scopes: [...a.scopes] });
  }
  const counters = { token: 0, pat: 0, namespace: 0, project: 0, issue: 0, mergeRequest: 0 };
  return {
    users,
    applications,
    grants: new Map(),
    tokens: new Map(),
    refreshIndex: new Map(),
    personalTokens: new Map(),
    sessions: new Map(),
    namespaces: new Map(),
    projects: new Map(),
    issues: [],
    mergeRequests: [],
    nextId(kind) {
      counters[kind] += 1;
      return counters[kind];
    },
    findUserByLogin(login) {
      const key = login.trim().toLowerCase();
      for (const u of users.values()) if (u.username.toLowerCase() === key || u.email.toLowerCase() === key) return u;
      return undefined;
    },
    findUserByUsername(username) {
      const key = username.toLowerCase();
      for (const u of users.values()) if (u.username.toLowerCase() === key) return u;
      return undefined;
    },
  };
}
