/**
 * JSON shapes of GitLab's CI API (`API::Entities::Ci::PipelineBasic`, `Ci::Pipeline`, `Ci::Job`), as GitLab's
 * pipelines.md and jobs.md document their fields (mcp-facts.md 2.3).
 */
import { userBasic } from './devforge.api.serializers.ts';
import type { UserRecord } from './devforge.store.ts';
import type { CommitRecord } from './devforge.repository.ts';
import { commitTitle } from './devforge.repository.ts';
import type { CiStatus, JobRecord, PipelineRecord } from './devforge.ci.ts';
import type { ProjectRecord } from './devforge.types.ts';

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));
const seconds = (from: number | null, to: number | null): number | null => (from === null || to === null ? null : (to - from) / 1000);
const path = (p: ProjectRecord) => `${p.namespace.path}/${p.path}`;

const STATUS_TEXT: Record<CiStatus, string> = {
  created: 'Created',
  waiting_for_resource: 'Waiting',
  preparing: 'Preparing',
  pending: 'Pending',
  running: 'Running',
  success: 'Passed',
  failed: 'Failed',
  canceled: 'Canceled',
  skipped: 'Skipped',
  manual: 'Manual',
  scheduled: 'Scheduled',
};

/** `detailed_status` of a pipeline. */
function detailedStatus(status: CiStatus, detailsPath: string): Record<string, unknown> {
  const group = status === 'success' ? 'success' : status;
  return {
    icon: `status_${status}`,
    text: STATUS_TEXT[status],
    label: status === 'success' ? 'passed' : status,
    group,
    tooltip: STATUS_TEXT[status].toLowerCase(),
    has_details: true,
    details_path: detailsPath,
    illustration: null,
    favicon: `/assets/ci_favicons/favicon_status_${status}.png`,
  };
}

/** `API::Entities::Ci::PipelineBasic` (the list shape). */
export function pipelineBasic(p: PipelineRecord, status: CiStatus, project: ProjectRecord, base: string): Record<string, unknown> {
  return {
    id: p.id,
    iid: p.iid,
    project_id: p.projectId,
    sha: p.sha,
    ref: p.ref,
    status,
    source: p.source,
    created_at: iso(p.createdAt),
    updated_at: iso(p.updatedAt),
    web_url: `${base}/${path(project)}/-/pipelines/${p.id}`,
    name: null,
  };
}

/** `API::Entities::Ci::Pipeline` (the single shape). */
export function pipeline(
  p: PipelineRecord,
  status: CiStatus,
  project: ProjectRecord,
  user: UserRecord,
  base: string,
  times: { startedAt: number | null; finishedAt: number | null },
): Record<string, unknown> {
  return {
    ...pipelineBasic(p, status, project, base),
    before_sha: p.beforeSha,
    tag: p.tag,
    yaml_errors: null,
    user: userBasic(user, base),
    started_at: isoOrNull(times.startedAt),
    finished_at: isoOrNull(times.finishedAt),
    committed_at: null,
    duration: times.startedAt !== null && times.finishedAt !== null ? Math.round(seconds(times.startedAt, times.finishedAt) ?? 0) : null,
    queued_duration: times.startedAt !== null ? Math.round((times.startedAt - p.createdAt) / 1000) : null,
    coverage: null,
    detailed_status: detailedStatus(status, `/${path(project)}/-/pipelines/${p.id}`),
  };
}

/** `API::Entities::Ci::Job`. */
export function job(
  j: JobRecord,
  p: PipelineRecord,
  pipelineStatus: CiStatus,
  commit: CommitRecord | undefined,
  project: ProjectRecord,
  user: UserRecord,
  base: string,
): Record<string, unknown> {
  return {
    id: j.id,
    status: j.status,
    stage: j.stage,
    name: j.name,
    ref: p.ref,
    tag: p.tag,
    coverage: null,
    allow_failure: j.allowFailure,
    created_at: iso(j.createdAt),
    started_at: isoOrNull(j.startedAt),
    finished_at: isoOrNull(j.finishedAt),
    erased_at: null,
    duration: seconds(j.startedAt, j.finishedAt),
    queued_duration: j.startedAt === null ? null : (j.startedAt - j.createdAt) / 1000,
    user: userBasic(user, base),
    commit: commit
      ? {
          id: commit.id,
          short_id: commit.id.slice(0, 8),
          created_at: iso(commit.committedAt),
          parent_ids: commit.parentIds,
          title: commitTitle(commit),
          message: commit.message,
          author_name: commit.authorName,
          author_email: commit.authorEmail,
          authored_date: iso(commit.authoredAt),
          committer_name: commit.committerName,
          committer_email: commit.committerEmail,
          committed_date: iso(commit.committedAt),
          trailers: {},
          extended_trailers: {},
          web_url: `${base}/${path(project)}/-/commit/${commit.id}`,
        }
      : null,
    pipeline: { id: p.id, iid: p.iid, project_id: p.projectId, sha: p.sha, ref: p.ref, status: pipelineStatus, source: p.source },
    web_url: `${base}/${path(project)}/-/jobs/${j.id}`,
    project: { ci_job_token_scope_enabled: false },
    artifacts_file: null,
    artifacts: j.log === '' ? [] : [{ file_type: 'trace', size: Buffer.byteLength(j.log), filename: 'job.log', file_format: null }],
    runner: null,
    runner_manager: null,
    artifacts_expire_at: null,
    archived: false,
    tag_list: [],
    failure_reason: j.failureReason ?? undefined,
    retried: j.retried,
  };
}
