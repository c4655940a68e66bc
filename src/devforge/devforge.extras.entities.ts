/**
 * JSON shapes of GitLab's wiki, release, milestone, variable, member and hook entities (`API::Entities::WikiPage`,
 * `Release`, `Milestone`, `Ci::Variable`, `Member`, `ProjectHook`), with GitLab's field names.
 */
import { userBasic } from './devforge.api.serializers.ts';
import type { HookRecord, MemberRecord, MilestoneRecord, ReleaseRecord, VariableRecord, WikiPageRecord } from './devforge.extras.ts';
import { HOOK_EVENTS } from './devforge.extras.ts';
import { commit, projectPath } from './devforge.repository.entities.ts';
import type { CommitRecord } from './devforge.repository.ts';
import type { UserRecord } from './devforge.store.ts';
import type { ProjectRecord } from './devforge.types.ts';

const iso = (ms: number): string => new Date(ms).toISOString();
type Json = Record<string, unknown>;

/** `API::Entities::WikiPageBasic`, or `WikiPage` with its content. */
export function wikiPage(page: WikiPageRecord, withContent: boolean): Json {
  return {
    format: page.format,
    slug: page.slug,
    title: page.title,
    ...(withContent ? { content: page.content, encoding: 'UTF-8', front_matter: {} } : {}),
  };
}

/** A `wiki_blobs` search hit (`API::Entities::Wikis::WikiBlob` / `Search::FoundWikiPage`). */
export function wikiBlob(page: WikiPageRecord, project: ProjectRecord, term: string): Json {
  const lines = page.content.split('\n');
  const hit = Math.max(
    0,
    lines.findIndex((l) => l.toLowerCase().includes(term.toLowerCase())),
  );
  const from = Math.max(0, hit - 1);
  const ext = page.format === 'markdown' ? 'md' : page.format === 'asciidoc' ? 'asciidoc' : page.format;
  return {
    basename: page.slug,
    data: lines.slice(from, from + 3).join('\n'),
    path: `${page.slug}.${ext}`,
    filename: `${page.slug}.${ext}`,
    id: null,
    ref: 'main',
    startline: from + 1,
    project_id: project.id,
    group_id: null,
  };
}

/** `API::Entities::Milestone`. */
export function milestone(m: MilestoneRecord, project: ProjectRecord, base: string, now: number): Json {
  return {
    id: m.id,
    iid: m.iid,
    project_id: m.projectId,
    title: m.title,
    description: m.description,
    state: m.state,
    created_at: iso(m.createdAt),
    updated_at: iso(m.updatedAt),
    due_date: m.dueDate,
    start_date: m.startDate,
    expired: m.dueDate !== null && m.dueDate < iso(now).slice(0, 10),
    web_url: `${base}/${projectPath(project)}/-/milestones/${m.iid}`,
  };
}

/** `API::Entities::Release` (as a Developer sees it: with the commit and the paths). */
export function release(
  r: ReleaseRecord,
  project: ProjectRecord,
  author: UserRecord,
  at: CommitRecord | undefined,
  milestones: MilestoneRecord[],
  base: string,
  now: number,
): Json {
  const path = projectPath(project);
  const web = `${base}/${path}`;
  const tag = encodeURIComponent(r.tagName);
  const archive = (format: string) => ({ format, url: `${web}/-/archive/${tag}/${project.path}-${tag}.${format}` });
  const issues = (state: string) => `${web}/-/issues?release_tag=${tag}&scope=all&state=${state}`;
  const mrs = (state: string) => `${web}/-/merge_requests?release_tag=${tag}&scope=all&state=${state}`;
  const sources = ['zip', 'tar.gz', 'tar.bz2', 'tar'].map(archive);
  return {
    tag_name: r.tagName,
    description: r.description,
    name: r.name,
    created_at: iso(r.createdAt),
    released_at: iso(r.releasedAt),
    upcoming_release: r.releasedAt > now,
    historical_release: false,
    author: userBasic(author, base),
    commit: at ? commit(at, project, base) : null,
    milestones: milestones.map((m) => milestone(m, project, base, now)),
    commit_path: `/${path}/-/commit/${r.sha}`,
    tag_path: `/${path}/-/tags/${tag}`,
    assets: { count: sources.length, sources, links: [] },
    evidences: [],
    _links: {
      closed_issues_url: issues('closed'),
      closed_merge_requests_url: mrs('closed'),
      edit_url: `${web}/-/releases/${tag}/edit`,
      merged_merge_requests_url: mrs('merged'),
      opened_issues_url: issues('opened'),
      opened_merge_requests_url: mrs('opened'),
      self: `${web}/-/releases/${tag}`,
    },
  };
}

/** `API::Entities::Ci::Variable`: a hidden variable's value is null, as GitLab returns it. */
export function variable(v: VariableRecord): Json {
  return {
    variable_type: v.variableType,
    key: v.key,
    value: v.hidden ? null : v.value,
    protected: v.protected,
    masked: v.masked,
    hidden: v.hidden,
    raw: v.raw,
    environment_scope: v.environmentScope,
    description: v.description,
  };
}

/** `API::Entities::Member` of a project. */
export function member(user: UserRecord, m: MemberRecord, createdBy: UserRecord, base: string): Json {
  return {
    ...userBasic(user, base),
    expires_at: m.expiresAt,
    access_level: m.accessLevel,
    created_at: iso(m.createdAt),
    created_by: userBasic(createdBy, base),
    group_saml_identity: null,
    membership_state: 'active',
  };
}

/** `API::Entities::ProjectHook`: the secret token is never part of it. */
export function hook(h: HookRecord): Json {
  return {
    id: h.id,
    url: h.url,
    name: h.name,
    description: h.description,
    project_id: h.projectId,
    ...Object.fromEntries(HOOK_EVENTS.map((e) => [e, h.events[e]])),
    push_events_branch_filter: h.pushEventsBranchFilter,
    branch_filter_strategy: h.pushEventsBranchFilter === '' ? 'all_branches' : 'wildcard',
    feature_flag_events: false,
    repository_update_events: false,
    resource_access_token_events: false,
    enable_ssl_verification: h.enableSslVerification,
    alert_status: 'executable',
    disabled_until: null,
    url_variables: [],
    custom_webhook_template: '',
    custom_headers: [],
    created_at: iso(h.createdAt),
  };
}
