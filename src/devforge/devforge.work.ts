/**
 * The dev forge's day-to-day records beside the store's issues and merge requests: what GitLab keeps about them
 * that the MCP tools read and write (assignees, milestones, confidentiality, labels, notes and discussions, issue
 * links, merge-request diffs, commits, versions, approvals, draft notes, merge status), their JSON shapes
 * (`API::Entities::…`), and the demo data a newcomer explores.
 *
 * Kept beside the store rather than in it (one record per store, created on first use) so this part can grow
 * without touching the store other resources share. The state file keeps them beside the store's snapshot
 * (devforge.state.records.ts).
 */
import { createHash } from 'node:crypto';
import { issue as issueEntity, mergeRequest as mergeRequestEntity, userBasic } from './devforge.api.serializers.ts';
import type { DevForgeStore } from './devforge.store.ts';
import type { IssueRecord, MergeRequestRecord, NamespaceRecord, ProjectRecord } from './devforge.types.ts';

export interface IssueDetails {
  assigneeIds: number[];
  confidential: boolean;
  milestone: string | null;
  closedById: number | null;
}

export interface DiffFile {
  oldPath: string;
  newPath: string;
  diff: string;
  newFile: boolean;
  deletedFile: boolean;
  renamedFile: boolean;
  /** GitLab's diff limits: a file over them comes with an empty `diff` and one of these set. */
  tooLarge: boolean;
  collapsed: boolean;
}

export interface CommitRecord {
  id: string;
  title: string;
  message: string;
  authorName: string;
  authorEmail: string;
  createdAt: number;
  parentIds: string[];
}

export interface MergeRequestDetails {
  diffs: DiffFile[];
  commits: CommitRecord[];
  baseSha: string;
  startSha: string;
  headSha: string;
  versions: { id: number; headSha: string; baseSha: string; startSha: string; createdAt: number }[];
  approvedBy: number[];
  assigneeIds: number[];
  reviewerIds: number[];
  draft: boolean;
  mergeCommitSha: string | null;
  /** Reads of the merge request that still answer `checking` (GitLab computes mergeability asynchronously). */
  checksPending: number;
  /** Issue iids of the same project this merge request closes when merged (`Closes #n` in the description). */
  closesIssueIids: number[];
}

export interface NoteRecord {
  id: number;
  discussionId: string;
  noteableType: 'Issue' | 'MergeRequest';
  /** The global id of the issue or merge request. */
  noteableId: number;
  noteableIid: number;
  projectId: number;
  body: string;
  authorId: number;
  createdAt: number;
  updatedAt: number;
  system: boolean;
  type: null | 'DiscussionNote' | 'DiffNote';
  position: DiffPosition | null;
  resolvable: boolean;
  resolvedById: number | null;
  resolvedAt: number | null;
}

export interface DiffPosition {
  base_sha: string;
  start_sha: string;
  head_sha: string;
  position_type: 'text';
  old_path: string;
  new_path: string;
  old_line: number | null;
  new_line: number | null;
}

export interface DraftNoteRecord {
  id: number;
  mergeRequestId: number;
  authorId: number;
  note: string;
  position: DiffPosition | null;
  inReplyToDiscussionId: string | null;
}

export interface LabelRecord {
  id: number;
  projectId: number;
  name: string;
  color: string;
  description: string | null;
}

export interface IssueLinkRecord {
  id: number;
  sourceIssueId: number;
  targetIssueId: number;
  linkType: 'relates_to' | 'blocks' | 'is_blocked_by';
  createdAt: number;
}

export interface WorkState {
  issues: Map<number, IssueDetails>;
  mergeRequests: Map<number, MergeRequestDetails>;
  notes: NoteRecord[];
  drafts: DraftNoteRecord[];
  labels: LabelRecord[];
  links: IssueLinkRecord[];
  nextId(kind: WorkIdKind): number;
  /** The last id handed out per kind (for the state file). */
  idCounters(): Record<WorkIdKind, number>;
}

type WorkIdKind = 'note' | 'label' | 'link' | 'draft' | 'version';

/** The work records as plain JSON (the state file keeps them, devforge.state.records.ts). */
export interface WorkSnapshot {
  issues: [number, IssueDetails][];
  mergeRequests: [number, MergeRequestDetails][];
  notes: NoteRecord[];
  drafts: DraftNoteRecord[];
  labels: LabelRecord[];
  links: IssueLinkRecord[];
  counters: Record<WorkIdKind, number>;
}

const states = new WeakMap<DevForgeStore, WorkState>();

function workState(from?: WorkSnapshot): WorkState {
  const counters: Record<WorkIdKind, number> = { note: 0, label: 0, link: 0, draft: 0, version: 0, ...from?.counters };
  return {
    issues: new Map(from?.issues),
    mergeRequests: new Map(from?.mergeRequests),
    notes: from?.notes ?? [],
    drafts: from?.drafts ?? [],
    labels: from?.labels ?? [],
    links: from?.links ?? [],
    nextId(kind) {
      counters[kind] += 1;
      return counters[kind];
    },
    idCounters: () => ({ ...counters }),
  };
}

/** The work records of `store` (created empty on first use). */
export function workOf(store: DevForgeStore): WorkState {
  let state = states.get(store);
  if (!state) {
    state = workState();
    states.set(store, state);
  }
  return state;
}

export function snapshotWork(work: WorkState): WorkSnapshot {
  return {
    issues: [...work.issues],
    mergeRequests: [...work.mergeRequests],
    notes: work.notes,
    drafts: work.drafts,
    labels: work.labels,
    links: work.links,
    counters: work.idCounters(),
  };
}

/** Gives `store` the work records of a state file (before any request reads them). */
export function restoreWork(store: DevForgeStore, snapshot: WorkSnapshot): void {
  states.set(store, workState(snapshot));
}

export function issueDetails(store: DevForgeStore, issue: IssueRecord): IssueDetails {
  const work = workOf(store);
  let d = work.issues.get(issue.id);
  if (!d) {
    d = { assigneeIds: [], confidential: false, milestone: null, closedById: issue.state === 'closed' ? issue.authorId : null };
    work.issues.set(issue.id, d);
  }
  return d;
}

/** A 40-hex SHA standing for `seed` (the dev forge has no repository objects behind merge requests). */
export function fakeSha(seed: string): string {
  return createHash('sha1').update(seed).digest('hex');
}

/** A one-file diff adding `lines` lines to `path` (new file) — the default change of a merge request. */
export function addedFileDiff(path: string, lines: string[]): DiffFile {
  return {
    oldPath: path,
    newPath: path,
    diff: `@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join('\n')}\n`,
    newFile: true,
    deletedFile: false,
    renamedFile: false,
    tooLarge: false,
    collapsed: false,
  };
}

/** A file a test gives a merge request: a new file of these lines, or a change to an existing one as unified diff hunks. */
export type MergeRequestFile = { path: string; lines: string[] } | { path: string; diff: string };

/**
 * Test and bench hook: the merge request's change becomes `files` (a merge request created through the API
 * otherwise changes one file). Its diff refs and versions stay.
 */
export function setMergeRequestFiles(store: DevForgeStore, mr: MergeRequestRecord, files: readonly MergeRequestFile[]): void {
  mergeRequestDetails(store, mr).diffs = files.map((f) =>
    'diff' in f ? { ...addedFileDiff(f.path, []), diff: f.diff, newFile: false } : addedFileDiff(f.path, f.lines),
  );
}

export function mergeRequestDetails(store: DevForgeStore, mr: MergeRequestRecord): MergeRequestDetails {
  const work = workOf(store);
  let d = work.mergeRequests.get(mr.id);
  if (!d) {
    const path = `changes/${mr.sourceBranch.replace(/[^\w.-]+/g, '-')}.md`;
    d = newDetails(work, mr, [addedFileDiff(path, [`# ${mr.title}`, '', mr.description ?? ''])], mr.createdAt);
    work.mergeRequests.set(mr.id, d);
  }
  return d;
}

function newDetails(work: WorkState, mr: MergeRequestRecord, diffs: DiffFile[], at: number): MergeRequestDetails {
  const baseSha = fakeSha(`base:${mr.projectId}:${mr.targetBranch}`);
  const headSha = fakeSha(`head:${mr.id}:${at}`);
  return {
    diffs,
    commits: [
      {
        id: headSha,
        title: mr.title,
        message: `${mr.title}\n`,
        authorName: 'Dev User',
        authorEmail: 'dev@devforge.localhost',
        createdAt: at,
        parentIds: [baseSha],
      },
    ],
    baseSha,
    startSha: baseSha,
    headSha,
    versions: [{ id: work.nextId('version'), headSha, baseSha, startSha: baseSha, createdAt: at }],
    approvedBy: [],
    assigneeIds: [],
    reviewerIds: [],
    draft: /^(draft:|\[draft\]|\(draft\))/i.test(mr.title),
    mergeCommitSha: mr.state === 'merged' ? fakeSha(`merge:${mr.id}`) : null,
    checksPending: 0,
    closesIssueIids: [...(mr.description ?? '').matchAll(/\b(?:closes|fixes|resolves)\s+#(\d+)/gi)].map((m) => Number(m[1])),
  };
}

/** The (old, new) line pairs a diff shows: added `[null, n]`, removed `[o, null]`, context `[o, n]`. */
export function diffLines(diff: string): [number | null, number | null][] {
  const out: [number | null, number | null][] = [];
  let oldLine = 0;
  let newLine = 0;
  for (const line of diff.split('\n')) {
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) {
      oldLine = Number(hunk[1]);
      newLine = Number(hunk[2]);
      // A hunk starting at 0 (a new or deleted file) counts its first line as 1.
      if (oldLine === 0) oldLine = 1;
      if (newLine === 0) newLine = 1;
      continue;
    }
    if (line.startsWith('+')) out.push([null, newLine++]);
    else if (line.startsWith('-')) out.push([oldLine++, null]);
    else if (line.startsWith(' ')) out.push([oldLine++, newLine++]);
  }
  return out;
}

// ---- JSON shapes ----------------------------------------------------------------------------------------------

const iso = (ms: number): string => new Date(ms).toISOString();

function users(store: DevForgeStore, ids: number[], base: string): Record<string, unknown>[] {
  return ids.flatMap((id) => {
    const u = store.users.get(id);
    return u ? [userBasic(u, base)] : [];
  });
}

function milestoneEntity(project: ProjectRecord, title: string | null): Record<string, unknown> | null {
  if (title === null) return null;
  const id = Number.parseInt(fakeSha(`milestone:${project.id}:${title}`).slice(0, 6), 16);
  return { id, iid: 1, project_id: project.id, title, description: '', state: 'active', due_date: null, start_date: null, web_url: '' };
}

/** `API::Entities::Issue` with the details above. */
export function fullIssue(store: DevForgeStore, i: IssueRecord, project: ProjectRecord, base: string): Record<string, unknown> {
  const author = store.users.get(i.authorId);
  if (!author) throw new Error(`issue ${i.id} refers to missing user ${i.authorId}`);
  const d = issueDetails(store, i);
  const work = workOf(store);
  const assignees = users(store, d.assigneeIds, base);
  const closer = d.closedById === null ? undefined : store.users.get(d.closedById);
  return {
    ...issueEntity(i, project, author, base),
    assignees,
    assignee: assignees[0] ?? null,
    milestone: milestoneEntity(project, d.milestone),
    confidential: d.confidential,
    closed_by: i.state === 'closed' && closer ? userBasic(closer, base) : null,
    user_notes_count: work.notes.filter((n) => n.noteableType === 'Issue' && n.noteableId === i.id && !n.system).length,
    merge_requests_count: relatedMergeRequests(store, i).length,
  };
}

/** Merge requests of the issue's project that mention it as closed by them. */
export function relatedMergeRequests(store: DevForgeStore, i: IssueRecord): MergeRequestRecord[] {
  return store.mergeRequests.filter((m) => m.projectId === i.projectId && mergeRequestDetails(store, m).closesIssueIids.includes(i.iid));
}

/** `API::Entities::MergeRequestBasic` (list) or `MergeRequest` (single, `single` true) with the details above. */
export function fullMergeRequest(
  store: DevForgeStore,
  mr: MergeRequestRecord,
  project: ProjectRecord,
  base: string,
  single: boolean,
  viewerId?: number,
): Record<string, unknown> {
  const author = store.users.get(mr.authorId);
  if (!author) throw new Error(`merge request ${mr.id} refers to missing user ${mr.authorId}`);
  const d = mergeRequestDetails(store, mr);
  const checking = d.checksPending > 0 && mr.state === 'opened';
  const assignees = users(store, d.assigneeIds, base);
  const detailed = mr.state !== 'opened' ? 'not_open' : checking ? 'checking' : d.draft ? 'draft_status' : 'mergeable';
  const value: Record<string, unknown> = {
    ...mergeRequestEntity(mr, project, author, base),
    assignees,
    assignee: assignees[0] ?? null,
    reviewers: users(store, d.reviewerIds, base),
    draft: d.draft,
    work_in_progress: d.draft,
    merge_status: checking ? 'checking' : mr.state === 'opened' ? 'can_be_merged' : 'can_be_merged',
    detailed_merge_status: detailed,
    sha: d.headSha,
    merge_commit_sha: d.mergeCommitSha,
    user_notes_count: workOf(store).notes.filter((n) => n.noteableType === 'MergeRequest' && n.noteableId === mr.id && !n.system).length,
  };
  if (!single) return value;
  return {
    ...value,
    subscribed: false,
    changes_count: d.diffs.length > 1000 ? '1000+' : String(d.diffs.length),
    latest_build_started_at: null,
    latest_build_finished_at: null,
    first_deployed_to_production_at: null,
    pipeline: null,
    head_pipeline: null,
    diff_refs: { base_sha: d.baseSha, head_sha: d.headSha, start_sha: d.startSha },
    merge_error: null,
    first_contribution: false,
    user: { can_merge: viewerId !== undefined && project.memberIds.includes(viewerId) },
    diverged_commits_count: 0,
    rebase_in_progress: false,
  };
}

/** `API::Entities::Note`. */
export function noteEntity(store: DevForgeStore, n: NoteRecord, base: string): Record<string, unknown> {
  const author = store.users.get(n.authorId);
  const resolver = n.resolvedById === null ? undefined : store.users.get(n.resolvedById);
  return {
    id: n.id,
    type: n.type,
    body: n.body,
    attachment: null,
    author: author ? userBasic(author, base) : null,
    created_at: iso(n.createdAt),
    updated_at: iso(n.updatedAt),
    system: n.system,
    noteable_id: n.noteableId,
    noteable_type: n.noteableType,
    project_id: n.projectId,
    ...(n.position ? { position: { ...n.position } } : {}),
    resolvable: n.resolvable,
    ...(n.resolvable
      ? {
          resolved: n.resolvedById !== null,
          resolved_by: resolver ? userBasic(resolver, base) : null,
          resolved_at: n.resolvedAt === null ? null : iso(n.resolvedAt),
        }
      : {}),
    confidential: false,
    internal: false,
    imported: false,
    imported_from: 'none',
    noteable_iid: n.noteableIid,
    commands_changes: {},
  };
}

/** `API::Entities::Discussion`: the notes of one thread, oldest first. */
export function discussionEntity(store: DevForgeStore, id: string, notes: NoteRecord[], base: string): Record<string, unknown> {
  const first = notes[0];
  return { id, individual_note: first !== undefined && first.type === null, notes: notes.map((n) => noteEntity(store, n, base)) };
}

/** The notes of an issue or merge request grouped by discussion, threads in order of their first note. */
export function discussionsOf(work: WorkState, type: NoteRecord['noteableType'], noteableId: number): [string, NoteRecord[]][] {
  const groups = new Map<string, NoteRecord[]>();
  for (const n of work.notes) {
    if (n.noteableType !== type || n.noteableId !== noteableId) continue;
    const list = groups.get(n.discussionId) ?? [];
    list.push(n);
    groups.set(n.discussionId, list);
  }
  return [...groups.entries()];
}

/** `API::Entities::ProjectLabel`. */
export function labelEntity(store: DevForgeStore, label: LabelRecord): Record<string, unknown> {
  const count = (state: string, list: { projectId: number; labels: string[]; state: string }[]) =>
    list.filter((x) => x.projectId === label.projectId && x.state === state && x.labels.includes(label.name)).length;
  return {
    id: label.id,
    name: label.name,
    color: label.color,
    text_color: '#FFFFFF',
    description: label.description,
    description_html: label.description ?? '',
    open_issues_count: count('opened', store.issues),
    closed_issues_count: count('closed', store.issues),
    open_merge_requests_count: count('opened', store.mergeRequests),
    subscribed: false,
    priority: null,
    is_project_label: true,
  };
}

/** The labels of a project, created on first use from the labels its issues and merge requests carry. */
export function projectLabels(store: DevForgeStore, project: ProjectRecord): LabelRecord[] {
  const work = workOf(store);
  const names = new Set([
    ...store.issues.filter((i) => i.projectId === project.id).flatMap((i) => i.labels),
    ...store.mergeRequests.filter((m) => m.projectId === project.id).flatMap((m) => m.labels),
  ]);
  for (const name of names)
    if (!work.labels.some((l) => l.projectId === project.id && l.name === name))
      work.labels.push({ id: work.nextId('label'), projectId: project.id, name, color: '#6699cc', description: null });
  return work.labels.filter((l) => l.projectId === project.id).sort((a, b) => a.name.localeCompare(b.name));
}

/** `API::Entities::Diff` (merge-request diffs). */
export function diffEntity(d: DiffFile): Record<string, unknown> {
  return {
    old_path: d.oldPath,
    new_path: d.newPath,
    a_mode: d.newFile ? '0' : '100644',
    b_mode: d.deletedFile ? '0' : '100644',
    diff: d.tooLarge || d.collapsed ? '' : d.diff,
    new_file: d.newFile,
    renamed_file: d.renamedFile,
    deleted_file: d.deletedFile,
    generated_file: false,
    collapsed: d.collapsed,
    too_large: d.tooLarge,
  };
}

/** `API::Entities::Commit`. */
export function commitEntity(c: CommitRecord, project: ProjectRecord, base: string): Record<string, unknown> {
  return {
    id: c.id,
    short_id: c.id.slice(0, 8),
    created_at: iso(c.createdAt),
    parent_ids: c.parentIds,
    title: c.title,
    message: c.message,
    author_name: c.authorName,
    author_email: c.authorEmail,
    authored_date: iso(c.createdAt),
    committer_name: c.authorName,
    committer_email: c.authorEmail,
    committed_date: iso(c.createdAt),
    trailers: {},
    extended_trailers: {},
    web_url: `${base}/${project.namespace.path}/${project.path}/-/commit/${c.id}`,
  };
}

// ---- demo data ------------------------------------------------------------------------------------------------

/**
 * Demo data a newcomer can explore: a group `demo` with a project `demo/webshop` (members: every user) holding
 * labelled issues with assignees, notes and a discussion, and merge requests with multi-file diffs, a diff
 * discussion and an approval. Called by the seed on a fresh forge.
 */
export function seedWorkDemo(store: DevForgeStore, now: number): void {
  const people = [...store.users.values()];
  const owner = people[0];
  if (!owner) return;
  const work = workOf(store);
  const ns: NamespaceRecord = { id: store.nextId('namespace'), name: 'Demo', path: 'demo', kind: 'group' };
  store.namespaces.set(ns.id, ns);
  const project: ProjectRecord = {
    id: store.nextId('project'),
    name: 'webshop',
    path: 'webshop',
    description: 'A demo shop: issues, merge requests with diffs and discussions.',
    namespace: ns,
    visibility: 'internal',
    creatorId: owner.id,
    memberIds: people.map((u) => u.id),
    createdAt: now,
    lastActivityAt: now,
    nextIssueIid: 1,
    nextMergeRequestIid: 1,
  };
  store.projects.set(project.id, project);
  const issue = (
    title: string,
    description: string,
    labels: string[],
    state: 'opened' | 'closed',
    assignees: number[],
    milestone: string | null,
  ) => {
    const record: IssueRecord = {
      id: store.nextId('issue'),
      iid: project.nextIssueIid++,
      projectId: project.id,
      title,
      description,
      state,
      labels,
      authorId: owner.id,
      createdAt: now,
      updatedAt: now,
      closedAt: state === 'closed' ? now : null,
    };
    store.issues.push(record);
    work.issues.set(record.id, {
      assigneeIds: assignees,
      confidential: false,
      milestone,
      closedById: state === 'closed' ? owner.id : null,
    });
    return record;
  };
  const note = (
    type: NoteRecord['noteableType'],
    target: { id: number; iid: number },
    body: string,
    discussionId?: string,
    extra: Partial<NoteRecord> = {},
  ) => {
    const id = work.nextId('note');
    const record: NoteRecord = {
      id,
      discussionId: discussionId ?? fakeSha(`discussion:${id}`),
      noteableType: type,
      noteableId: target.id,
      noteableIid: target.iid,
      projectId: project.id,
      body,
      authorId: owner.id,
      createdAt: now,
      updatedAt: now,
      system: false,
      type: discussionId ? 'DiscussionNote' : null,
      position: null,
      resolvable: false,
      resolvedById: null,
      resolvedAt: null,
      ...extra,
    };
    work.notes.push(record);
    return record;
  };
  const checkout = issue(
    'Checkout fails for carts over 100 items',
    'The order total overflows.\n\nSteps: add 101 items, pay.',
    ['bug', 'checkout'],
    'opened',
    [owner.id],
    'v1.2',
  );
  issue('Add a wish list', 'Let customers save items for later.', ['feature'], 'opened', [], 'v1.3');
  issue('Document the payment provider setup', 'Which keys go where.', ['documentation'], 'closed', [owner.id], null);
  note('Issue', checkout, 'I can reproduce this with 120 items.');
  const thread = fakeSha('discussion:checkout-thread');
  note('Issue', checkout, 'Is the total stored as a 16-bit integer?', thread);
  note('Issue', checkout, 'Yes, in the legacy cart table.', thread);

  const mr = (title: string, source: string, description: string, diffs: DiffFile[]) => {
    const record: MergeRequestRecord = {
      id: store.nextId('mergeRequest'),
      iid: project.nextMergeRequestIid++,
      projectId: project.id,
      title,
      description,
      state: 'opened',
      sourceBranch: source,
      targetBranch: 'main',
      labels: ['checkout'],
      authorId: owner.id,
      createdAt: now,
      updatedAt: now,
      mergedAt: null,
      closedAt: null,
    };
    store.mergeRequests.push(record);
    const d = newDetails(work, record, diffs, now);
    work.mergeRequests.set(record.id, d);
    return { record, d };
  };
  const fix = mr('Store cart totals as 64-bit integers', 'fix-cart-total', `Closes #${checkout.iid}\n\nWidens the total column.`, [
    {
      oldPath: 'src/cart/total.ts',
      newPath: 'src/cart/total.ts',
      diff: '@@ -1,5 +1,5 @@\n import { Item } from "./item";\n \n-export function total(items: Item[]): number {\n+export function total(items: Item[]): bigint {\n   return items.reduce((sum, i) => sum + i.price, 0);\n }\n',
      newFile: false,
      deletedFile: false,
      renamedFile: false,
      tooLarge: false,
      collapsed: false,
    },
    addedFileDiff('db/migrations/0042_widen_total.sql', ['ALTER TABLE cart ALTER COLUMN total TYPE bigint;']),
    { ...addedFileDiff('db/schema.generated.sql', ['-- generated']), diff: '', tooLarge: true },
  ]);
  const diffThread = fakeSha('discussion:diff-thread');
  note('MergeRequest', fix.record, 'Should the reducer start from 0n now?', diffThread, {
    type: 'DiffNote',
    resolvable: true,
    position: {
      base_sha: fix.d.baseSha,
      start_sha: fix.d.startSha,
      head_sha: fix.d.headSha,
      position_type: 'text',
      old_path: 'src/cart/total.ts',
      new_path: 'src/cart/total.ts',
      old_line: null,
      new_line: 3,
    },
  });
  note('MergeRequest', fix.record, 'Looks good to me otherwise.');
  if (people[1]) fix.d.approvedBy.push(people[1].id);
  mr('Draft: Wish list page', 'wish-list', 'First sketch of the wish list.', [
    addedFileDiff('src/wishlist/page.tsx', ['export function WishList() {', '  return null;', '}']),
  ]);
}
