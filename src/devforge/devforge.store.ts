/**
 * The dev forge's state, in memory, with a snapshot that `devforge.state.ts` keeps in a file. Secrets (codes,
 * tokens, passwords) are kept only as SHA-256 hashes, like GitLab's `hash_token_secrets`, so a dump of the store
 * reveals none of them.
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
  nextId(kind: IdKind): number;
  /** The last id handed out per kind (for the snapshot). */
  idCounters(): Record<IdKind, number>;
  findUserByLogin(login: string): UserRecord | undefined;
  findUserByUsername(username: string): UserRecord | undefined;
}

type IdKind = 'token' | 'pat' | 'namespace' | 'project' | 'issue' | 'mergeRequest';

/**
 * Everything the forge must keep across a restart, as plain JSON. Browser sessions are left out on purpose: their
 * keys are the cookie values themselves, and signing in again after a restart costs a developer one form.
 */
export interface DevForgeStoreSnapshot {
  users: UserRecord[];
  applications: DevForgeApplication[];
  grants: AccessGrantRecord[];
  tokens: AccessTokenRecord[];
  personalTokens: PersonalAccessTokenRecord[];
  namespaces: NamespaceRecord[];
  projects: ProjectRecord[];
  issues: IssueRecord[];
  mergeRequests: MergeRequestRecord[];
  counters: Record<IdKind, number>;
}

/** The store's persistent part (see {@link DevForgeStoreSnapshot}); records are copied by JSON, not shared. */
export function snapshotDevForgeStore(store: DevForgeStore): DevForgeStoreSnapshot {
  return {
    users: [...store.users.values()],
    applications: [...store.applications.values()],
    grants: [...store.grants.values()],
    tokens: [...store.tokens.values()],
    personalTokens: [...store.personalTokens.values()],
    namespaces: [...store.namespaces.values()],
    projects: [...store.projects.values()],
    issues: store.issues,
    mergeRequests: store.mergeRequests,
    counters: store.idCounters(),
  };
}

/**
 * Creates the store from seeded users and applications. Duplicate usernames or application ids are refused.
 * With `restore`, the snapshot's records come first; seeded users whose username it already has are skipped (the
 * stored password stands), and a seeded application already stored keeps its uid but takes the seed's redirect URIs
 * (they follow the MCP server's current URL).
 */
export function createDevForgeStore(deps: {
  users: readonly DevForgeUser[];
  applications: readonly DevForgeApplication[];
  now: number;
  restore?: DevForgeStoreSnapshot;
}): DevForgeStore {
  const users = new Map<number, UserRecord>();
  const seenNames = new Set<string>();
  const restore = deps.restore;
  for (const u of restore?.users ?? []) {
    users.set(u.id, u);
    seenNames.add(u.username.toLowerCase());
  }
  for (const u of deps.users) {
    if (restore && seenNames.has(u.username.toLowerCase())) continue;
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
  for (const a of restore?.applications ?? []) applications.set(a.uid, a);
  for (const a of deps.applications) {
    const stored = restore ? applications.get(a.uid) : undefined;
    if (stored) {
      stored.redirectUris = [...a.redirectUris];
      continue;
    }
    if (applications.has(a.uid)) throw new Error(`duplicate dev forge application ${a.uid}`);
    if (a.confidential && !a.secret) throw new Error(`confidential application ${a.name} needs a secret`);
    applications.set(a.uid, { ...a, redirectUris: [...a.redirectUris], scopes: [...a.scopes] });
  }
  const counters: Record<IdKind, number> = { token: 0, pat: 0, namespace: 0, project: 0, issue: 0, mergeRequest: 0, ...restore?.counters };
  const namespaces = new Map((restore?.namespaces ?? []).map((n) => [n.id, n] as const));
  // A project holds its namespace by reference (as the seed builds it); the restored copy is re-linked to the map's.
  const projects = new Map(
    (restore?.projects ?? []).map((p) => [p.id, { ...p, namespace: namespaces.get(p.namespace.id) ?? p.namespace }] as const),
  );
  const tokens = new Map((restore?.tokens ?? []).map((t) => [t.tokenHash, t] as const));
  return {
    users,
    applications,
    grants: new Map((restore?.grants ?? []).map((g) => [g.codeHash, g] as const)),
    tokens,
    refreshIndex: new Map([...tokens.values()].map((t) => [t.refreshTokenHash, t.tokenHash] as const)),
    personalTokens: new Map((restore?.personalTokens ?? []).map((t) => [t.tokenHash, t] as const)),
    sessions: new Map(),
    namespaces,
    projects,
    issues: restore?.issues ?? [],
    mergeRequests: restore?.mergeRequests ?? [],
    nextId(kind) {
      counters[kind] += 1;
      return counters[kind];
    },
    idCounters() {
      return { ...counters };
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
