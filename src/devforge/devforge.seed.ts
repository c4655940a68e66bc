/**
 * Seed data of the dev forge: the development seed (one user, one public application) and the sample projects,
 * issues and merge requests every forge starts with.
 */
import { randomBytes } from 'node:crypto';
import type { DevForgeStore } from './devforge.store.ts';
import { seedWorkDemo } from './devforge.work.ts';
import { KNOWN_SCOPES } from './devforge.types.ts';
import type { DevForgeApplication, DevForgeUser, NamespaceRecord, ProjectRecord } from './devforge.types.ts';

/** Users and applications a dev forge starts with. */
export interface DevForgeSeed {
  users: DevForgeUser[];
  applications: DevForgeApplication[];
}

/**
 * A seed for development: one user (username `dev`, a random password returned in the seed) and one public
 * (non-confidential) application with a random 64-hex uid, the given redirect URIs and every known scope.
 */
export function devForgeSeed(redirectUris: string[]): DevForgeSeed {
  return {
    users: [
      {
        id: 1,
        username: 'dev',
        name: 'Dev User',
        email: 'dev@devforge.localhost',
        password: randomBytes(12).toString('base64url'),
      },
    ],
    applications: [
      {
        uid: randomBytes(32).toString('hex'),
        name: 'Forge MCP server (dev)',
        redirectUris: [...redirectUris],
        confidential: false,
        scopes: [...KNOWN_SCOPES],
      },
    ],
  };
}

/** Name of the group owning the public sample project nobody is a member of (to exercise `membership`). */
const SAMPLE_GROUP = 'forge-samples';

/**
 * Adds the sample data: for every user a private `<username>/hello-forge` (three issues, two merge requests) and a
 * public `<username>/handbook` (one issue); plus a public `forge-samples/public-tools` with no members.
 */
export function seedSampleProjects(store: DevForgeStore, now: number): void {
  const addNamespace = (name: string, path: string, kind: NamespaceRecord['kind']): NamespaceRecord => {
    const ns: NamespaceRecord = { id: store.nextId('namespace'), name, path, kind };
    store.namespaces.set(ns.id, ns);
    return ns;
  };
  const addProject = (
    ns: NamespaceRecord,
    fields: { name: string; path: string; description: string; visibility: ProjectRecord['visibility'] },
    creatorId: number,
    memberIds: number[],
  ): ProjectRecord => {
    const p: ProjectRecord = {
      ...fields,
      id: store.nextId('project'),
      namespace: ns,
      creatorId,
      memberIds,
      createdAt: now,
      lastActivityAt: now,
      nextIssueIid: 1,
      nextMergeRequestIid: 1,
    };
    store.projects.set(p.id, p);
    return p;
  };
  const addIssue = (
    p: ProjectRecord,
    authorId: number,
    title: string,
    description: string,
    state: 'opened' | 'closed',
    labels: string[],
  ) => {
    store.issues.push({
      id: store.nextId('issue'),
      iid: p.nextIssueIid++,
      projectId: p.id,
      title,
      description,
      state,
      labels,
      authorId,
      createdAt: now,
      updatedAt: now,
      closedAt: state === 'closed' ? now : null,
    });
  };
  const addMergeRequest = (p: ProjectRecord, authorId: number, title: string, sourceBranch: string, state: 'opened' | 'merged') => {
    store.mergeRequests.push({
      id: store.nextId('mergeRequest'),
      iid: p.nextMergeRequestIid++,
      projectId: p.id,
      title,
      description: `${title}.`,
      state,
      sourceBranch,
      targetBranch: 'main',
      labels: [],
      authorId,
      createdAt: now,
      updatedAt: now,
      mergedAt: state === 'merged' ? now : null,
      closedAt: null,
    });
  };

  const users = [...store.users.values()];
  for (const user of users) {
    const ns = addNamespace(user.name, user.username, 'user');
    const hello = addProject(
      ns,
      { name: 'hello-forge', path: 'hello-forge', description: 'A sample project of the dev forge.', visibility: 'private' },
      user.id,
      [user.id],
    );
    addIssue(hello, user.id, 'Set up continuous integration', 'Run the tests on every push.', 'opened', ['ci']);
    addIssue(hello, user.id, 'Write the README', 'Explain how to run the project.', 'closed', ['documentation']);
    addIssue(hello, user.id, 'Fix the redirect after sign-out', 'Signing out lands on a blank page.', 'opened', ['bug']);
    addMergeRequest(hello, user.id, 'Add a README', 'readme', 'opened');
    addMergeRequest(hello, user.id, 'Initial import', 'import', 'merged');
    const handbook = addProject(
      ns,
      { name: 'handbook', path: 'handbook', description: 'Public notes of the team.', visibility: 'public' },
      user.id,
      [user.id],
    );
    addIssue(handbook, user.id, 'Add an onboarding guide', 'What a newcomer needs on day one.', 'opened', ['documentation']);
  }
  const group = addNamespace('Forge Samples', SAMPLE_GROUP, 'group');
  const tools = addProject(
    group,
    { name: 'public-tools', path: 'public-tools', description: 'Public tools nobody here is a member of.', visibility: 'public' },
    users[0]?.id ?? 0,
    [],
  );
  if (users[0]) addIssue(tools, users[0].id, 'Document the command line', 'List every command and option.', 'opened', []);
}

/** The sample data plus the demo group of devforge.work.ts (issues with notes, merge requests with diffs). */
export function seedDevForge(store: DevForgeStore, now: number): void {
  seedSampleProjects(store, now);
  seedWorkDemo(store, now);
}
