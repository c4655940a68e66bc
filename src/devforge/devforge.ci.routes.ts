/**
 * GitLab's CI REST API on the dev forge (issue 18 item 4): pipelines (list, single, its jobs, create with
 * variables, retry, cancel), jobs (single, the text log at `…/trace`, retry, cancel) and CI lint, with GitLab's
 * parameter names, statuses and error bodies. Registered inside the API scope (devforge.api.routes.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { boolParam, intParam, paginate, ParamError, type ApiRouteKit } from './devforge.api.routes.ts';
import * as entities from './devforge.ci.entities.ts';
import {
  CI_STATUSES,
  cancelPipeline,
  createPipeline,
  currentJobs,
  isActive,
  lintCiConfig,
  pipelineStatus,
  retryJob,
  retryPipeline,
  type CiStatus,
  type DevForgeCi,
  type JobRecord,
  type PipelineRecord,
  type PipelineVariable,
} from './devforge.ci.ts';
import { baseUrl, param } from './devforge.http.ts';
import { resolveRef, type DevForgeRepositories } from './devforge.repository.ts';
import type { ProjectRecord } from './devforge.types.ts';

export interface CiRouteDeps {
  ci: DevForgeCi;
  repositories: DevForgeRepositories;
  now: () => number;
}

/** Every value of a list parameter: `scope[]=a&scope[]=b`, `scope=a`, or a comma-free repeated key. */
function listParam(query: unknown, name: string): string[] {
  const source = (query ?? {}) as Record<string, unknown>;
  const values = [source[name], source[`${name}[]`]].flat().filter((v): v is string => typeof v === 'string' && v !== '');
  return values;
}

const SCOPES = ['running', 'pending', 'finished', 'branches', 'tags'] as const;

/** The pipeline's time span from its jobs. */
function times(ci: DevForgeCi, p: PipelineRecord): { startedAt: number | null; finishedAt: number | null } {
  const jobs = currentJobs(ci, p);
  const started = jobs.map((j) => j.startedAt).filter((t): t is number => t !== null);
  const status = pipelineStatus(ci, p);
  const finished = jobs.map((j) => j.finishedAt).filter((t): t is number => t !== null);
  return {
    startedAt: started.length > 0 ? Math.min(...started) : null,
    finishedAt: isActive(status) || finished.length === 0 ? (p.finishedAt ?? null) : Math.max(...finished),
  };
}

/** `last_pipeline` of a commit (the newest pipeline for its sha). */
export function lastPipelineOf(ci: DevForgeCi, project: ProjectRecord, sha: string): Record<string, unknown> | null {
  const p = ci.pipelines.filter((x) => x.projectId === project.id && x.sha === sha).sort((a, b) => b.id - a.id)[0];
  return p ? { id: p.id, iid: p.iid, project_id: p.projectId, sha: p.sha, ref: p.ref, status: pipelineStatus(ci, p) } : null;
}

export function ciRoutes(deps: CiRouteDeps) {
  const { ci } = deps;
  return (scope: FastifyInstance, kit: ApiRouteKit): void => {
    const readable = (request: FastifyRequest, reply: FastifyReply) => kit.readableProject(request, reply);
    const writable = (request: FastifyRequest, reply: FastifyReply) => {
      const found = kit.writableProject(request, reply);
      return found && { p: found.project, user: found.user };
    };
    const pipelineOf = (request: FastifyRequest, reply: FastifyReply, p: ProjectRecord): PipelineRecord | undefined => {
      const id = intParam(request.params, 'pipeline_id', 0);
      const found = ci.pipelines.find((x) => x.projectId === p.id && x.id === id);
      if (!found) void reply.code(404).send({ message: '404 Not found' });
      return found;
    };
    const jobOf = (request: FastifyRequest, reply: FastifyReply, p: ProjectRecord): JobRecord | undefined => {
      const id = intParam(request.params, 'job_id', 0);
      const found = ci.jobs.find((x) => x.projectId === p.id && x.id === id);
      if (!found) void reply.code(404).send({ message: '404 Job Not Found' });
      return found;
    };
    const single = (p: PipelineRecord, project: ProjectRecord, base: string) =>
      entities.pipeline(p, pipelineStatus(ci, p), project, kit.author(p.userId), base, times(ci, p));
    const jobEntity = (j: JobRecord, project: ProjectRecord, base: string) => {
      const p = ci.pipelines.find((x) => x.id === j.pipelineId) as PipelineRecord;
      const commit = deps.repositories.of(project.id).commits.get(p.sha);
      return entities.job(j, p, pipelineStatus(ci, p), commit, project, kit.author(j.userId), base);
    };
    const statusesOf = (request: FastifyRequest): CiStatus[] => {
      const scopes = listParam(request.query, 'scope');
      for (const s of scopes)
        if (!CI_STATUSES.includes(s as CiStatus)) throw new ParamError({ error: 'scope does not have a valid value' });
      return scopes as CiStatus[];
    };

    scope.get('/projects/:id/pipelines', async (request, reply) => {
      const p = readable(request, reply);
      if (!p) return reply;
      const q = request.query;
      const pipelineScope = param(q, 'scope');
      if (pipelineScope !== undefined && !SCOPES.includes(pipelineScope as (typeof SCOPES)[number]))
        throw new ParamError({ error: 'scope does not have a valid value' });
      const status = param(q, 'status');
      if (status !== undefined && !CI_STATUSES.includes(status as CiStatus))
        throw new ParamError({ error: 'status does not have a valid value' });
      const sort = param(q, 'sort') ?? 'desc';
      if (sort !== 'asc' && sort !== 'desc') throw new ParamError({ error: 'sort does not have a valid value' });
      const ref = param(q, 'ref');
      const sha = param(q, 'sha');
      const source = param(q, 'source');
      const username = param(q, 'username');
      const list = ci.pipelines
        .filter((x) => x.projectId === p.id)
        .filter((x) => {
          const s = pipelineStatus(ci, x);
          if (status !== undefined && s !== status) return false;
          if (pipelineScope === 'running' && s !== 'running') return false;
          if (pipelineScope === 'pending' && s !== 'pending') return false;
          if (pipelineScope === 'finished' && isActive(s)) return false;
          if (pipelineScope === 'branches' && x.tag) return false;
          if (pipelineScope === 'tags' && !x.tag) return false;
          if (ref !== undefined && x.ref !== ref) return false;
          if (sha !== undefined && x.sha !== sha) return false;
          if (source !== undefined && x.source !== source) return false;
          if (username !== undefined && kit.author(x.userId).username !== username) return false;
          return true;
        })
        .sort((a, b) => (sort === 'asc' ? a.id - b.id : b.id - a.id));
      const base = baseUrl(request);
      return paginate(request, reply, list).map((x) => entities.pipelineBasic(x, pipelineStatus(ci, x), p, base));
    });
    scope.get('/projects/:id/pipelines/latest', async (request, reply) => {
      const p = readable(request, reply);
      if (!p) return reply;
      const repo = deps.repositories.of(p.id);
      const ref = param(request.query, 'ref') || repo.defaultBranch;
      const latest = ci.pipelines.filter((x) => x.projectId === p.id && x.ref === ref).sort((a, b) => b.id - a.id)[0];
      // GitLab answers 403 when the ref has no pipeline (mcp-facts.md 2.3).
      if (!latest) return reply.code(403).send({ message: '403 Forbidden' });
      return single(latest, p, baseUrl(request));
    });
    scope.get('/projects/:id/pipelines/:pipeline_id', async (request, reply) => {
      const p = readable(request, reply);
      if (!p) return reply;
      const found = pipelineOf(request, reply, p);
      return found ? single(found, p, baseUrl(request)) : reply;
    });
    scope.get('/projects/:id/pipelines/:pipeline_id/jobs', async (request, reply) => {
      const p = readable(request, reply);
      if (!p) return reply;
      const statuses = statusesOf(request);
      const found = pipelineOf(request, reply, p);
      if (!found) return reply;
      const includeRetried = boolParam(request.query, 'include_retried');
      const jobs = ci.jobs
        .filter((j) => j.pipelineId === found.id && (includeRetried || !j.retried))
        .filter((j) => statuses.length === 0 || statuses.includes(j.status))
        .sort((a, b) => a.id - b.id);
      const base = baseUrl(request);
      return paginate(request, reply, jobs).map((j) => jobEntity(j, p, base));
    });
    scope.post('/projects/:id/pipeline', async (request, reply) => {
      const body = request.body as Record<string, unknown> | null;
      const ref = param({ ...(request.query as object), ...body }, 'ref');
      if (ref === undefined) throw new ParamError({ error: 'ref is missing' });
      const rawVariables = body?.variables ?? [];
      if (!Array.isArray(rawVariables)) throw new ParamError({ error: 'variables is invalid' });
      const variables: PipelineVariable[] = rawVariables.map((v: unknown, i) => {
        const key = param(v, 'key');
        const value = param(v, 'value');
        if (!key || value === undefined) throw new ParamError({ error: `variables[${i}][key], variables[${i}][value] are missing` });
        return { key, value, variable_type: param(v, 'variable_type') === 'file' ? 'file' : 'env_var' };
      });
      const found = writable(request, reply);
      if (!found) return reply;
      const repo = deps.repositories.of(found.p.id);
      const isTag = !repo.branches.has(ref) && repo.tags.has(ref);
      const at = repo.branches.has(ref) || isTag ? resolveRef(repo, ref) : undefined;
      // GitLab's pipeline-creation errors: 400 with `{"message":{"base":[…]}}`.
      if (!at) return reply.code(400).send({ message: { base: ['Reference not found'] } });
      const file = at.files.get('.gitlab-ci.yml');
      if (!file) return reply.code(400).send({ message: { base: ['Missing CI config file'] } });
      const config = lintCiConfig(file.content.toString('utf8'));
      if (!config.valid) return reply.code(400).send({ message: { base: config.errors } });
      const created = createPipeline(ci, {
        projectId: found.p.id,
        ref,
        tag: isTag,
        sha: at.id,
        beforeSha: at.parentIds[0] ?? '0000000000000000000000000000000000000000',
        userId: found.user.id,
        source: 'api',
        at: deps.now(),
        variables,
        config,
      });
      return reply.code(201).send(single(created, found.p, baseUrl(request)));
    });
    scope.post('/projects/:id/pipelines/:pipeline_id/retry', async (request, reply) => {
      const found = writable(request, reply);
      if (!found) return reply;
      const p = pipelineOf(request, reply, found.p);
      if (!p) return reply;
      retryPipeline(ci, p, found.user.id, deps.now());
      return reply.code(201).send(single(p, found.p, baseUrl(request)));
    });
    scope.post('/projects/:id/pipelines/:pipeline_id/cancel', async (request, reply) => {
      const found = writable(request, reply);
      if (!found) return reply;
      const p = pipelineOf(request, reply, found.p);
      if (!p) return reply;
      cancelPipeline(ci, p, deps.now());
      return single(p, found.p, baseUrl(request));
    });
    scope.get('/projects/:id/jobs/:job_id', async (request, reply) => {
      const p = readable(request, reply);
      if (!p) return reply;
      const j = jobOf(request, reply, p);
      return j ? jobEntity(j, p, baseUrl(request)) : reply;
    });
    scope.get('/projects/:id/jobs/:job_id/trace', async (request, reply) => {
      const p = readable(request, reply);
      if (!p) return reply;
      const j = jobOf(request, reply, p);
      if (!j) return reply;
      // GitLab: 404 for a job without a log file as for a missing job (mcp-facts.md 2.3).
      if (j.log === '') return reply.code(404).send({ message: '404 Not Found' });
      return reply.type('text/plain; charset=utf-8').send(j.log);
    });
    scope.post('/projects/:id/jobs/:job_id/retry', async (request, reply) => {
      const found = writable(request, reply);
      if (!found) return reply;
      const j = jobOf(request, reply, found.p);
      if (!j) return reply;
      const copy = retryJob(ci, j, found.user.id, deps.now());
      if (!copy) return reply.code(403).send({ message: '403 Forbidden - Job is not retryable' });
      return reply.code(201).send(jobEntity(copy, found.p, baseUrl(request)));
    });
    scope.post('/projects/:id/jobs/:job_id/cancel', async (request, reply) => {
      const found = writable(request, reply);
      if (!found) return reply;
      const j = jobOf(request, reply, found.p);
      if (!j) return reply;
      if (isActive(j.status)) {
        j.status = 'canceled';
        j.finishedAt = deps.now();
      }
      return reply.code(201).send(jobEntity(j, found.p, baseUrl(request)));
    });

    // CI lint: `POST` lints given content; `GET` lints the project's own `.gitlab-ci.yml` at `sha`/`ref`.
    const lintAnswer = (content: string, includeJobs: boolean) => {
      const result = lintCiConfig(content);
      return {
        valid: result.valid,
        errors: result.errors,
        warnings: result.warnings,
        merged_yaml: result.valid ? content : null,
        includes: [],
        ...(includeJobs
          ? {
              jobs: result.jobs.map((j) => ({
                name: j.name,
                stage: j.stage,
                before_script: [],
                script: j.script,
                after_script: [],
                tag_list: [],
                only: null,
                except: null,
                environment: null,
                when: j.when,
                allow_failure: j.allow_failure,
                needs: null,
              })),
            }
          : {}),
      };
    };
    scope.post('/projects/:id/ci/lint', async (request, reply) => {
      const content = param(request.body, 'content');
      if (content === undefined) throw new ParamError({ error: 'content is missing' });
      const p = readable(request, reply);
      if (!p) return reply;
      return lintAnswer(content, boolParam(request.body, 'include_jobs'));
    });
    scope.get('/projects/:id/ci/lint', async (request, reply) => {
      const p = readable(request, reply);
      if (!p) return reply;
      const repo = deps.repositories.of(p.id);
      const at = resolveRef(repo, param(request.query, 'sha') || param(request.query, 'ref') || repo.defaultBranch);
      const file = at?.files.get('.gitlab-ci.yml');
      if (!file)
        return { valid: false, errors: ['Please provide content of .gitlab-ci.yml'], warnings: [], merged_yaml: null, includes: [] };
      return lintAnswer(file.content.toString('utf8'), boolParam(request.query, 'include_jobs'));
    });
  };
}
