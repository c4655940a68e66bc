/**
 * manage_pipeline's cancel asks first on a protected ref as GitLab decides protection: a branch covered by a
 * wildcard rule (`release/*`, which `GET /protected_branches/:name` does not find by the branch's name), a tag
 * covered by a protected-tag rule, and a ref whose protection could not be checked; a cancel on an unprotected
 * branch goes ahead. get_job links the whole log as a resource when it answers with less than all of it.
 */
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevForge, type StartedDevForge } from '../../devforge/index.ts';
import { captureLogger, toolJson } from '../mcp.testkit.ts';
import { createForgeMcpServer } from './forge.tools.ts';

type Json = Record<string, unknown>;
const PROJECT = 'sam/hello-forge';
const P = encodeURIComponent(PROJECT);

let forge: StartedDevForge;
let pat = '';
let client: Client;

async function rest(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json & Json[] }> {
  const response = await fetch(`${forge.url}/api/v4${path}`, {
    method,
    headers: { authorization: `Bearer ${pat}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: (text === '' ? null : JSON.parse(text)) as Json & Json[] };
}

async function pipelineOn(ref: string): Promise<number> {
  const created = await rest('POST', `/projects/${P}/pipeline`, { ref });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id as number;
}

const statusOf = async (id: number) => (await rest('GET', `/projects/${P}/pipelines/${id}`)).body.status;

async function cancel(args: Json) {
  const result = await client.callTool({ name: 'manage_pipeline', arguments: { project_id: PROJECT, action: 'cancel', ...args } });
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  return result.structuredContent as Json;
}

beforeAll(async () => {
  forge = await startDevForge({
    users: [{ id: 1, username: 'sam', name: 'Sam Release', email: 'sam@example.test', password: 'pw-release-1' }],
    applications: [],
  });
  pat = forge.createPersonalAccessToken('sam', ['api']);
  expect((await rest('POST', `/projects/${P}/repository/branches`, { branch: 'release/1.0', ref: 'main' })).status).toBe(201);
  expect((await rest('POST', `/projects/${P}/protected_branches`, { name: 'release/*' })).status).toBe(201);
  expect((await rest('POST', `/projects/${P}/protected_tags`, { name: 'v*' })).status).toBe(201);
  const server = createForgeMcpServer({ forgeUrl: forge.url, fetch, log: captureLogger().logger, getToken: async () => pat });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  // No elicitation capability: a confirmation comes back as a confirmation token.
  client = new Client({ name: 'ci-protection', version: '1' });
  await client.connect(clientSide);
});
afterAll(async () => {
  await client.close();
  await forge.close();
});

describe('the dev forge answers protection as GitLab does', () => {
  it('[CI-PROTECTED-REF] a wildcard rule protects the branch and the tag it covers; the rule is found by its own name only', async () => {
    expect((await rest('GET', `/projects/${P}/repository/branches/${encodeURIComponent('release/1.0')}`)).body).toMatchObject({
      name: 'release/1.0',
      protected: true,
    });
    expect((await rest('GET', `/projects/${P}/repository/branches/readme`)).body).toMatchObject({ protected: false });
    expect((await rest('GET', `/projects/${P}/protected_branches/${encodeURIComponent('release/1.0')}`)).status).toBe(404);
    expect((await rest('GET', `/projects/${P}/protected_branches/${encodeURIComponent('release/*')}`)).body).toMatchObject({
      name: 'release/*',
    });
    expect((await rest('GET', `/projects/${P}/repository/tags/v1.0.0`)).body).toMatchObject({ name: 'v1.0.0', protected: true });
    expect((await rest('GET', `/projects/${P}/protected_tags`)).body).toEqual([
      {
        name: 'v*',
        create_access_levels: [expect.objectContaining({ access_level: 40, access_level_description: 'Maintainers' })],
      },
    ]);
    expect((await rest('GET', `/projects/${P}/protected_tags/${encodeURIComponent('v*')}`)).status).toBe(200);
    expect((await rest('GET', `/projects/${P}/protected_tags/v1.0.0`)).status).toBe(404);
    expect((await rest('POST', `/projects/${P}/protected_tags`, { name: 'v*' })).status).toBe(422);
  });
});

describe('cancelling a pipeline', () => {
  it('[CI-PROTECTED-REF] on a branch protected by a wildcard rule asks first, and cancels once confirmed', async () => {
    const id = await pipelineOn('release/1.0');
    const asked = await cancel({ pipeline_id: id });
    const question = asked.confirmation_required as { summary: string; token: string };
    expect(question.summary).toContain('protected branch "release/1.0"');
    expect(await statusOf(id)).toBe('pending');
    const done = await cancel({ pipeline_id: id, confirmation_token: question.token });
    expect(done.pipeline).toMatchObject({ id, status: 'canceled' });
  });

  it('[CI-PROTECTED-REF] a job on such a branch asks too', async () => {
    const id = await pipelineOn('release/1.0');
    const jobs = (await rest('GET', `/projects/${P}/pipelines/${id}/jobs`)).body;
    const job = jobs.find((j) => j.status === 'pending') as { id: number };
    const asked = await cancel({ job_id: job.id });
    expect((asked.confirmation_required as { summary: string }).summary).toContain('protected branch "release/1.0"');
  });

  it('[CI-PROTECTED-REF] on a protected tag asks first', async () => {
    const id = await pipelineOn('v1.0.0');
    expect((await rest('GET', `/projects/${P}/pipelines/${id}`)).body).toMatchObject({ tag: true, ref: 'v1.0.0' });
    const asked = await cancel({ pipeline_id: id });
    expect((asked.confirmation_required as { summary: string }).summary).toContain('protected tag "v1.0.0"');
    expect(await statusOf(id)).toBe('pending');
  });

  it('[CI-PROTECTED-REF] on an unprotected branch goes ahead without asking', async () => {
    const id = await pipelineOn('readme');
    const done = await cancel({ pipeline_id: id });
    expect(done.confirmation_required).toBeUndefined();
    expect(done.pipeline).toMatchObject({ id, status: 'canceled' });
  });

  it('[CI-PROTECTED-REF] when the protection check fails at the forge it asks rather than skipping the question', async () => {
    const id = await pipelineOn('readme');
    forge.faults.add({ kind: 'server_error', path: /\/repository\/branches\// });
    const asked = await cancel({ pipeline_id: id });
    expect((asked.confirmation_required as { summary: string }).summary).toContain('whose protection could not be checked');
    expect(await statusOf(id)).toBe('pending');
  });
});

describe('get_job', () => {
  async function failedJob(): Promise<number> {
    const failed = (await rest('GET', `/projects/${P}/pipelines?status=failed`)).body[0] as { id: number };
    const jobs = (await rest('GET', `/projects/${P}/pipelines/${failed.id}/jobs?scope[]=failed`)).body;
    return (jobs[0] as { id: number }).id;
  }
  const links = (result: unknown) =>
    ((result as { content?: { type: string; uri?: string; mimeType?: string }[] }).content ?? []).filter((c) => c.type === 'resource_link');

  it('[CI-LOG-LINK] a windowed log carries a resource_link to the whole log; a log given whole does not', async () => {
    const jobId = await failedJob();
    const tail = await client.callTool({
      name: 'get_job',
      arguments: { project_id: PROJECT, job_id: jobId, include_log: true, tail_lines: 3 },
    });
    const log = (toolJson(tail) as { log: { resource_uri: string; truncated: boolean; total_bytes: number } }).log;
    expect(log.truncated).toBe(true);
    expect(links(tail)).toEqual([expect.objectContaining({ uri: log.resource_uri, mimeType: 'text/plain' })]);

    const window = await client.callTool({
      name: 'get_job',
      arguments: { project_id: PROJECT, job_id: jobId, include_log: true, byte_offset: 100, byte_limit: 1000 },
    });
    expect(links(window).map((l) => l.uri)).toEqual([log.resource_uri]);

    const whole = await client.callTool({
      name: 'get_job',
      arguments: { project_id: PROJECT, job_id: jobId, include_log: true, byte_offset: 0, byte_limit: 512_000 },
    });
    expect((toolJson(whole) as { log: { end_byte: number } }).log.end_byte).toBe(log.total_bytes);
    expect(links(whole)).toEqual([]);
  });
});
