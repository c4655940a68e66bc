/**
 * Web URLs wherever ids are (issue 17 item 5) and the confirmation fixes of issue 18 item 2:
 *
 * - the URL of an issue, merge request, file, commit, pipeline and job, given as project_id, is accepted by the
 *   matching get tool against the dev forge, on a forge at the root and on one served under `/gitlab`; a URL of
 *   another host (or outside the forge's path prefix) is a validation error, never resolved here;
 * - a sealed requestState is refused as a confirmation_token and a confirmation_token as a requestState;
 * - with `PLATFORM_REDIS_URL`, a confirmation token redeemed on one replica is refused on another;
 * - a bidirectional control character in a forge title does not reach the confirmation's text.
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, type ServerContext } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callTool,
  captureLogger,
  postModernToolCall,
  REDIS_URL,
  redisAvailable,
  startStack,
  startTokenStack,
  type Stack,
} from '../mcp.testkit.ts';
import { fileTarget, parseProjectRef, requiredTarget } from './forge.ids.ts';
import { createMemoryReplayCache } from '../oauth/oauth.replay.ts';
import { createForgeMcpServer } from './forge.tools.ts';
import { ConfirmationPending, createConfirmer } from './tool.confirm.ts';

type Json = Record<string, unknown>;
interface Result {
  isError?: boolean;
  structuredContent?: unknown;
  content?: { type: string; text?: string }[];
}

const BIDI = '\u202E';

let stack: Stack;
let pat = '';
let project = '';

beforeAll(async () => {
  ({ stack, pat } = await startTokenStack());
  project = `${stack.forge.user.username}/hello-forge`;
});
afterAll(async () => {
  await stack.close();
});

/** A v2 client on an in-memory server whose forge is `forgeUrl`; `fetchImpl` reaches the dev forge from there. */
async function connect(forgeUrl: string, fetchImpl: typeof fetch): Promise<Client> {
  const server = createForgeMcpServer({ forgeUrl, fetch: fetchImpl, log: captureLogger().logger, getToken: async () => pat });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'web-urls', version: '1' });
  await client.connect(clientSide);
  return client;
}

function value(result: unknown): Json {
  const r = result as Result;
  expect(r.isError, JSON.stringify(r.structuredContent)).toBeFalsy();
  return r.structuredContent as Json;
}

function errorOf(result: unknown): Json | undefined {
  const r = result as Result;
  return r.isError ? ((r.structuredContent as { error?: Json } | undefined)?.error ?? {}) : undefined;
}

describe('web URLs as ids', () => {
  it('[FORGE-WEB-URLS] parses the URL forms: numbers, SHAs, files with a ref holding a slash, a path prefix; disagreement refused', () => {
    const forge = 'https://example.com/gitlab';
    expect(parseProjectRef('https://example.com/gitlab/a/b/-/merge_requests/3/diffs#note_1', forge)).toEqual({
      id: 'a%2Fb',
      target: { kind: 'merge_request', id: 3 },
    });
    expect(parseProjectRef('https://EXAMPLE.com/gitlab/g/sub/p/-/jobs/67/raw', forge)).toEqual({
      id: 'g%2Fsub%2Fp',
      target: { kind: 'job', id: 67 },
    });
    expect(requiredTarget('https://example.com/gitlab/a/b/-/issues/12', forge, 'issue', 'issue_iid', undefined)).toEqual({
      project: 'a%2Fb',
      value: 12,
    });
    expect(() => requiredTarget('https://example.com/gitlab/a/b/-/issues/12', forge, 'issue', 'issue_iid', 13)).toThrow(/disagrees/);
    expect(() => requiredTarget('https://example.com/gitlab/a/b/-/merge_requests/1', forge, 'issue', 'issue_iid', undefined)).toThrow(
      /issue_iid is required/,
    );
    const blob = 'https://example.com/gitlab/a/b/-/blob/feature/login/src/app%20x.ts?ref_type=heads#L3';
    expect(fileTarget(blob, forge, {})).toEqual({ project: 'a%2Fb', ref: 'feature', file_path: 'login/src/app x.ts' });
    expect(fileTarget(blob, forge, { ref: 'feature/login' })).toEqual({
      project: 'a%2Fb',
      ref: 'feature/login',
      file_path: 'src/app x.ts',
    });
    expect(fileTarget(blob, forge, { file_path: 'src/app x.ts' })).toMatchObject({ ref: 'feature/login' });
    expect(() => fileTarget(blob, forge, { file_path: 'other.ts' })).toThrow(/disagrees/);
    // Another host, or this host outside the forge's prefix: refused, not resolved as a path here.
    expect(() => parseProjectRef('https://elsewhere.example/gitlab/a/b/-/issues/1', forge)).toThrow(/another site/);
    expect(() => parseProjectRef('https://example.com/a/b/-/issues/1', forge)).toThrow(/another site/);
    expect(() => parseProjectRef('https://example.com:8443/gitlab/a/b', forge)).toThrow(/another site/);
  });

  /** The six get tools with a URL in project_id; `base` is the forge's web base the URLs are written under. */
  async function eachKind(client: Client, base: string) {
    const web = `${base}/${project}/-`;

    const issue = value(await client.callTool({ name: 'get_issue', arguments: { project_id: `${web}/issues/2` } }));
    expect(issue.issue).toMatchObject({ iid: 2 });

    const mr = value(await client.callTool({ name: 'get_merge_request', arguments: { project_id: `${web}/merge_requests/1` } }));
    expect(mr.merge_request).toMatchObject({ iid: 1 });

    const file = value(await client.callTool({ name: 'get_repository_file', arguments: { project_id: `${web}/blob/main/src/greet.ts` } }));
    expect(file).toMatchObject({ file_path: 'src/greet.ts', ref: 'main' });
    expect(String(file.content)).toContain('Hello');

    const commits = value(await client.callTool({ name: 'list_commits', arguments: { project_id: project, per_page: 1 } }));
    const sha = (commits.items as { id: string }[])[0]?.id ?? '';
    const commit = value(await client.callTool({ name: 'get_commit', arguments: { project_id: `${web}/commit/${sha}` } }));
    expect(commit.id).toBe(sha);

    const pipelines = value(await client.callTool({ name: 'list_pipelines', arguments: { project_id: project, per_page: 1 } }));
    const pipelineId = (pipelines.items as { id: number }[])[0]?.id ?? 0;
    const pipeline = value(await client.callTool({ name: 'get_pipeline', arguments: { project_id: `${web}/pipelines/${pipelineId}` } }));
    expect(pipeline.id).toBe(pipelineId);
    const jobId = (pipeline.jobs as { id: number }[])[0]?.id ?? 0;

    const job = value(await client.callTool({ name: 'get_job', arguments: { project_id: `${web}/jobs/${jobId}` } }));
    expect(job.id).toBe(jobId);

    // The number given beside a URL that names another one is a question, not a guess.
    const disagreeing = await client.callTool({ name: 'get_issue', arguments: { project_id: `${web}/issues/2`, issue_iid: 3 } });
    expect(errorOf(disagreeing)).toMatchObject({ type: 'validation', status: 0 });
  }

  it('[FORGE-WEB-URLS] issue, merge request, file, commit, pipeline and job URLs on a forge at the root; its own web_url reads back', async () => {
    const client = await connect(stack.forge.forge.url, globalThis.fetch);
    try {
      await eachKind(client, stack.forge.forge.url);
      const listed = value(await client.callTool({ name: 'list_issues', arguments: { project_id: project, per_page: 1 } }));
      const first = (listed.items as { iid: number; web_url: string }[])[0];
      const again = value(await client.callTool({ name: 'get_issue', arguments: { project_id: first?.web_url } }));
      expect(again.issue).toMatchObject({ iid: first?.iid });
    } finally {
      await client.close();
    }
  });

  it('[FORGE-WEB-URLS] the same URLs under a FORGE_URL with a path prefix (/gitlab); another host and the bare host are refused', async () => {
    const real = stack.forge.forge.url;
    const prefixed = `${real}/gitlab`;
    const seen: string[] = [];
    // A reverse proxy in front of a relative-URL forge: `/gitlab/...` is the forge's `/...`.
    const viaPrefix: typeof fetch = (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      seen.push(url);
      if (!url.startsWith(`${prefixed}/`)) return Promise.resolve(new Response('not under /gitlab', { status: 404 }));
      return globalThis.fetch(`${real}${url.slice(prefixed.length)}`, init);
    };
    const client = await connect(prefixed, viaPrefix);
    try {
      await eachKind(client, prefixed);
      expect(seen.every((u) => u.startsWith(`${prefixed}/api/v4/`))).toBe(true);

      const before = seen.length;
      const foreignHost = new URL(real);
      foreignHost.hostname = 'forge.elsewhere.example';
      for (const url of [`${foreignHost.origin}/gitlab/${project}/-/issues/2`, `${real}/${project}/-/issues/2`]) {
        const refused = await client.callTool({ name: 'get_issue', arguments: { project_id: url } });
        expect(errorOf(refused)).toMatchObject({ type: 'validation', status: 0 });
        expect(String(errorOf(refused)?.message)).toMatch(/another site/);
        // The message does not echo the URL back.
        expect(String(errorOf(refused)?.message)).not.toContain('elsewhere');
      }
      expect(seen.length, 'no forge request for a refused URL').toBe(before);
    } finally {
      await client.close();
    }
  });

  it('[FORGE-WEB-URLS] a write tool: an issue URL fills the note’s issue; save_issue asks instead of guessing update or create', async () => {
    const client = await connect(stack.forge.forge.url, globalThis.fetch);
    try {
      const url = `${stack.forge.forge.url}/${project}/-/issues/2`;
      const note = value(await client.callTool({ name: 'save_issue_note', arguments: { project_id: url, body: 'Seen via its URL' } }));
      expect(note).toMatchObject({ body: 'Seen via its URL' });
      const ambiguous = await client.callTool({ name: 'save_issue', arguments: { project_id: url, title: 'New or renamed?' } });
      expect(errorOf(ambiguous)).toMatchObject({ type: 'validation' });
      expect(String(errorOf(ambiguous)?.message)).toMatch(/give issue_iid/);
    } finally {
      await client.close();
    }
  });
});

/** A raw 2026-07-28 tools/call, optionally declaring elicitation; answers the JSON-RPC result. */
async function modernCall(base: string, name: string, args: Json, extra: Json = {}, elicitation = true): Promise<Json> {
  return await postModernToolCall(base, pat, name, args, { extra, elicitation, clientName: 'web-urls-confirm' });
}

/** An open merge request of the user's project and the arguments that merge it. */
async function openMergeRequest(branch: string): Promise<Json> {
  const created = await callTool(stack.url, pat, 'add_commit', {
    project_id: project,
    branch,
    start_branch: 'main',
    commit_message: `Work on ${branch}`,
    actions: [{ action: 'create', file_path: `notes/${branch}.md`, content: '# Notes\n' }],
  });
  expect((created as Result).isError, JSON.stringify((created as Result).structuredContent)).toBeFalsy();
  const opened = value(
    await callTool(stack.url, pat, 'save_merge_request', {
      project_id: project,
      source_branch: branch,
      target_branch: 'main',
      title: branch,
    }),
  );
  const got = value(await callTool(stack.url, pat, 'get_merge_request', { project_id: project, merge_request_iid: opened.iid }));
  return { project_id: project, merge_request_iid: opened.iid, sha: (got.merge_request as Json).sha };
}

describe('confirmation tokens and request states', () => {
  it('[TOOL-CONFIRM] a requestState is refused as a confirmation_token, and a confirmation_token as a requestState', async () => {
    const args = await openMergeRequest(`purpose-${randomBytes(3).toString('hex')}`);
    const accepted = { confirm: { action: 'accept', content: { confirm: true } } };

    const asked = await modernCall(stack.url, 'accept_merge_request', args);
    expect(asked.resultType).toBe('input_required');
    const state = asked.requestState as string;
    const stateAsToken = await modernCall(stack.url, 'accept_merge_request', { ...args, confirmation_token: state });
    expect(stateAsToken.isError, JSON.stringify(stateAsToken)).toBe(true);
    expect(JSON.stringify(stateAsToken.structuredContent)).toContain('not one this server issued');

    // A client without elicitation gets a confirmation_token; handed back as the request state of an answer.
    const tokenAnswer = await modernCall(stack.url, 'accept_merge_request', args, {}, false);
    const token = ((tokenAnswer.structuredContent as Json).confirmation_required as { token: string }).token;
    const tokenAsState = await modernCall(stack.url, 'accept_merge_request', args, { inputResponses: accepted, requestState: token });
    expect(tokenAsState.isError, JSON.stringify(tokenAsState)).toBe(true);
    expect(JSON.stringify(tokenAsState.structuredContent)).toContain('not one this server issued');

    const still = value(await callTool(stack.url, pat, 'get_merge_request', args));
    expect(still.merge_request).toMatchObject({ state: 'opened' });
    // Each still works for what it was minted for.
    const merged = await modernCall(stack.url, 'accept_merge_request', args, { inputResponses: accepted, requestState: state });
    expect(merged.structuredContent, JSON.stringify(merged)).toMatchObject({ status: 'merged' });
  });

  it('[TOOL-CONFIRM] a bidi control character in a forge title reaches neither the confirmation token’s text nor the question', async () => {
    const branch = `bidi-${randomBytes(3).toString('hex')}`;
    const title = `Harmless ${BIDI}txt.exe`;
    const made = await callTool(stack.url, pat, 'add_commit', {
      project_id: project,
      branch,
      start_branch: 'main',
      commit_message: `${title}\n\nbody`,
      actions: [{ action: 'create', file_path: `bidi/${branch}.txt`, content: 'x\n' }],
    });
    expect((made as Result).isError).toBeFalsy();

    const args = { project_id: project, branch, delete: true };
    const asked = (await callTool(stack.url, pat, 'save_branch', args)) as Result;
    const question = (asked.structuredContent as Json).confirmation_required as { summary: string };
    expect(question.summary).toContain('"Harmless txt.exe"');
    expect(question.summary).not.toContain(BIDI);
    expect(JSON.stringify(asked.content)).not.toContain(BIDI);
    expect(asked.content?.[0]?.text).not.toContain(BIDI);

    const elicited = await modernCall(stack.url, 'save_branch', args);
    const message = (elicited.inputRequests as Record<string, { params: { message: string } }>).confirm?.params.message ?? '';
    expect(message).toContain('"Harmless txt.exe"');
    expect(message).not.toContain(BIDI);
  });

  it('[TOOL-CONFIRM] the confirmer cleans a summary a tool did not quote: no invisible character in the result', async () => {
    const confirmer = createConfirmer({ secret: randomBytes(32), replay: createMemoryReplayCache({ clock: { now: () => Date.now() } }) });
    // A 2025 request over stateless HTTP: no envelope, no known capabilities, so the token answer.
    const channel = { request: { mcpReq: {} } as unknown as ServerContext, clientCapabilities: undefined };
    const subject = { tool: 'delete_wiki_page', args: { project_id: 'a/b', slug: 'home' }, forgeToken: 'glpat-x' };
    const pending = await confirmer.confirm(`Delete wiki page ${BIDI}emoh\u200B.`, subject, channel).catch((error: unknown) => error);
    expect(pending).toBeInstanceOf(ConfirmationPending);
    const result = (pending as ConfirmationPending).result;
    expect(JSON.stringify(result)).not.toMatch(/[\u202E\u200B]/);
    expect((result.structuredContent as Json).confirmation_required).toMatchObject({ summary: 'Delete wiki page emoh' });
  });
});

describe('confirmation nonces across replicas', () => {
  it('[TOOL-CONFIRM] with PLATFORM_REDIS_URL, a token redeemed on one replica is refused on another sharing the Redis', async () => {
    if (!(await redisAvailable())) return;
    const localSecret = randomBytes(32);
    const replicas = [
      await startStack({ mode: 'none', forge: stack.forge, redisUrl: REDIS_URL, localSecret }),
      await startStack({ mode: 'none', forge: stack.forge, redisUrl: REDIS_URL, localSecret }),
    ];
    try {
      const [a, b] = replicas as [Stack, Stack];
      // Cancelling a pipeline on the protected `main` asks every time, so the second call reaches the token check.
      const created = value(await callTool(a.url, pat, 'manage_pipeline', { project_id: project, action: 'create', ref: 'main' }));
      const args = { project_id: project, action: 'cancel', pipeline_id: (created.pipeline as { id: number }).id };
      const asked = value(await callTool(a.url, pat, 'manage_pipeline', args));
      const token = (asked.confirmation_required as { token: string }).token;

      const first = value(await callTool(a.url, pat, 'manage_pipeline', { ...args, confirmation_token: token }));
      expect(first.pipeline).toMatchObject({ status: 'canceled' });
      const replayed = await callTool(b.url, pat, 'manage_pipeline', { ...args, confirmation_token: token });
      expect(errorOf(replayed)).toMatchObject({ type: 'forbidden' });
      expect(String(errorOf(replayed)?.message)).toMatch(/already used/);
    } finally {
      for (const replica of replicas) await replica.close();
    }
  });
});
