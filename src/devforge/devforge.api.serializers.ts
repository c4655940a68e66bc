/**
 * JSON shapes of GitLab's REST API v4 entities (`API::Entities::…`), reduced to the fields the MCP tools and common
 * clients read. Times are ISO 8601 in UTC with milliseconds, as GitLab renders them.
 */
import type { UserRecord } from './devforge.store.ts';
import type { IssueRecord, MergeRequestRecord, NamespaceRecord, ProjectRecord } from './devforge.types.ts';

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

/** `API::Entities::UserBasic`. */
export function userBasic(user: UserRecord, base: string): Record<string, unknown> {
  return {
    id: user.id,
    username: user.username,
    name: user.name,
    state: 'active',
    locked: false,
    avatar_url: null,
    web_url: `${base}/${user.username}`,
  };
}

/** `API::Entities::UserPublic` plus the private fields GitLab adds for the token's own user (`GET /user`). */
export function currentUser(user: UserRecord, base: string): Record<string, unknown> {
  return {
    ...userBasic(user, base),
    created_at: iso(user.createdAt),
    bio: '',
    location: '',
    public_email: null,
    linkedin: '',
    twitter: '',
    discord: '',
    website_url: '',
    organization: '',
    job_title: '',
    pronouns: null,
    bot: false,
    work_information: null,
    local_time: null,
    last_sign_in_at: null,
    confirmed_at: iso(user.createdAt),
    last_activity_on: null,
    email: user.email,
    theme_id: 1,
    color_scheme_id: 1,
    projects_limit: 100000,
    current_sign_in_at: null,
    identities: [],
    can_create_group: true,
    can_create_project: true,
    two_factor_enabled: false,
    external: false,
    private_profile: false,
    commit_email: user.email,
  };
}

function namespace(ns: NamespaceRecord, base: string): Record<string, unknown> {
  return {
    id: ns.id,
    name: ns.name,
    path: ns.path,
    kind: ns.kind,
    full_path: ns.path,
    parent_id: null,
    avatar_url: null,
    web_url: ns.kind === 'user' ? `${base}/${ns.path}` : `${base}/groups/${ns.path}`,
  };
}

/** `path_with_namespace` of a project. */
function projectFullPath(project: ProjectRecord): string {
  return `${project.namespace.path}/${project.path}`;
}

/** `API::Entities::BasicProjectDetails` (what `simple=true` returns). */
export function projectSimple(project: ProjectRecord, base: string): Record<string, unknown> {
  const fullPath = projectFullPath(project);
  return {
    id: project.id,
    description: project.description,
    name: project.name,
    name_with_namespace: `${project.namespace.name} / ${project.name}`,
    path: project.path,
    path_with_namespace: fullPath,
    created_at: iso(project.createdAt),
    default_branch: 'main',
    tag_list: [],
    topics: [],
    ssh_url_to_repo: `git@${new URL(base).hostname}:${fullPath}.git`,
    http_url_to_repo: `${base}/${fullPath}.git`,
    web_url: `${base}/${fullPath}`,
    readme_url: `${base}/${fullPath}/-/blob/main/README.md`,
    forks_count: 0,
    avatar_url: null,
    star_count: 0,
    last_activity_at: iso(project.lastActivityAt),
    namespace: namespace(project.namespace, base),
  };
}

/** `API::Entities::ProjectWithAccess`, the default project shape of the list and show endpoints. */
export function projectFull(
  project: ProjectRecord,
  base: string,
  viewerId: number | undefined,
  openIssues: number,
): Record<string, unknown> {
  const fullPath = projectFullPath(project);
  const member = viewerId !== undefined && project.memberIds.includes(viewerId);
  return {
    ...projectSimple(project, base),
    _links: {
      self: `${base}/api/v4/projects/${project.id}`,
      issues: `${base}/api/v4/projects/${project.id}/issues`,
      merge_requests: `${base}/api/v4/projects/${project.id}/merge_requests`,
      repo_branches: `${base}/api/v4/projects/${project.id}/repository/branches`,
      labels: `${base}/api/v4/projects/${project.id}/labels`,
      events: `${base}/api/v4/projects/${project.id}/events`,
      members: `${base}/api/v4/projects/${project.id}/members`,
    },
    visibility: project.visibility,
    archived: false,
    empty_repo: false,
    issues_enabled: true,
    merge_requests_enabled: true,
    wiki_enabled: true,
    jobs_enabled: true,
    creator_id: project.creatorId,
    open_issues_count: openIssues,
    web_url: `${base}/${fullPath}`,
    permissions: {
      project_access: member ? { access_level: 50, notification_level: 3 } : null,
      group_access: null,
    },
  };
}

/** `API::Entities::Issue`. */
export function issue(i: IssueRecord, project: ProjectRecord, author: UserRecord, base: string): Record<string, unknown> {
  const fullPath = projectFullPath(project);
  return {
    id: i.id,
    iid: i.iid,
    project_id: i.projectId,
    title: i.title,
    description: i.description,
    state: i.state,
    created_at: iso(i.createdAt),
    updated_at: iso(i.updatedAt),
    closed_at: isoOrNull(i.closedAt),
    closed_by: i.state === 'closed' ? userBasic(author, base) : null,
    labels: i.labels,
    milestone: null,
    assignees: [],
    author: userBasic(author, base),
    type: 'ISSUE',
    assignee: null,
    user_notes_count: 0,
    merge_requests_count: 0,
    upvotes: 0,
    downvotes: 0,
    due_date: null,
    confidential: false,
    discussion_locked: null,
    issue_type: 'issue',
    web_url: `${base}/${fullPath}/-/issues/${i.iid}`,
    time_stats: { time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null },
    task_completion_status: { count: 0, completed_count: 0 },
    has_tasks: false,
    _links: {
      self: `${base}/api/v4/projects/${project.id}/issues/${i.iid}`,
      notes: `${base}/api/v4/projects/${project.id}/issues/${i.iid}/notes`,
      award_emoji: `${base}/api/v4/projects/${project.id}/issues/${i.iid}/award_emoji`,
      project: `${base}/api/v4/projects/${project.id}`,
      closed_as_duplicate_of: null,
    },
    references: { short: `#${i.iid}`, relative: `#${i.iid}`, full: `${fullPath}#${i.iid}` },
    severity: 'UNKNOWN',
    moved_to_id: null,
    service_desk_reply_to: null,
  };
}

/** `API::Entities::MergeRequestBasic` (the list shape). */
export function mergeRequest(mr: MergeRequestRecord, project: ProjectRecord, author: UserRecord, base: string): Record<string, unknown> {
  const fullPath = projectFullPath(project);
  return {
    id: mr.id,
    iid: mr.iid,
    project_id: mr.projectId,
    title: mr.title,
    description: mr.description,
    state: mr.state,
    created_at: iso(mr.createdAt),
    updated_at: iso(mr.updatedAt),
    merged_by: mr.state === 'merged' ? userBasic(author, base) : null,
    merge_user: mr.state === 'merged' ? userBasic(author, base) : null,
    merged_at: isoOrNull(mr.mergedAt),
    closed_by: null,
    closed_at: isoOrNull(mr.closedAt),
    target_branch: mr.targetBranch,
    source_branch: mr.sourceBranch,
    user_notes_count: 0,
    upvotes: 0,
    downvotes: 0,
    author: userBasic(author, base),
    assignees: [],
    assignee: null,
    reviewers: [],
    source_project_id: project.id,
    target_project_id: project.id,
    labels: mr.labels,
    draft: false,
    work_in_progress: false,
    milestone: null,
    merge_when_pipeline_succeeds: false,
    merge_status: 'can_be_merged',
    detailed_merge_status: mr.state === 'opened' ? 'mergeable' : 'not_open',
    sha: null,
    merge_commit_sha: null,
    squash_commit_sha: null,
    discussion_locked: null,
    should_remove_source_branch: null,
    force_remove_source_branch: true,
    reference: `!${mr.iid}`,
    references: { short: `!${mr.iid}`, relative: `!${mr.iid}`, full: `${fullPath}!${mr.iid}` },
    web_url: `${base}/${fullPath}/-/merge_requests/${mr.iid}`,
    time_stats: { time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null },
    squash: false,
    squash_on_merge: false,
    task_completion_status: { count: 0, completed_count: 0 },
    has_conflicts: false,
    blocking_discussions_resolved: true,
  };
}
