/**
 * JSON shapes of GitLab's repository API (`API::Entities::Commit`, `CommitDetail`, `Branch`, `Tag`,
 * `ProtectedBranch`, `ProtectedTag`, the repository-file answer, tree entries, blame ranges, compare), as mcp-facts.md 2.3 and
 * GitLab's docs list their fields. Times are ISO 8601 in UTC with milliseconds, as GitLab renders them.
 */
import { createHash } from 'node:crypto';
import {
  blobId,
  commitTitle,
  type BlameRange,
  type CommitRecord,
  protectedRefMatches,
  type FileDiff,
  type ProtectedBranchRecord,
  type ProtectedTagRecord,
  type RepoFile,
  type RepositoryRecord,
  type TagRecord,
} from './devforge.repository.ts';
import type { ProjectRecord } from './devforge.types.ts';

const iso = (ms: number): string => new Date(ms).toISOString();

/** `namespace/project`. */
export const projectPath = (p: ProjectRecord): string => `${p.namespace.path}/${p.path}`;

/** `API::Entities::Commit`. */
export function commit(c: CommitRecord, project: ProjectRecord, base: string): Record<string, unknown> {
  return {
    id: c.id,
    short_id: c.id.slice(0, 8),
    created_at: iso(c.committedAt),
    parent_ids: c.parentIds,
    title: commitTitle(c),
    message: c.message,
    author_name: c.authorName,
    author_email: c.authorEmail,
    authored_date: iso(c.authoredAt),
    committer_name: c.committerName,
    committer_email: c.committerEmail,
    committed_date: iso(c.committedAt),
    trailers: {},
    extended_trailers: {},
    web_url: `${base}/${projectPath(project)}/-/commit/${c.id}`,
  };
}

/** `API::Entities::CommitDetail`: the commit, its stats (unless `stats=false`), status and last pipeline. */
export function commitDetail(
  c: CommitRecord,
  project: ProjectRecord,
  base: string,
  extra: { stats?: { additions: number; deletions: number; total: number }; lastPipeline?: Record<string, unknown> | null },
): Record<string, unknown> {
  return {
    ...commit(c, project, base),
    ...(extra.stats ? { stats: extra.stats } : {}),
    status: extra.lastPipeline?.status ?? null,
    project_id: project.id,
    last_pipeline: extra.lastPipeline ?? null,
  };
}

/** `API::Entities::Diff`, with the `generated_file` flag of 16.11+. */
export function diff(d: FileDiff): Record<string, unknown> {
  return { ...d, generated_file: false };
}

/** `API::Entities::Branch`. */
export function branch(
  name: string,
  head: CommitRecord,
  repo: RepositoryRecord,
  project: ProjectRecord,
  base: string,
  merged: boolean,
): Record<string, unknown> {
  // GitLab applies every rule that covers the branch, wildcard rules included (`release/*`).
  const rules = [...repo.protectedBranches.values()].filter((r) => protectedRefMatches(r.name, name));
  return {
    name,
    merged,
    protected: rules.length > 0,
    default: name === repo.defaultBranch,
    developers_can_push: rules.length === 0 || rules.some((r) => r.pushAccessLevel <= 30),
    developers_can_merge: rules.length === 0 || rules.some((r) => r.mergeAccessLevel <= 30),
    can_push: true,
    web_url: `${base}/${projectPath(project)}/-/tree/${name}`,
    commit: commit(head, project, base),
  };
}

/** `API::Entities::Tag`; `protected` when a protected-tag rule covers it (`ProtectedTag.protected?`, wildcards too). */
export function tag(
  t: TagRecord,
  target: CommitRecord,
  project: ProjectRecord,
  base: string,
  release: { tag_name: string; description: string } | null,
  protectedTags: ReadonlyMap<string, ProtectedTagRecord>,
): Record<string, unknown> {
  return {
    name: t.name,
    message: t.message,
    target: t.message === '' ? t.target : createHash('sha1').update(`tag ${t.name}`).digest('hex'),
    commit: commit(target, project, base),
    release,
    protected: [...protectedTags.values()].some((r) => protectedRefMatches(r.name, t.name)),
    created_at: t.message === '' ? null : iso(t.createdAt),
  };
}

const ACCESS_DESCRIPTIONS: Record<number, string> = { 0: 'No one', 30: 'Developers + Maintainers', 40: 'Maintainers', 60: 'Admins' };

function accessLevel(id: number, level: number): Record<string, unknown> {
  return {
    id,
    access_level: level,
    access_level_description: ACCESS_DESCRIPTIONS[level] ?? 'Maintainers',
    user_id: null,
    group_id: null,
  };
}

/** `API::Entities::ProtectedBranch`. */
export function protectedBranch(rule: ProtectedBranchRecord): Record<string, unknown> {
  return {
    id: rule.id,
    name: rule.name,
    push_access_levels: [accessLevel(rule.id * 10 + 1, rule.pushAccessLevel)],
    merge_access_levels: [accessLevel(rule.id * 10 + 2, rule.mergeAccessLevel)],
    unprotect_access_levels: [],
    allow_force_push: rule.allowForcePush,
    code_owner_approval_required: false,
  };
}

/** `API::Entities::ProtectedTag`. */
export function protectedTag(rule: ProtectedTagRecord): Record<string, unknown> {
  return { name: rule.name, create_access_levels: [accessLevel(rule.id * 10 + 3, rule.createAccessLevel)] };
}

/** The answer of `GET …/repository/files/:file_path` (content base64, as GitLab always sends it). */
export function repositoryFile(path: string, file: RepoFile, ref: string, at: CommitRecord, last: CommitRecord): Record<string, unknown> {
  return {
    file_name: path.split('/').pop() ?? path,
    file_path: path,
    size: file.content.length,
    encoding: 'base64',
    content_sha256: createHash('sha256').update(file.content).digest('hex'),
    ref,
    blob_id: blobId(file.content),
    commit_id: at.id,
    last_commit_id: last.id,
    execute_filemode: file.executable,
    content: file.content.toString('base64'),
  };
}

/** One range of `GET …/files/:file_path/blame`. */
export function blameRange(range: BlameRange): Record<string, unknown> {
  const c = range.commit;
  return {
    commit: {
      id: c.id,
      parent_ids: c.parentIds,
      message: c.message,
      authored_date: iso(c.authoredAt),
      author_name: c.authorName,
      author_email: c.authorEmail,
      committed_date: iso(c.committedAt),
      committer_name: c.committerName,
      committer_email: c.committerEmail,
    },
    lines: range.lines,
  };
}

/**
 * A `blobs` search hit (`API::Entities::Blob`): the first line holding `term` (case-insensitive) with a line of
 * context either side, or undefined when the file does not hold it.
 */
export function searchBlob(
  path: string,
  text: string,
  term: string,
  ref: string,
  project: ProjectRecord,
): Record<string, unknown> | undefined {
  const needle = term.toLowerCase();
  const lines = text.split('\n');
  const hit = lines.findIndex((line) => line.toLowerCase().includes(needle));
  if (hit < 0) return undefined;
  const from = Math.max(0, hit - 1);
  const slash = path.lastIndexOf('/');
  const name = path.slice(slash + 1);
  const dot = name.lastIndexOf('.');
  return {
    basename: `${path.slice(0, slash + 1)}${dot > 0 ? name.slice(0, dot) : name}`,
    data: lines.slice(from, from + 3).join('\n'),
    path,
    filename: path,
    id: null,
    ref,
    startline: from + 1,
    project_id: project.id,
  };
}
