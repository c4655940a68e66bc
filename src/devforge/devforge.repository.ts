/**
 * The dev forge's git repositories (issue 18 item 4), in memory: every commit holds a full snapshot of its files,
 * ids are git's own (`sha1("blob <size>\0<content>")` for blobs, a SHA-1 of the commit text for commits), and the
 * operations GitLab's repository API offers are rules over that: resolving refs, history with a path filter,
 * diffs, merge bases, blame, and committing a batch of file actions onto a branch. HTTP shapes are in
 * devforge.repository.routes.ts.
 */
import { createHash } from 'node:crypto';
import { diffLines, splitLines, unifiedDiff } from './devforge.diff.ts';

export interface RepoFile {
  content: Buffer;
  executable: boolean;
}

export interface CommitRecord {
  id: string;
  parentIds: string[];
  message: string;
  authorName: string;
  authorEmail: string;
  authoredAt: number;
  committerName: string;
  committerEmail: string;
  committedAt: number;
  /** The whole tree at this commit, by path. */
  files: ReadonlyMap<string, RepoFile>;
}

export interface TagRecord {
  name: string;
  target: string;
  /** Empty for a lightweight tag. */
  message: string;
  createdAt: number;
}

export interface ProtectedBranchRecord {
  id: number;
  name: string;
  /** GitLab access levels: 0 no one, 30 developers, 40 maintainers. */
  pushAccessLevel: number;
  mergeAccessLevel: number;
  allowForcePush: boolean;
}

export interface ProtectedTagRecord {
  id: number;
  name: string;
  /** Who may create matching tags: 0 no one, 30 developers, 40 maintainers. */
  createAccessLevel: number;
}

/**
 * Whether a protected-ref rule's name covers `ref`, as GitLab's `RefMatcher` decides: the exact name, or a pattern
 * whose `*` stands for any characters, `/` included (`release/*` covers `release/1.0` and `release/1.0/hotfix`).
 */
export function protectedRefMatches(rule: string, ref: string): boolean {
  if (rule === '') return false;
  if (rule === ref) return true;
  if (!rule.includes('*')) return false;
  const escaped = rule.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*?')}$`, 's').test(ref);
}

export interface RepositoryRecord {
  projectId: number;
  defaultBranch: string;
  commits: Map<string, CommitRecord>;
  branches: Map<string, string>;
  tags: Map<string, TagRecord>;
  protectedBranches: Map<string, ProtectedBranchRecord>;
  protectedTags: Map<string, ProtectedTagRecord>;
}

/** A file change between two trees, in GitLab's diff shape (`API::Entities::Diff`). */
export interface FileDiff {
  old_path: string;
  new_path: string;
  a_mode: string;
  b_mode: string;
  new_file: boolean;
  renamed_file: boolean;
  deleted_file: boolean;
  diff: string;
}

/** A refusal of a repository operation: GitLab's status and message. */
export class RepositoryError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function blobId(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** Whether content is shown as text: no NUL byte in the first 8000 bytes (git's own heuristic) and valid UTF-8. */
export function isBinary(content: Buffer): boolean {
  if (content.subarray(0, 8000).includes(0)) return true;
  return !Buffer.from(content.toString('utf8'), 'utf8').equals(content);
}

export const fileMode = (file: RepoFile | undefined): string => (file === undefined ? '0' : file.executable ? '100755' : '100644');

/** The commit's first line. */
export const commitTitle = (c: CommitRecord): string => c.message.split('\n')[0] ?? '';

/** Identity of a commit author. */
export interface Signature {
  name: string;
  email: string;
}

/** Records a commit (its id from its content) and returns it. */
export function addCommit(
  repo: RepositoryRecord,
  input: { parentIds: string[]; message: string; author: Signature; at: number; files: ReadonlyMap<string, RepoFile> },
): CommitRecord {
  const tree = [...input.files.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([path, f]) => `${fileMode(f)} ${blobId(f.content)} ${path}`)
    .join('\n');
  const text = `tree ${createHash('sha1').update(tree).digest('hex')}\n${input.parentIds.map((p) => `parent ${p}\n`).join('')}author ${input.author.name} <${input.author.email}> ${Math.floor(input.at / 1000)}\n\n${input.message}`;
  const id = createHash('sha1')
    .update(`commit ${Buffer.byteLength(text)}\0${text}`)
    .digest('hex');
  const commit: CommitRecord = {
    id,
    parentIds: [...input.parentIds],
    message: input.message,
    authorName: input.author.name,
    authorEmail: input.author.email,
    authoredAt: input.at,
    committerName: input.author.name,
    committerEmail: input.author.email,
    committedAt: input.at,
    files: input.files,
  };
  repo.commits.set(id, commit);
  return commit;
}

/**
 * The commit a ref names: `HEAD` (the default branch), a branch, a tag, or a commit id (full, or a unique prefix
 * of at least 7 characters, like GitLab's short ids).
 */
export function resolveRef(repo: RepositoryRecord, ref: string): CommitRecord | undefined {
  const name = ref === 'HEAD' ? repo.defaultBranch : ref.replace(/^refs\/(heads|tags)\//, '');
  const branch = repo.branches.get(name);
  if (branch) return repo.commits.get(branch);
  const tag = repo.tags.get(name);
  if (tag) return repo.commits.get(tag.target);
  if (/^[0-9a-f]{7,40}$/i.test(ref)) {
    const key = ref.toLowerCase();
    const exact = repo.commits.get(key);
    if (exact) return exact;
    const found = [...repo.commits.values()].filter((c) => c.id.startsWith(key));
    if (found.length === 1) return found[0];
  }
  return undefined;
}

/** `start` and every ancestor, newest committed first (ties: the later-recorded first). */
export function ancestors(repo: RepositoryRecord, start: CommitRecord): CommitRecord[] {
  const seen = new Map<string, CommitRecord>();
  const queue = [start];
  while (queue.length > 0) {
    const c = queue.shift();
    if (!c || seen.has(c.id)) continue;
    seen.set(c.id, c);
    for (const p of c.parentIds) {
      const parent = repo.commits.get(p);
      if (parent) queue.push(parent);
    }
  }
  const order = [...repo.commits.keys()];
  return [...seen.values()].sort((a, b) => b.committedAt - a.committedAt || order.indexOf(b.id) - order.indexOf(a.id));
}

/** Whether `commit` changed `path` (a file, or anything under a directory) against its first parent. */
export function touches(repo: RepositoryRecord, commit: CommitRecord, path: string): boolean {
  const parent = commit.parentIds[0] ? repo.commits.get(commit.parentIds[0]) : undefined;
  const prefix = `${path.replace(/\/+$/, '')}/`;
  const within = (p: string) => p === path || p.startsWith(prefix);
  const paths = new Set([...commit.files.keys(), ...(parent?.files.keys() ?? [])].filter(within));
  for (const p of paths) {
    const a = parent?.files.get(p);
    const b = commit.files.get(p);
    if (!a || !b || !a.content.equals(b.content) || a.executable !== b.executable) return true;
  }
  return false;
}

/** The nearest common ancestor of two commits (git merge-base), or undefined for unrelated histories. */
export function mergeBase(repo: RepositoryRecord, a: CommitRecord, b: CommitRecord): CommitRecord | undefined {
  const ofA = new Set(ancestors(repo, a).map((c) => c.id));
  return ancestors(repo, b).find((c) => ofA.has(c.id));
}

function diffText(a: RepoFile | undefined, b: RepoFile | undefined, path: string): string {
  const before = a?.content ?? Buffer.alloc(0);
  const after = b?.content ?? Buffer.alloc(0);
  if ((a && isBinary(before)) || (b && isBinary(after))) return `Binary files a/${path} and b/${path} differ\n`;
  return unifiedDiff(before.toString('utf8'), after.toString('utf8'));
}

/** The changes from tree `from` to tree `to`, by path; a removed and an added file with equal content is a rename. */
export function treeDiff(from: ReadonlyMap<string, RepoFile>, to: ReadonlyMap<string, RepoFile>): FileDiff[] {
  const removed = [...from.keys()].filter((p) => !to.has(p));
  const added = [...to.keys()].filter((p) => !from.has(p));
  const renames = new Map<string, string>();
  for (const path of added) {
    const content = to.get(path)?.content;
    const source = removed.find((r) => !renames.has(r) && content !== undefined && from.get(r)?.content.equals(content));
    if (source !== undefined) renames.set(source, path);
  }
  const renamedTo = new Set(renames.values());
  const out: FileDiff[] = [];
  const paths = [...new Set([...from.keys(), ...to.keys()])].sort();
  for (const path of paths) {
    const a = from.get(path);
    const b = to.get(path);
    if (renamedTo.has(path)) continue;
    const target = renames.get(path);
    if (target !== undefined) {
      const moved = to.get(target);
      out.push({
        old_path: path,
        new_path: target,
        a_mode: fileMode(a),
        b_mode: fileMode(moved),
        new_file: false,
        renamed_file: true,
        deleted_file: false,
        diff: '',
      });
      continue;
    }
    if (a && b && a.content.equals(b.content) && a.executable === b.executable) continue;
    out.push({
      old_path: path,
      new_path: path,
      a_mode: fileMode(a),
      b_mode: fileMode(b),
      new_file: a === undefined,
      renamed_file: false,
      deleted_file: b === undefined,
      diff: diffText(a, b, path),
    });
  }
  return out;
}

/** Lines added and removed by a set of diffs (`stats` of a commit). */
export function diffStats(diffs: readonly FileDiff[]): { additions: number; deletions: number; total: number } {
  let additions = 0;
  let deletions = 0;
  for (const d of diffs)
    for (const line of d.diff.split('\n')) {
      if (line.startsWith('+')) additions += 1;
      else if (line.startsWith('-')) deletions += 1;
    }
  return { additions, deletions, total: additions + deletions };
}

/** A commit's changes against its first parent (the root commit against an empty tree). */
export function commitDiff(repo: RepositoryRecord, commit: CommitRecord): FileDiff[] {
  const parent = commit.parentIds[0] ? repo.commits.get(commit.parentIds[0]) : undefined;
  return treeDiff(parent?.files ?? new Map(), commit.files);
}

/** One blame range: the commit that last changed these consecutive lines, and the lines. */
export interface BlameRange {
  commit: CommitRecord;
  lines: string[];
  /** 1-based line number of the range's first line in the file. */
  start: number;
}

/** `git blame` of `path` at `commit`, following the first parent (renames are not followed). */
export function blame(repo: RepositoryRecord, commit: CommitRecord, path: string): BlameRange[] | undefined {
  const file = commit.files.get(path);
  if (!file) return undefined;
  const finalLines = splitLines(file.content.toString('utf8'));
  const owner: (CommitRecord | undefined)[] = finalLines.map(() => undefined);
  // Lines not yet attributed: their index in the final file and in the version under examination.
  let open = finalLines.map((_, i) => ({ final: i, here: i }));
  let current = commit;
  let currentLines = finalLines;
  while (open.length > 0) {
    const parent = current.parentIds[0] ? repo.commits.get(current.parentIds[0]) : undefined;
    const before = parent?.files.get(path);
    if (!parent || !before) {
      for (const line of open) owner[line.final] = current;
      break;
    }
    const parentLines = splitLines(before.content.toString('utf8'));
    const kept = new Map<number, number>();
    for (const d of diffLines(parentLines, currentLines))
      if (d.kind === ' ' && d.newIndex !== undefined && d.oldIndex !== undefined) kept.set(d.newIndex, d.oldIndex);
    const next: typeof open = [];
    for (const line of open) {
      const there = kept.get(line.here);
      if (there === undefined) owner[line.final] = current;
      else next.push({ final: line.final, here: there });
    }
    open = next;
    current = parent;
    currentLines = parentLines;
  }
  const ranges: BlameRange[] = [];
  finalLines.forEach((text, i) => {
    const by = owner[i] ?? commit;
    const last = ranges[ranges.length - 1];
    if (last && last.commit.id === by.id) last.lines.push(text);
    else ranges.push({ commit: by, lines: [text], start: i + 1 });
  });
  return ranges;
}

/** One action of `POST /projects/:id/repository/commits`. */
export interface CommitAction {
  action: 'create' | 'update' | 'delete' | 'move' | 'chmod';
  file_path: string;
  previous_path?: string | undefined;
  content?: Buffer | undefined;
  last_commit_id?: string | undefined;
  execute_filemode?: boolean | undefined;
}

/** The last commit (newest first in history from `head`) that changed `path`. */
export function lastCommitFor(repo: RepositoryRecord, head: CommitRecord, path: string): CommitRecord {
  return ancestors(repo, head).find((c) => touches(repo, c, path)) ?? head;
}

/**
 * Applies `actions` on top of `branch` (created from `startBranch` when missing) as one commit, with GitLab's
 * refusals (400 with its messages). Returns the new commit.
 */
export function commitActions(
  repo: RepositoryRecord,
  input: { branch: string; startBranch?: string | undefined; message: string; author: Signature; at: number; actions: CommitAction[] },
): CommitRecord {
  const headId = repo.branches.get(input.branch);
  let base: CommitRecord | undefined;
  if (headId !== undefined) {
    if (input.startBranch !== undefined && input.startBranch !== input.branch)
      throw new RepositoryError(400, `A branch called '${input.branch}' already exists. Switch to that branch in order to make changes`);
    base = repo.commits.get(headId);
  } else {
    if (input.startBranch === undefined) throw new RepositoryError(400, 'You can only create or edit files when you are on a branch');
    base = resolveRef(repo, input.startBranch);
    if (!base) throw new RepositoryError(400, `Failed to create branch '${input.branch}': invalid reference name '${input.startBranch}'`);
  }
  if (!base) throw new RepositoryError(400, 'You can only create or edit files when you are on a branch');
  if (input.actions.length === 0) throw new RepositoryError(400, 'actions is empty');
  const files = new Map(base.files);
  const changedSince = (path: string, lastCommitId: string | undefined) => {
    if (lastCommitId === undefined || !base) return;
    if (lastCommitFor(repo, base, path).id !== lastCommitId)
      throw new RepositoryError(400, 'You are attempting to update a file that has changed since you started editing it.');
  };
  for (const a of input.actions) {
    const path = a.file_path;
    if (path === '' || path.startsWith('/') || path.split('/').includes('..'))
      throw new RepositoryError(400, `Your changes could not be committed because the file path ${path} is invalid`);
    const existing = files.get(path);
    switch (a.action) {
      case 'create':
        if (existing) throw new RepositoryError(400, 'A file with this name already exists');
        files.set(path, { content: a.content ?? Buffer.alloc(0), executable: a.execute_filemode ?? false });
        break;
      case 'update':
        if (!existing) throw new RepositoryError(400, "A file with this name doesn't exist");
        changedSince(path, a.last_commit_id);
        files.set(path, { content: a.content ?? Buffer.alloc(0), executable: a.execute_filemode ?? existing.executable });
        break;
      case 'delete':
        if (!existing) throw new RepositoryError(400, "A file with this name doesn't exist");
        changedSince(path, a.last_commit_id);
        files.delete(path);
        break;
      case 'move': {
        const from = a.previous_path;
        const source = from === undefined ? undefined : files.get(from);
        if (from === undefined || !source) throw new RepositoryError(400, "A file with this name doesn't exist");
        if (existing) throw new RepositoryError(400, 'A file with this name already exists');
        changedSince(from, a.last_commit_id);
        files.delete(from);
        files.set(path, { content: a.content ?? source.content, executable: source.executable });
        break;
      }
      case 'chmod':
        if (!existing) throw new RepositoryError(400, "A file with this name doesn't exist");
        files.set(path, { content: existing.content, executable: a.execute_filemode ?? false });
        break;
    }
  }
  const commit = addCommit(repo, { parentIds: [base.id], message: input.message, author: input.author, at: input.at, files });
  repo.branches.set(input.branch, commit.id);
  return commit;
}

/** The entries of the tree at `path` (directories first per level, then files, by name), or all below it. */
export function treeEntries(
  commit: CommitRecord,
  path: string,
  recursive: boolean,
): { id: string; name: string; type: 'tree' | 'blob'; path: string; mode: string }[] | undefined {
  const dir = path.replace(/^\/+|\/+$/g, '');
  const prefix = dir === '' ? '' : `${dir}/`;
  const entries = new Map<string, { id: string; name: string; type: 'tree' | 'blob'; path: string; mode: string }>();
  let found = dir === '';
  for (const [filePath, file] of commit.files) {
    if (!filePath.startsWith(prefix)) continue;
    found = true;
    const rest = filePath.slice(prefix.length).split('/');
    const depthLimit = recursive ? rest.length : 1;
    for (let depth = 1; depth <= depthLimit; depth += 1) {
      const entryPath = prefix + rest.slice(0, depth).join('/');
      if (entries.has(entryPath)) continue;
      const isFile = depth === rest.length;
      entries.set(entryPath, {
        id: isFile ? blobId(file.content) : createHash('sha1').update(`tree ${commit.id} ${entryPath}`).digest('hex'),
        name: rest[depth - 1] ?? '',
        type: isFile ? 'blob' : 'tree',
        path: entryPath,
        mode: isFile ? fileMode(file) : '040000',
      });
    }
  }
  if (!found) return undefined;
  return [...entries.values()].sort((a, b) =>
    a.type !== b.type && !recursive ? (a.type === 'tree' ? -1 : 1) : a.path < b.path ? -1 : a.path > b.path ? 1 : 0,
  );
}

/** Every project's repository, created empty (default branch `main`) the first time it is asked for. */
export interface DevForgeRepositories {
  of(projectId: number): RepositoryRecord;
  /** Every repository created so far (for the state file). */
  all(): RepositoryRecord[];
}

/** Empty, or holding the repositories of a state file. */
export function createDevForgeRepositories(restore: readonly RepositoryRecord[] = []): DevForgeRepositories {
  const repos = new Map<number, RepositoryRecord>(restore.map((r) => [r.projectId, r]));
  return {
    all: () => [...repos.values()],
    of(projectId) {
      let repo = repos.get(projectId);
      if (!repo) {
        repo = {
          projectId,
          defaultBranch: 'main',
          commits: new Map(),
          branches: new Map(),
          tags: new Map(),
          protectedBranches: new Map(),
          protectedTags: new Map(),
        };
        repos.set(projectId, repo);
      }
      return repo;
    },
  };
}
