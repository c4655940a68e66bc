/**
 * The dev forge's CI (issue 18 item 4): pipelines and their jobs with text logs, in memory. Jobs never run here;
 * a pipeline is created from the `.gitlab-ci.yml` at its ref (first-stage jobs `pending`, later ones `created`),
 * and retry and cancel change job states as GitLab does. The pipeline status is derived from its current (not
 * retried) jobs. CI lint applies a small part of GitLab's config validation with GitLab's messages.
 */
import { parse as parseYaml } from 'yaml';

export type CiStatus =
  | 'created'
  | 'waiting_for_resource'
  | 'preparing'
  | 'pending'
  | 'running'
  | 'success'
  | 'failed'
  | 'canceled'
  | 'skipped'
  | 'manual'
  | 'scheduled';

export const CI_STATUSES: readonly CiStatus[] = [
  'created',
  'waiting_for_resource',
  'preparing',
  'pending',
  'running',
  'success',
  'failed',
  'canceled',
  'skipped',
  'manual',
  'scheduled',
];

export interface PipelineVariable {
  key: string;
  value: string;
  variable_type: 'env_var' | 'file';
}

export interface PipelineRecord {
  id: number;
  iid: number;
  projectId: number;
  sha: string;
  beforeSha: string;
  ref: string;
  tag: boolean;
  source: string;
  userId: number;
  createdAt: number;
  updatedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  variables: PipelineVariable[];
  /** The stages in order, as the config declared them. */
  stages: string[];
}

export interface JobRecord {
  id: number;
  pipelineId: number;
  projectId: number;
  name: string;
  stage: string;
  status: CiStatus;
  log: string;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  failureReason: string | null;
  allowFailure: boolean;
  /** A job replaced by its retry (hidden from pipeline job lists unless `include_retried`). */
  retried: boolean;
  userId: number;
}

export interface DevForgeCi {
  pipelines: PipelineRecord[];
  jobs: JobRecord[];
  nextPipelineId(): number;
  nextJobId(): number;
  /** The next pipeline iid of a project. */
  nextIid(projectId: number): number;
  /** The last ids handed out (for the state file). */
  idCounters(): CiCounters;
}

export interface CiCounters {
  pipeline: number;
  job: number;
  /** The last pipeline iid per project id. */
  iids: [number, number][];
}

/** An empty CI, or the pipelines, jobs and counters of a state file. */
export function createDevForgeCi(restore?: { pipelines: PipelineRecord[]; jobs: JobRecord[]; counters: CiCounters }): DevForgeCi {
  let pipelineId = restore?.counters.pipeline ?? 0;
  let jobId = restore?.counters.job ?? 0;
  const iids = new Map<number, number>(restore?.counters.iids);
  return {
    pipelines: restore?.pipelines ?? [],
    jobs: restore?.jobs ?? [],
    idCounters: () => ({ pipeline: pipelineId, job: jobId, iids: [...iids] }),
    nextPipelineId: () => ++pipelineId,
    nextJobId: () => ++jobId,
    nextIid(projectId) {
      const next = (iids.get(projectId) ?? 0) + 1;
      iids.set(projectId, next);
      return next;
    },
  };
}

/** The current jobs of a pipeline (retried ones left out), in stage order then by id. */
export function currentJobs(ci: DevForgeCi, pipeline: PipelineRecord): JobRecord[] {
  return ci.jobs
    .filter((j) => j.pipelineId === pipeline.id && !j.retried)
    .sort((a, b) => pipeline.stages.indexOf(a.stage) - pipeline.stages.indexOf(b.stage) || a.id - b.id);
}

/** GitLab's composite status of a set of jobs (`Ci::HasStatus.composite_status`, simplified). */
export function pipelineStatus(ci: DevForgeCi, pipeline: PipelineRecord): CiStatus {
  const statuses = currentJobs(ci, pipeline).map((j) => (j.status === 'failed' && j.allowFailure ? 'success' : j.status));
  if (statuses.length === 0) return 'created';
  const has = (s: CiStatus) => statuses.includes(s);
  if (statuses.every((s) => s === 'skipped')) return 'skipped';
  if (statuses.every((s) => s === 'success' || s === 'skipped')) return 'success';
  if (has('running')) return 'running';
  if (has('pending') || has('preparing') || has('waiting_for_resource')) return has('failed') ? 'running' : 'pending';
  if (has('failed')) return 'failed';
  if (has('canceled')) return 'canceled';
  if (has('manual')) return 'manual';
  if (has('scheduled')) return 'scheduled';
  return 'created';
}

const RESERVED = new Set([
  'stages',
  'variables',
  'default',
  'include',
  'workflow',
  'image',
  'services',
  'before_script',
  'after_script',
  'cache',
  'types',
]);
const DEFAULT_STAGES = ['build', 'test', 'deploy'];

/** The outcome of linting a CI configuration. */
export interface LintResult {
  valid: boolean;
  errors: string[];
  warnings: string[];
  stages: string[];
  jobs: { name: string; stage: string; script: string[]; allow_failure: boolean; when: string }[];
}

/** Validates a `.gitlab-ci.yml` text: YAML syntax, stages, and that every visible job has a script or trigger. */
export function lintCiConfig(content: string): LintResult {
  const fail = (message: string): LintResult => ({ valid: false, errors: [message], warnings: [], stages: [], jobs: [] });
  let doc: unknown;
  try {
    doc = parseYaml(content);
  } catch (error) {
    return fail(`(<unknown>): ${(error as Error).message.split('\n')[0] ?? 'invalid YAML'}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return fail('Invalid configuration format');
  const config = doc as Record<string, unknown>;
  const declared = config.stages;
  if (declared !== undefined && (!Array.isArray(declared) || !declared.every((s) => typeof s === 'string')))
    return fail('stages config should be an array of strings');
  const stages = ['.pre', ...(declared ?? DEFAULT_STAGES), '.post'];
  const errors: string[] = [];
  const jobs: LintResult['jobs'] = [];
  for (const [name, value] of Object.entries(config)) {
    if (RESERVED.has(name) || name.startsWith('.')) continue;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      errors.push(`jobs:${name} config should be a hash`);
      continue;
    }
    const job = value as Record<string, unknown>;
    if (job.script === undefined && job.trigger === undefined) {
      errors.push(`jobs:${name} config should implement the script:, run:, or trigger: keyword`);
      continue;
    }
    const stage = typeof job.stage === 'string' ? job.stage : 'test';
    if (!stages.includes(stage)) {
      errors.push(`${name} job: chosen stage ${stage} does not exist; available stages are ${stages.join(', ')}`);
      continue;
    }
    const lines: unknown[] = Array.isArray(job.script) ? job.script : job.script === undefined ? [] : [job.script];
    const script = lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line)));
    jobs.push({
      name,
      stage,
      script,
      allow_failure: job.allow_failure === true,
      when: typeof job.when === 'string' ? job.when : 'on_success',
    });
  }
  if (errors.length === 0 && jobs.length === 0) errors.push('jobs config should contain at least one visible job');
  return { valid: errors.length === 0, errors, warnings: [], stages: stages.filter((s) => jobs.some((j) => j.stage === s)), jobs };
}

/** Creates a pipeline and its jobs from a linted config. */
export function createPipeline(
  ci: DevForgeCi,
  input: {
    projectId: number;
    ref: string;
    tag: boolean;
    sha: string;
    beforeSha: string;
    userId: number;
    source: string;
    at: number;
    variables: PipelineVariable[];
    config: LintResult;
  },
): PipelineRecord {
  const pipeline: PipelineRecord = {
    id: ci.nextPipelineId(),
    iid: ci.nextIid(input.projectId),
    projectId: input.projectId,
    sha: input.sha,
    beforeSha: input.beforeSha,
    ref: input.ref,
    tag: input.tag,
    source: input.source,
    userId: input.userId,
    createdAt: input.at,
    updatedAt: input.at,
    startedAt: null,
    finishedAt: null,
    variables: input.variables,
    stages: input.config.stages,
  };
  ci.pipelines.push(pipeline);
  const first = input.config.stages[0];
  for (const job of input.config.jobs)
    ci.jobs.push({
      id: ci.nextJobId(),
      pipelineId: pipeline.id,
      projectId: input.projectId,
      name: job.name,
      stage: job.stage,
      status: job.when === 'manual' ? 'manual' : job.stage === first ? 'pending' : 'created',
      log: '',
      createdAt: input.at,
      startedAt: null,
      finishedAt: null,
      failureReason: null,
      allowFailure: job.allow_failure,
      retried: false,
      userId: input.userId,
    });
  return pipeline;
}

const ACTIVE: readonly CiStatus[] = ['created', 'waiting_for_resource', 'preparing', 'pending', 'running', 'manual', 'scheduled'];
const RETRYABLE: readonly CiStatus[] = ['failed', 'canceled', 'success'];

/** Cancels every job still to run or running. */
export function cancelPipeline(ci: DevForgeCi, pipeline: PipelineRecord, at: number): void {
  for (const job of currentJobs(ci, pipeline))
    if (ACTIVE.includes(job.status)) {
      job.status = 'canceled';
      job.finishedAt = at;
    }
  pipeline.updatedAt = at;
  pipeline.finishedAt = at;
}

/** A copy of `job` to run again (the old one is marked retried), or undefined when the job cannot be retried. */
export function retryJob(ci: DevForgeCi, job: JobRecord, userId: number, at: number): JobRecord | undefined {
  if (job.retried || !RETRYABLE.includes(job.status)) return undefined;
  job.retried = true;
  const copy: JobRecord = {
    ...job,
    id: ci.nextJobId(),
    status: 'pending',
    log: '',
    createdAt: at,
    startedAt: null,
    finishedAt: null,
    failureReason: null,
    retried: false,
    userId,
  };
  ci.jobs.push(copy);
  return copy;
}

/** Retries the failed and canceled jobs of a pipeline; returns how many. */
export function retryPipeline(ci: DevForgeCi, pipeline: PipelineRecord, userId: number, at: number): number {
  let count = 0;
  for (const job of currentJobs(ci, pipeline))
    if (job.status === 'failed' || job.status === 'canceled') {
      if (retryJob(ci, job, userId, at)) count += 1;
    }
  if (count > 0) {
    pipeline.updatedAt = at;
    pipeline.finishedAt = null;
  }
  return count;
}

export function isActive(status: CiStatus): boolean {
  return ACTIVE.includes(status);
}
