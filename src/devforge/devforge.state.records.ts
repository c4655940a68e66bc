/**
 * The state file's second half: what issue 18 added beside the store — the work records of issues and merge
 * requests (notes, discussions, details, labels, links, drafts), the repositories (commits, branches, tags,
 * protected branches and tags), CI (pipelines, jobs) and the opt-in toolsets' data (wiki pages, releases,
 * milestones, CI/CD variables, webhooks, memberships) — as plain JSON, so a restarted dev forge keeps what a developer
 * or an assistant did, not only its issues and merge requests.
 *
 * File contents are stored once per blob (git's blob id), base64, however many commits hold them: every commit
 * holds its whole tree, and the seeded word list alone would otherwise be written once per commit.
 */
import { createDevForgeCi, type CiCounters, type DevForgeCi, type JobRecord, type PipelineRecord } from './devforge.ci.ts';
import {
  blobId,
  createDevForgeRepositories,
  type CommitRecord,
  type DevForgeRepositories,
  type ProtectedBranchRecord,
  type ProtectedTagRecord,
  type RepoFile,
  type TagRecord,
} from './devforge.repository.ts';
import { createDevForgeExtras, type DevForgeExtrasStore, type ExtrasSnapshot } from './devforge.extras.ts';
import type { DevForgeStore } from './devforge.store.ts';
import { restoreWork, snapshotWork, workOf, type WorkSnapshot } from './devforge.work.ts';

interface StoredCommit extends Omit<CommitRecord, 'files'> {
  /** Path, blob id, executable. */
  files: [string, string, boolean][];
}

interface StoredRepository {
  projectId: number;
  defaultBranch: string;
  commits: StoredCommit[];
  branches: [string, string][];
  tags: TagRecord[];
  protectedBranches: ProtectedBranchRecord[];
  /** Absent in files written before protected tags. */
  protectedTags?: ProtectedTagRecord[];
}

/** The records of the state file (`DevForgeState.records`). */
export interface DevForgeRecordsSnapshot {
  work: WorkSnapshot;
  /** Blob id → base64 content. */
  blobs: Record<string, string>;
  repositories: StoredRepository[];
  ci: { pipelines: PipelineRecord[]; jobs: JobRecord[]; counters: CiCounters };
  /** Wikis, releases, milestones, variables, hooks and memberships; absent in files written before them. */
  extras?: ExtrasSnapshot;
}

/**
 * Blob id and base64 by content: a file's Buffer is shared by every commit that holds it, and the state is
 * serialised after every request, so each content is hashed and encoded once.
 */
const encoded = new WeakMap<Buffer, { id: string; base64: string }>();

function blobOf(content: Buffer): { id: string; base64: string } {
  let blob = encoded.get(content);
  if (!blob) {
    blob = { id: blobId(content), base64: content.toString('base64') };
    encoded.set(content, blob);
  }
  return blob;
}

export function snapshotRecords(
  store: DevForgeStore,
  repositories: DevForgeRepositories,
  ci: DevForgeCi,
  extras: DevForgeExtrasStore,
): DevForgeRecordsSnapshot {
  const blobs: Record<string, string> = {};
  const stored = repositories.all().map((repo) => ({
    projectId: repo.projectId,
    defaultBranch: repo.defaultBranch,
    commits: [...repo.commits.values()].map(({ files, ...commit }) => ({
      ...commit,
      files: [...files].map(([path, file]): [string, string, boolean] => {
        const blob = blobOf(file.content);
        blobs[blob.id] = blob.base64;
        return [path, blob.id, file.executable];
      }),
    })),
    branches: [...repo.branches],
    tags: [...repo.tags.values()],
    protectedBranches: [...repo.protectedBranches.values()],
    protectedTags: [...repo.protectedTags.values()],
  }));
  return {
    work: snapshotWork(workOf(store)),
    blobs,
    repositories: stored,
    ci: { pipelines: ci.pipelines, jobs: ci.jobs, counters: ci.idCounters() },
    extras: extras.snapshot(),
  };
}

/**
 * Restores the work records into `store` and returns the repositories, CI and extras of the snapshot (extras
 * undefined when the file predates them: the caller seeds them).
 */
export function restoreRecords(
  store: DevForgeStore,
  snapshot: DevForgeRecordsSnapshot,
): { repositories: DevForgeRepositories; ci: DevForgeCi; extras: DevForgeExtrasStore | undefined } {
  restoreWork(store, snapshot.work);
  const contents = new Map<string, Buffer>();
  const content = (id: string): Buffer => {
    let buffer = contents.get(id);
    if (!buffer) {
      const base64 = snapshot.blobs[id];
      if (base64 === undefined) throw new Error(`dev forge state: blob ${id} is missing`);
      buffer = Buffer.from(base64, 'base64');
      contents.set(id, buffer);
    }
    return buffer;
  };
  const repositories = snapshot.repositories.map((repo) => ({
    projectId: repo.projectId,
    defaultBranch: repo.defaultBranch,
    commits: new Map(
      repo.commits.map(({ files, ...commit }) => [
        commit.id,
        {
          ...commit,
          files: new Map(files.map(([path, id, executable]): [string, RepoFile] => [path, { content: content(id), executable }])),
        },
      ]),
    ),
    branches: new Map(repo.branches),
    tags: new Map(repo.tags.map((t) => [t.name, t])),
    protectedBranches: new Map(repo.protectedBranches.map((p) => [p.name, p])),
    protectedTags: new Map((repo.protectedTags ?? []).map((p) => [p.name, p])),
  }));
  return {
    repositories: createDevForgeRepositories(repositories),
    ci: createDevForgeCi(snapshot.ci),
    extras: snapshot.extras ? createDevForgeExtras(snapshot.extras) : undefined,
  };
}
