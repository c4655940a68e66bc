/**
 * The `ci` toolset (issue 18 item 1): pipelines (list; get with its jobs filtered by status; create with
 * variables; retry or cancel), jobs (get, with the log as its tail, a byte window or a search with context lines;
 * retry or cancel through manage_pipeline) and CI lint. Names follow GitLab's own MCP server (`list_pipelines`,
 * `get_pipeline`, `manage_pipeline`, `get_job`; its `save_pipeline` is `manage_pipeline` with `action: create`, and
 * stays callable by that name).
 */
import { z } from 'zod';
import { ForgeApiError, type QueryValue } from './forge.client.ts';
import { READ, text, type Json } from './forge.entities.ts';
import { parseProjectRef, projectLabel, projectPathId, projectRef, requiredTarget } from './forge.ids.ts';
import { decodeCursor, encodeCursor, forgePaging, pageOutput, pageResult, pagingInput } from './forge.paging.ts';
import { jobLogUri } from './forge.uris.ts';
import { byteWindow, cleanLog, grepLog, tailWindow } from './job.log.ts';
import { confirmationInput } from './tool.confirm.ts';
import { defineTool, ToolInputError, type ToolContext, type ToolsetDefinition } from './tool.contract.ts';
import { quoted } from './tool.text.ts';

const STATUSES = [
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
] as const;

const MAX_LOG_BYTES = 512_000;

const project = (ctx: ToolContext, ref: string | number) => `/projects/${projectPathId(ref, ctx.forgeUrl)}`;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

const pipelineSchema = z.object({
  id: z.number().int(),
  iid: z.number().int().optional(),
  status: z.string(),
  ref: z.string(),
  sha: z.string(),
  source: z.string().optional(),
  created_at: z.string().optional(),
  web_url: z.string(),
  started_at: z.string().nullable().optional(),
  finished_at: z.string().nullable().optional(),
  duration: z.number().nullable().optional().describe('Seconds'),
  user: z.string().optional().describe('Username of who ran it'),
});

function pipelineOut(p: unknown) {
  const v = p as Json;
  const user = (v.user as Json | null | undefined)?.username;
  return {
    id: Number(v.id),
    ...(num(v.iid) !== undefined ? { iid: num(v.iid) } : {}),
    status: String(v.status),
    ref: String(v.ref),
    sha: String(v.sha),
    ...(str(v.source) !== undefined ? { source: str(v.source) } : {}),
    ...(str(v.created_at) !== undefined ? { created_at: str(v.created_at) } : {}),
    web_url: String(v.web_url),
    ...('started_at' in v ? { started_at: str(v.started_at) ?? null, finished_at: str(v.finished_at) ?? null } : {}),
    ...('duration' in v ? { duration: num(v.duration) ?? null } : {}),
    ...(typeof user === 'string' ? { user } : {}),
  };
}

const jobSchema = z.object({
  id: z.number().int(),
  name: text('Job name'),
  stage: z.string(),
  status: z.string(),
  ref: z.string().optional(),
  allow_failure: z.boolean().optional(),
  failure_reason: z.string().optional(),
  duration: z.number().nullable().optional().describe('Seconds'),
  pipeline_id: z.number().int().optional(),
  web_url: z.string(),
});

function jobOut(j: unknown) {
  const v = j as Json;
  const pipelineId = num((v.pipeline as Json | undefined)?.id);
  return {
    id: Number(v.id),
    name: String(v.name),
    stage: String(v.stage),
    status: String(v.status),
    ...(str(v.ref) !== undefined ? { ref: str(v.ref) } : {}),
    ...(typeof v.allow_failure === 'boolean' ? { allow_failure: v.allow_failure } : {}),
    ...(str(v.failure_reason) !== undefined ? { failure_reason: str(v.failure_reason) } : {}),
    ...('duration' in v ? { duration: num(v.duration) ?? null } : {}),
    ...(pipelineId !== undefined ? { pipeline_id: pipelineId } : {}),
    web_url: String(v.web_url),
  };
}

const logSchema = z.object({
  total_bytes: z.number().int().describe('Size of the cleaned log'),
  total_lines: z.number().int(),
  resource_uri: z.string().describe('The whole log as an MCP resource'),
  available: z.boolean().describe('false: the job has no log yet'),
  text: text('The window of the log (ANSI colours and section markers removed)').optional(),
  first_line: z.number().int().optional(),
  start_byte: z.number().int().optional(),
  end_byte: z.number().int().optional(),
  truncated: z.boolean().describe('Lines outside this window or matches beyond max_matches exist'),
  next_byte_offset: z.number().int().nullable().optional().describe('Pass as byte_offset for the next window'),
  matches: z
    .array(
      z.object({ line_number: z.number().int(), line: text('Matching line'), before: z.array(z.string()), after: z.array(z.string()) }),
    )
    .optional(),
  total_matches: z.number().int().optional(),
});

type LogArgs = {
  tail_lines?: number | undefined;
  byte_offset?: number | undefined;
  byte_limit?: number | undefined;
  grep?: string | undefined;
  context_lines?: number | undefined;
  max_matches?: number | undefined;
};

/** The log part of get_job: one of grep, byte window or tail (default: the last 100 lines). */
async function readLog(
  ctx: ToolContext,
  projectRefValue: string | number,
  jobId: number,
  args: LogArgs,
): Promise<z.infer<typeof logSchema>> {
  const base = project(ctx, projectRefValue);
  const uri = jobLogUri(projectPathId(projectRefValue, ctx.forgeUrl), jobId);
  let raw: string;
  try {
    raw = await ctx.api.text(`${base}/jobs/${jobId}/trace`, ctx.token);
  } catch (error) {
    // GitLab answers 404 both for a missing job and for a job without a log; the job itself was found.
    if ((error as { type?: unknown }).type !== 'not_found') throw error;
    return { total_bytes: 0, total_lines: 0, resource_uri: uri, available: false, truncated: false };
  }
  const log = cleanLog(raw);
  const lines = log === '' ? 0 : log.split('\n').length - (log.endsWith('\n') ? 1 : 0);
  const common = { total_bytes: Buffer.byteLength(log), total_lines: lines, resource_uri: uri, available: true };
  // An answer with less than the whole log links to all of it, as get_repository_file does for a large file, so
  // the client can read the rest as a resource.
  const linkWhole = () =>
    ctx.link({ uri, name: `job ${jobId} log`, mimeType: 'text/plain', description: `${common.total_bytes} bytes, ${lines} lines` });
  if (args.grep !== undefined) {
    const found = grepLog(log, args.grep, args.context_lines ?? 3, args.max_matches ?? 50);
    linkWhole();
    return { ...common, ...found, truncated: found.total_matches > found.matches.length };
  }
  const window =
    args.byte_offset !== undefined || args.byte_limit !== undefined
      ? byteWindow(log, args.byte_offset ?? 0, args.byte_limit ?? 65_536)
      : tailWindow(log, args.tail_lines ?? 100, args.byte_limit ?? 65_536);
  if (window.start_byte > 0 || window.end_byte < common.total_bytes) linkWhole();
  return { ...common, ...window };
}

/**
 * The pipeline or job a retry or cancel acts on: exactly one of pipeline_id and job_id, or, with neither, the one
 * whose web URL is given as project_id.
 */
function retryCancelTarget(
  ctx: ToolContext,
  args: { project_id: string | number; pipeline_id?: number | undefined; job_id?: number | undefined },
): { pipeline_id?: number; job_id?: number } {
  if (args.job_id !== undefined && args.pipeline_id !== undefined) throw new ToolInputError('give exactly one of pipeline_id and job_id');
  const url = parseProjectRef(args.project_id, ctx.forgeUrl).target;
  const kind = args.job_id !== undefined ? 'job' : args.pipeline_id !== undefined ? 'pipeline' : url?.kind;
  if (kind === 'job') return { job_id: requiredTarget(args.project_id, ctx.forgeUrl, 'job', 'job_id', args.job_id).value };
  if (kind === 'pipeline')
    return { pipeline_id: requiredTarget(args.project_id, ctx.forgeUrl, 'pipeline', 'pipeline_id', args.pipeline_id).value };
  throw new ToolInputError('give exactly one of pipeline_id and job_id (or the web URL of a pipeline or job as project_id)');
}

/**
 * Whether `ref` is protected, as GitLab itself decides it: the `protected` flag of the branch or tag object, which
 * applies every rule covering the ref, wildcards included (`release/*`, `v*`). `GET /protected_branches/:name`
 * would only find a rule by its exact name, and the protected-tags list needs Maintainer access. Undefined when
 * the forge could not tell (the ref is gone, an error, an answer without the flag).
 */
async function refIsProtected(ctx: ToolContext, base: string, ref: string, tag: boolean): Promise<boolean | undefined> {
  // Merge-request pipelines run on `refs/merge-requests/:iid/head`, which no protection rule covers.
  if (!tag && ref.startsWith('refs/merge-requests/')) return false;
  try {
    const found = await ctx.api.get<Json>(`${base}/repository/${tag ? 'tags' : 'branches'}/${encodeURIComponent(ref)}`, ctx.token);
    return typeof found.protected === 'boolean' ? found.protected : undefined;
  } catch (error) {
    // A dead token fails the cancel too: say so (and let the token be renewed) instead of asking about it first.
    if (!(error instanceof ForgeApiError) || error.status === 401) throw error;
    ctx.log.warn({ forge_status: error.status, type: error.type }, 'protection of a ref could not be checked before a cancel');
    return undefined;
  }
}

/**
 * Cancelling on a protected ref (a release or deploy branch, a release tag) asks first (issue 18 item 2): it can
 * stop a deployment half-way. So does a cancel whose ref's protection could not be checked. Other cancels and
 * every retry go ahead.
 */
async function confirmCancelOnProtectedRef(
  ctx: ToolContext,
  base: string,
  args: { pipeline_id?: number | undefined; job_id?: number | undefined },
) {
  const target =
    args.job_id !== undefined
      ? await ctx.api.get<Json>(`${base}/jobs/${args.job_id}`, ctx.token)
      : await ctx.api.get<Json>(`${base}/pipelines/${args.pipeline_id}`, ctx.token);
  const ref = String(target.ref);
  const tag = target.tag === true;
  const isProtected = await refIsProtected(ctx, base, ref, tag);
  if (isProtected === false) return;
  const what = args.job_id !== undefined ? `job ${args.job_id} ${quoted(target.name)}` : `pipeline ${args.pipeline_id}`;
  const kind = tag ? 'tag' : 'branch';
  const where =
    isProtected === true ? `the protected ${kind} ${quoted(ref)}` : `the ${kind} ${quoted(ref)}, whose protection could not be checked`;
  await ctx.confirm(`Cancel ${what} on ${where} (status ${quoted(target.status)}).`);
}

function pipelineTools() {
  return [
    defineTool({
      name: 'list_pipelines',
      toolset: 'ci',
      title: 'List pipelines',
      description: 'Pipelines of a project, newest first, by status, ref or SHA.',
      input: z.object({
        project_id: projectRef,
        status: z.enum(STATUSES).optional().describe('Status'),
        ref: z.string().max(255).optional().describe('Branch or tag'),
        sha: z.string().max(64).optional().describe('Commit SHA'),
        ...pagingInput,
      }),
      output: pageOutput(pipelineSchema),
      annotations: READ,
      async run(args, ctx) {
        const query: Record<string, QueryValue> = {
          status: args.status,
          ref: args.ref,
          sha: args.sha,
          ...forgePaging(args),
        };
        return pageResult(await ctx.api.page(`${project(ctx, args.project_id)}/pipelines`, ctx.token, query), pipelineOut);
      },
    }),
    defineTool({
      name: 'get_pipeline',
      toolset: 'ci',
      title: 'Get a pipeline',
      description: 'One pipeline with a page of its jobs, filtered by status.',
      input: z.object({
        project_id: projectRef,
        pipeline_id: z.number().int().positive().optional().describe('Pipeline id, or its URL as project_id'),
        // Statuses as list_pipelines spells them: its enum is advertised once, not on both tools.
        job_status: z
          .array(z.string().refine((s) => (STATUSES as readonly string[]).includes(s), 'not a status list_pipelines names'))
          .max(11)
          .optional()
          .describe('Job statuses, e.g. ["failed"]'),
        include_retried: z.boolean().optional().describe('Add retried jobs'),
        jobs_cursor: z.string().max(200).optional().describe('A jobs_next_cursor'),
      }),
      output: pipelineSchema.extend({
        jobs: z.array(jobSchema),
        jobs_next_cursor: z.string().nullable().describe('More jobs: pass as jobs_cursor'),
        jobs_total: z.number().int().optional(),
      }),
      annotations: READ,
      async run(args, ctx) {
        const target = requiredTarget(args.project_id, ctx.forgeUrl, 'pipeline', 'pipeline_id', args.pipeline_id);
        const base = `/projects/${target.project}/pipelines/${target.value}`;
        const query: Record<string, QueryValue> = {
          include_retried: args.include_retried,
          page: decodeCursor(args.jobs_cursor),
          per_page: 100,
        };
        // GitLab takes several statuses as repeated `scope[]`; the client sends one value per key, so filter here
        // when more than one is asked for.
        const statuses = args.job_status ?? [];
        if (statuses.length === 1) query['scope[]'] = statuses[0];
        const [pipeline, jobs] = await Promise.all([ctx.api.get(base, ctx.token), ctx.api.page<Json>(`${base}/jobs`, ctx.token, query)]);
        const wanted = (j: Json) => statuses.length <= 1 || statuses.includes(String(j.status));
        return {
          ...pipelineOut(pipeline),
          jobs: jobs.items.filter(wanted).map(jobOut),
          jobs_next_cursor: jobs.nextPage === undefined ? null : encodeCursor(jobs.nextPage),
          ...(jobs.total !== undefined && statuses.length <= 1 ? { jobs_total: jobs.total } : {}),
        };
      },
    }),
    defineTool({
      // Creating, retrying and cancelling are one resource's methods: one entry of the 32 KB default list instead
      // of two. GitLab's `save_pipeline` (create) stays callable as an alias with its own arguments.
      name: 'manage_pipeline',
      aliases: ['save_pipeline'],
      toolset: 'ci',
      title: 'Manage a pipeline',
      description: 'Runs a ref (create), or retries or cancels a pipeline or one job.',
      input: z.object({
        project_id: projectRef,
        action: z.enum(['create', 'retry', 'cancel']).optional().describe('Default create'),
        ref: z.string().min(1).max(255).optional().describe('create: branch or tag'),
        variables: z
          .array(
            z.object({
              key: z.string().min(1).max(255).regex(/^\w+$/).describe('Name'),
              value: z.string().max(10_000).describe('Value'),
              variable_type: z.enum(['env_var', 'file']).optional().describe('Default env_var'),
            }),
          )
          .max(50)
          .optional()
          .describe('create: variables'),
        pipeline_id: z.number().int().positive().optional().describe('retry, cancel (or its URL as project_id)'),
        job_id: z.number().int().positive().optional().describe('retry, cancel: one job only (or its URL as project_id)'),
        ...confirmationInput,
      }),
      output: z.object({ pipeline: pipelineSchema.optional(), job: jobSchema.optional() }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      confirms: true,
      async run(args, ctx) {
        const base = project(ctx, args.project_id);
        const action = args.action ?? 'create';
        if (action === 'create') {
          if (args.ref === undefined) throw new ToolInputError('create needs ref');
          if (args.pipeline_id !== undefined || args.job_id !== undefined)
            throw new ToolInputError('create takes ref and variables, not pipeline_id or job_id');
          const body: Record<string, unknown> = { ref: args.ref };
          if (args.variables) body.variables = args.variables.map((v) => ({ ...v, variable_type: v.variable_type ?? 'env_var' }));
          return { pipeline: pipelineOut(await ctx.api.post(`${base}/pipeline`, ctx.token, body)) };
        }
        if (args.ref !== undefined || args.variables !== undefined) throw new ToolInputError(`${action} does not take ref or variables`);
        const ids = retryCancelTarget(ctx, args);
        if (action === 'cancel') await confirmCancelOnProtectedRef(ctx, base, ids);
        if (ids.job_id !== undefined) return { job: jobOut(await ctx.api.post(`${base}/jobs/${ids.job_id}/${action}`, ctx.token, {})) };
        return { pipeline: pipelineOut(await ctx.api.post(`${base}/pipelines/${ids.pipeline_id}/${action}`, ctx.token, {})) };
      },
    }),
  ];
}

function jobTools() {
  return [
    defineTool({
      name: 'get_job',
      toolset: 'ci',
      title: 'Get a job',
      description: 'One job; include_log adds its log: the tail, a byte window, or grep matches.',
      input: z.object({
        project_id: projectRef,
        job_id: z.number().int().positive().optional().describe('Job id, or its URL as project_id'),
        include_log: z.boolean().optional().describe('Add the log'),
        tail_lines: z.number().int().min(1).max(5000).optional().describe('Default 100'),
        byte_offset: z.number().int().min(0).optional().describe('A next_byte_offset'),
        byte_limit: z.number().int().min(1).max(MAX_LOG_BYTES).optional().describe('Default 65536'),
        grep: z.string().min(1).max(200).optional().describe('Text, any case; a|b'),
        context_lines: z.number().int().min(0).max(20).optional().describe('Default 3'),
        max_matches: z.number().int().min(1).max(200).optional().describe('Default 50'),
      }),
      output: jobSchema.extend({ log: logSchema.optional() }),
      annotations: READ,
      async run(args, ctx) {
        const logOptions = [args.tail_lines, args.byte_offset, args.grep, args.context_lines, args.max_matches];
        if (!args.include_log && logOptions.some((v) => v !== undefined)) throw new ToolInputError('log options need include_log=true');
        if (args.grep !== undefined && (args.byte_offset !== undefined || args.tail_lines !== undefined))
          throw new ToolInputError('grep searches the whole log: leave out tail_lines and byte_offset');
        if (args.tail_lines !== undefined && args.byte_offset !== undefined)
          throw new ToolInputError('give tail_lines or byte_offset, not both');
        const target = requiredTarget(args.project_id, ctx.forgeUrl, 'job', 'job_id', args.job_id);
        const [job, log] = await Promise.all([
          ctx.api.get(`/projects/${target.project}/jobs/${target.value}`, ctx.token),
          args.include_log ? readLog(ctx, projectLabel(target.project), target.value, args) : undefined,
        ]);
        return { ...jobOut(job), ...(log ? { log } : {}) };
      },
    }),
    defineTool({
      name: 'lint_ci_config',
      toolset: 'ci',
      title: 'Lint CI config',
      description: "Checks .gitlab-ci.yml text, or the project's file at a ref: errors, warnings, jobs.",
      input: z.object({
        project_id: projectRef,
        content: z.string().max(500_000).optional().describe('YAML; default: the file'),
        ref: z.string().max(255).optional().describe('Ref of the file'),
        include_jobs: z.boolean().optional().describe('Add jobs'),
      }),
      output: z.object({
        valid: z.boolean(),
        errors: z.array(text('Error')),
        warnings: z.array(text('Warning')),
        jobs: z
          .array(z.object({ name: z.string(), stage: z.string(), when: z.string().optional(), allow_failure: z.boolean().optional() }))
          .optional(),
      }),
      annotations: READ,
      async run(args, ctx) {
        const base = `${project(ctx, args.project_id)}/ci/lint`;
        const answer =
          args.content !== undefined
            ? await ctx.api.post<Json>(base, ctx.token, {
                content: args.content,
                include_jobs: args.include_jobs ?? false,
                ...(args.ref ? { ref: args.ref } : {}),
              })
            : await ctx.api.get<Json>(base, ctx.token, { ref: args.ref, include_jobs: args.include_jobs });
        const jobs = answer.jobs as Json[] | undefined;
        return {
          valid: answer.valid === true,
          errors: ((answer.errors as unknown[] | undefined) ?? []).map(String),
          warnings: ((answer.warnings as unknown[] | undefined) ?? []).map(String),
          ...(jobs
            ? {
                jobs: jobs.map((j) => ({
                  name: String(j.name),
                  stage: String(j.stage),
                  ...(str(j.when) !== undefined ? { when: str(j.when) } : {}),
                  ...(typeof j.allow_failure === 'boolean' ? { allow_failure: j.allow_failure } : {}),
                })),
              }
            : {}),
        };
      },
    }),
  ];
}

export const ciToolset: ToolsetDefinition = {
  name: 'ci',
  description: 'CI/CD: pipelines, jobs and their logs, retry and cancel, configuration lint',
  default: true,
  tools: () => [...pipelineTools(), ...jobTools()],
};
