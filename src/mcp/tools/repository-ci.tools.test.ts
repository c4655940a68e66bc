/**
 * The repository, ci and releases toolsets (issue 18 items 1, 2, 4) end to end: every tool through the v1 and v2
 * SDK clients over Streamable HTTP against the dev forge, each result validated against the tool's advertised
 * outputSchema (both clients validate too, once they listed the tools), paging past page one, windows that say
 * what is left, confirmations of deletes and of cancels on a protected branch, read-only refusing the writes.
 */
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectSdkClients, startTokenStack, type Stack } from '../mcp.testkit.ts';

type Json = Record<string, unknown>;
interface ToolResult {
  isError?: boolean;
  structuredContent?: unknown;
  content?: { type: string; uri?: string; mimeType?: string }[];
}
interface Session {
  era: string;
  call(name: string, args?: Record<string, unknown>): Promise<ToolResult>;
  /** The structured value of a successful call, validated against the advertised outputSchema. */
  ok(name: string, args?: Record<string, unknown>): Promise<Json>;
  tools: { name: string; outputSchema?: unknown }[];
  close(): Promise<void>;
}

const ALL_TOOLSETS = ['core', 'issues', 'merge_requests', 'repository', 'ci', 'releases'];
const ajv = new Ajv2020({ strict: false, allErrors: true });

let stack: Stack;
let pat = '';
let project = '';

beforeAll(async () => {
  ({ stack, pat } = await startTokenStack({ toolSurface: { toolsets: ALL_TOOLSETS, denied: [], readOnly: false } }));
  project = `${stack.forge.user.username}/hello-forge`;
});
afterAll(async () => {
  await stack.close();
});

async function session(era: 'v1' | 'v2', bearer = pat, headers: Record<string, string> = {}): Promise<Session> {
  const url = new URL(`${stack.url}/mcp`);
  const requestInit = { headers: { authorization: `Bearer ${bearer}`, ...headers } };
  let call: (name: string, args: Record<string, unknown>) => Promise<ToolResult>;
  let close: () => Promise<void>;
  let tools: Session['tools'];
  if (era === 'v1') {
    const client = new Client({ name: 'repo-ci-v1', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit }));
    tools = (await client.listTools()).tools;
    call = async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult;
    close = () => client.close();
  } else {
    const client = new V2Client({ name: 'repo-ci-v2', version: '1' });
    await client.connect(new V2Transport(url, { requestInit }));
    tools = (await client.listTools()).tools;
    call = async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult;
    close = () => client.close();
  }
  const validators = new Map(tools.map((t) => [t.name, ajv.compile(t.outputSchema ?? {})]));
  const s: Session = {
    era,
    tools,
    call: (name, args = {}) => call(name, args),
    async ok(name, args = {}) {
      const result = await call(name, args);
      expect(result.isError, `${era} ${name}: ${JSON.stringify(result.structuredContent)}`).toBeFalsy();
      const validate = validators.get(name);
      expect(validate, `${name} listed`).toBeDefined();
      expect(validate?.(result.structuredContent), `${era} ${name}: ${ajv.errorsText(validate?.errors)}`).toBe(true);
      return result.structuredContent as Json;
    },
    close,
  };
  return s;
}

/** Runs `body` with a v1 and a v2 client, one after the other. */
async function withBoth(body: (s: Session) => Promise<void>): Promise<void> {
  for (const era of ['v1', 'v2'] as const) {
    const s = await session(era);
    try {
      await body(s);
    } finally {
      await s.close();
    }
  }
}

const errorOf = (result: ToolResult) => (result.structuredContent as { error?: Json } | undefined)?.error;

describe('repository toolset', () => {
  it('[REPO-FILE-WINDOW] reads a file in line windows until next_offset is null, a binary file as metadata and a resource link', async () => {
    await withBoth(async (s) => {
      const lines: string[] = [];
      let offset: number | null = 0;
      let windows = 0;
      while (offset !== null) {
        const w = await s.ok('get_repository_file', { project_id: project, file_path: 'data/words.txt', offset, limit: 1000 });
        windows += 1;
        expect(w.total_lines).toBe(2500);
        expect(w.start_line).toBe(offset + 1);
        expect(w.truncated).toBe(w.next_offset !== null);
        lines.push(...String(w.content).split('\n').filter(Boolean));
        offset = w.next_offset as number | null;
      }
      expect(windows).toBe(3);
      expect(lines).toHaveLength(2500);
      expect(lines[0]).toBe('word-0001');
      expect(lines[2499]).toBe('word-2500');

      const logo = await s.call('get_repository_file', { project_id: project, file_path: 'assets/logo.png', ref: 'main' });
      const value = logo.structuredContent as Json;
      expect(value).toMatchObject({ binary: true, mime_type: 'image/png', truncated: false, next_offset: null });
      expect(value).not.toHaveProperty('content');
      const link = logo.content?.find((c) => c.type === 'resource_link');
      expect(link).toMatchObject({ uri: value.resource_uri, mimeType: 'image/png' });

      const blamed = await s.ok('get_repository_file', { project_id: project, file_path: 'src/greet.ts', blame: true });
      const ranges = blamed.blame as { start_line: number; end_line: number; commit: { title: string } }[];
      expect(ranges.map((r) => r.commit.title)).toEqual(['Add a greeting module', 'Fix the greeting punctuation', 'Add a greeting module']);
      expect(ranges.at(-1)?.end_line).toBe(blamed.total_lines);

      const missing = await s.call('get_repository_file', { project_id: project, file_path: 'nope.txt' });
      expect(errorOf(missing)).toMatchObject({ type: 'not_found', status: 404 });
    });
  });

  it('[REPO-TOOLS] tree, commits, one commit with its patch, compare and branches, paged past page one', async () => {
    await withBoth(async (s) => {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (;;) {
        const page = await s.ok('list_repository_tree', { project_id: project, path: 'docs', per_page: 10, ...(cursor ? { cursor } : {}) });
        seen.push(...(page.items as { path: string }[]).map((e) => e.path));
        if (!page.has_more) break;
        cursor = page.next_cursor as string;
      }
      expect(seen).toHaveLength(25);
      expect(new Set(seen).size).toBe(25);

      const first = await s.ok('list_commits', { project_id: project, ref_name: 'main', per_page: 2 });
      expect(first).toMatchObject({ has_more: true, total: 5 });
      const second = await s.ok('list_commits', { project_id: project, ref_name: 'main', per_page: 2, cursor: first.next_cursor });
      expect((second.items as { title: string }[]).map((c) => c.title)).toEqual([
        'Import the legacy deploy script',
        'Add a greeting module',
      ]);
      const touching = await s.ok('list_commits', { project_id: project, path: 'src/greet.ts', with_stats: true });
      expect((touching.items as { stats?: unknown }[]).every((c) => c.stats !== undefined)).toBe(true);
      expect(touching.items).toHaveLength(2);

      const head = (first.items as { id: string }[])[0]?.id ?? '';
      const commit = await s.ok('get_commit', { project_id: project, sha: head, include_diff: true });
      expect(commit).toMatchObject({ id: head, stats: { additions: 3, deletions: 0 }, status: 'failed', has_more: false });
      expect(commit.diffs).toEqual([
        expect.objectContaining({ new_path: 'scripts/deploy.sh', new_file: true, diff: expect.stringContaining('+set -eu') as unknown }),
      ]);
      const capped = await s.ok('get_commit', {
        project_id: 'tess/none'.replace('tess/none', project),
        sha: 'readme',
        include_diff: true,
        max_file_bytes: 1000,
      });
      expect((capped.diffs as { diff_bytes: number }[])[0]?.diff_bytes).toBeGreaterThan(0);

      // Comparing refs: get_commit with from (the head commit, then the range).
      const compared = await s.ok('get_commit', { project_id: project, from: 'import', sha: 'readme', per_page: 1 });
      expect(compared).toMatchObject({ total_commits: 3, same_ref: false, has_more: true });
      expect(compared.id).toMatch(/^[0-9a-f]{40}$/);
      const rest = await s.ok('get_commit', {
        project_id: project,
        from: 'import',
        sha: 'readme',
        per_page: 1,
        cursor: compared.next_cursor,
      });
      expect(rest.commits).toEqual([]);
      expect((rest.diffs as unknown[]).length).toBe(1);

      const branches = await s.ok('list_branches', { project_id: project });
      expect(branches.items).toEqual([
        expect.objectContaining({ name: 'import', merged: true, protected: false }),
        expect.objectContaining({ name: 'main', default: true, protected: true }),
        expect.objectContaining({ name: 'readme', merged: false }),
      ]);
    });
  });

  it('[REPO-COMMIT] commits several actions on a new branch, edits by exact old/new text, refuses an ambiguous edit', async () => {
    await withBoth(async (s) => {
      const branch = `edit-${s.era}`;
      const made = await s.ok('add_commit', {
        project_id: project,
        branch,
        start_branch: 'main',
        commit_message: 'Tidy the greeting',
        actions: [
          { action: 'update', file_path: 'src/greet.ts', old: 'Hello, ${name}!', new: 'Hi, ${name}!' },
          { action: 'create', file_path: 'docs/new.md', content: '# New\n' },
          { action: 'move', file_path: 'scripts/ship.sh', previous_path: 'scripts/deploy.sh' },
        ],
      });
      expect(made).toMatchObject({ branch, title: 'Tidy the greeting', stats: { additions: 2, deletions: 1 } });
      const file = await s.ok('get_repository_file', { project_id: project, file_path: 'src/greet.ts', ref: branch });
      expect(file.content).toContain('Hi, ${name}!');
      const twice = await s.call('add_commit', {
        project_id: project,
        branch,
        commit_message: 'x',
        actions: [{ action: 'update', file_path: 'README.md', old: 'forge', new: 'x' }],
      });
      expect(errorOf(twice)).toMatchObject({ type: 'validation', status: 0 });
      expect(String(errorOf(twice)?.message)).toMatch(/more than once/);

      const created = await s.ok('save_branch', {
        project_id: project,
        branch: `${branch}-b`,
        ref: branch,
        protected: true,
        access_level: 'no_one',
      });
      expect(created).toMatchObject({ created: true, protected: true });
      const unprotected = await s.ok('save_branch', { project_id: project, branch: `${branch}-b`, protected: false });
      expect(unprotected).toMatchObject({ created: false, protected: false });
    });
  });

  it('[TOOL-CONFIRM] deleting a branch, a tag or files asks first with a token bound to the exact arguments', async () => {
    await withBoth(async (s) => {
      const branch = `doomed-${s.era}`;
      await s.ok('save_branch', { project_id: project, branch, ref: 'main' });
      const asked = await s.ok('save_branch', { project_id: project, branch, delete: true });
      const question = asked.confirmation_required as { token: string; summary: string };
      expect(question.summary).toContain(branch);
      expect((await s.ok('list_branches', { project_id: project, search: branch })).items).toHaveLength(1);
      const other = await s.call('save_branch', {
        project_id: project,
        branch: 'readme',
        delete: true,
        confirmation_token: question.token,
      });
      expect(errorOf(other), JSON.stringify(errorOf(other))).toMatchObject({ type: 'forbidden' });
      const done = await s.ok('save_branch', { project_id: project, branch, delete: true, confirmation_token: question.token });
      expect(done).toMatchObject({ deleted: true, name: branch });
      expect((await s.ok('list_branches', { project_id: project, search: branch })).items).toHaveLength(0);

      const deleting = await s.ok('add_commit', {
        project_id: project,
        branch: 'readme',
        commit_message: 'Drop a guide',
        actions: [{ action: 'delete', file_path: `docs/guide-0${s.era === 'v1' ? 1 : 2}.md` }],
      });
      expect(deleting).toHaveProperty('confirmation_required');

      await s.ok('add_tag', { project_id: project, tag_name: `t-${s.era}`, ref: 'main', message: 'tagged' });
      const tags = await s.ok('list_tags', { project_id: project, search: `t-${s.era}` });
      expect(tags.items).toEqual([expect.objectContaining({ name: `t-${s.era}`, message: 'tagged' })]);
      const tagQuestion = (await s.ok('delete_tag', { project_id: project, tag_name: `t-${s.era}` })).confirmation_required as {
        token: string;
      };
      expect(
        await s.ok('delete_tag', { project_id: project, tag_name: `t-${s.era}`, confirmation_token: tagQuestion.token }),
      ).toMatchObject({
        deleted: true,
      });
      // The same tag again: the used token does not delete it a second time.
      await s.ok('add_tag', { project_id: project, tag_name: `t-${s.era}`, ref: 'main', message: 'tagged' });
      const replay = await s.call('delete_tag', { project_id: project, tag_name: `t-${s.era}`, confirmation_token: tagQuestion.token });
      expect(errorOf(replay)).toMatchObject({ type: 'forbidden' });
    });
  });
});

describe('ci toolset', () => {
  it('[CI-TOOLS] pipelines listed and paged, one with its failed jobs, a job log as tail, byte windows and grep', async () => {
    await withBoth(async (s) => {
      const page1 = await s.ok('list_pipelines', { project_id: project, per_page: 2 });
      expect(page1).toMatchObject({ has_more: true });
      const page2 = await s.ok('list_pipelines', { project_id: project, per_page: 2, cursor: page1.next_cursor });
      const all = [...(page1.items as Json[]), ...(page2.items as Json[])];
      expect(all.length).toBeGreaterThanOrEqual(3);
      const failed = await s.ok('list_pipelines', { project_id: project, status: 'failed' });
      const failedId = (failed.items as { id: number }[])[0]?.id;
      const pipeline = await s.ok('get_pipeline', { project_id: project, pipeline_id: failedId, job_status: ['failed'] });
      expect(pipeline).toMatchObject({
        status: 'failed',
        ref: 'main',
        jobs: [expect.objectContaining({ name: 'test', failure_reason: 'script_failure' })],
      });
      const jobId = (pipeline.jobs as { id: number }[])[0]?.id ?? 0;

      const tail = await s.ok('get_job', { project_id: project, job_id: jobId, include_log: true, tail_lines: 3 });
      const log = tail.log as Json;
      expect(String(log.text).trimEnd().split('\n')).toEqual(['# pass 1500', '# fail 1', 'ERROR: Job failed: exit code 1']);
      expect(String(log.text)).not.toContain(String.fromCharCode(27));
      expect(String(log.text)).not.toContain('section_');
      expect(log).toMatchObject({ available: true, truncated: true });

      let offset: number | null = 0;
      let text = '';
      let windows = 0;
      while (offset !== null) {
        const w = (
          await s.ok('get_job', { project_id: project, job_id: jobId, include_log: true, byte_offset: offset, byte_limit: 20_000 })
        ).log as Json;
        text += String(w.text);
        offset = w.next_byte_offset as number | null;
        windows += 1;
      }
      expect(windows).toBeGreaterThan(1);
      expect(Buffer.byteLength(text)).toBe(log.total_bytes);

      const grep = (
        await s.ok('get_job', { project_id: project, job_id: jobId, include_log: true, grep: 'assertionerror|not ok', context_lines: 2 })
      ).log as Json;
      expect(grep.total_matches).toBe(2);
      expect((grep.matches as { line: string; after: string[] }[])[1]).toMatchObject({
        line: expect.stringContaining('AssertionError') as unknown,
        after: ['  + actual - expected', "  + 'Hello, world'"],
      });

      const pending = await s.ok('get_pipeline', {
        project_id: project,
        pipeline_id: (all.find((p) => p.status === 'running') as { id: number }).id,
      });
      const lintJob = (pending.jobs as { id: number; name: string }[]).find((j) => j.name === 'lint');
      const noLog = await s.ok('get_job', { project_id: project, job_id: lintJob?.id, include_log: true });
      expect(noLog.log).toMatchObject({ available: false, total_bytes: 0 });
    });
  });

  it('[CI-WRITES] runs a pipeline with variables, retries failed jobs, cancels (asking first on a protected branch), lints', async () => {
    await withBoth(async (s) => {
      // GitLab's save_pipeline name: an alias of manage_pipeline, whose action defaults to create.
      const viaAlias = await s.call('save_pipeline', {
        project_id: project,
        ref: 'readme',
        variables: [{ key: 'DEPLOY', value: 'no' }],
      });
      expect(viaAlias.isError, JSON.stringify(viaAlias.structuredContent)).toBeFalsy();
      const run = (viaAlias.structuredContent as Json).pipeline as { id: number };
      expect(run).toMatchObject({ ref: 'readme', status: 'pending', source: 'api' });
      const canceled = await s.ok('manage_pipeline', { project_id: project, action: 'cancel', pipeline_id: run.id });
      expect(canceled.pipeline).toMatchObject({ id: run.id, status: 'canceled' });
      const retried = await s.ok('manage_pipeline', { project_id: project, action: 'retry', pipeline_id: run.id });
      expect(retried.pipeline).toMatchObject({ id: run.id, status: 'pending' });

      const onMain = (await s.ok('manage_pipeline', { project_id: project, action: 'create', ref: 'main' })).pipeline as { id: number };
      const asked = await s.ok('manage_pipeline', { project_id: project, action: 'cancel', pipeline_id: onMain.id });
      const token = (asked.confirmation_required as { token: string }).token;
      expect((await s.ok('get_pipeline', { project_id: project, pipeline_id: onMain.id })).status).toBe('pending');
      const done = await s.ok('manage_pipeline', {
        project_id: project,
        action: 'cancel',
        pipeline_id: onMain.id,
        confirmation_token: token,
      });
      expect(done.pipeline).toMatchObject({ status: 'canceled' });

      const invalid = await s.ok('lint_ci_config', { project_id: project, content: 'build:\n  stage: nowhere\n  script: make\n' });
      expect(invalid).toMatchObject({ valid: false });
      expect((invalid.errors as string[])[0]).toContain('chosen stage nowhere does not exist');
      const own = await s.ok('lint_ci_config', { project_id: project, include_jobs: true });
      expect(own).toMatchObject({ valid: true, errors: [] });
      expect((own.jobs as { name: string }[]).map((j) => j.name)).toEqual(['build', 'test', 'lint', 'deploy']);
      const bad = await s.call('manage_pipeline', { project_id: project, ref: 'no-such-branch' });
      expect(errorOf(bad)).toMatchObject({ type: 'validation', status: 400 });
    });
  });
});

describe('read-only', () => {
  const WRITES = ['add_commit', 'save_branch', 'save_pipeline', 'manage_pipeline', 'add_tag', 'delete_tag'];

  it('[TOOL-READONLY] a read-only surface lists none of the writes and refuses each when called; a read_api token gets insufficient_scope', async () => {
    for (const era of ['v1', 'v2'] as const) {
      const s = await session(era, pat, { 'x-mcp-readonly': 'true' });
      try {
        const names = s.tools.map((t) => t.name);
        for (const write of WRITES) {
          expect(names).not.toContain(write);
          const refused = await s.call(write, { project_id: project }).then(
            (r) => r,
            (error: unknown) => ({ isError: true, structuredContent: { thrown: String(error) } }),
          );
          expect(refused.isError, `${era} ${write}`).toBe(true);
        }
        expect(names).toContain('get_repository_file');
      } finally {
        await s.close();
      }
    }
    const readApi = stack.forge.forge.createPersonalAccessToken(stack.forge.user.username, ['read_api']);
    const s = await session('v2', readApi);
    try {
      const refused = await s.call('save_branch', { project_id: project, branch: 'x-readonly', ref: 'main' });
      expect(errorOf(refused)).toMatchObject({ type: 'insufficient_scope', status: 403 });
      expect((await s.ok('list_branches', { project_id: project })).items).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'main' })]) as unknown,
      );
    } finally {
      await s.close();
    }
  });
});

describe('resources, prompts and completions', () => {
  it('[MCP-RESOURCES] files at a ref and job logs are resource templates; a tool’s resource link reads back; a missing file is not found', async () => {
    for (const client of await connectSdkClients(stack.url, pat)) {
      try {
        const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
        expect(templates).toEqual(['forge://projects/{project}/files/{ref}/{+path}', 'forge://projects/{project}/jobs/{job_id}/log']);
        const linked = (await client.callTool({
          name: 'get_repository_file',
          arguments: { project_id: project, file_path: 'assets/logo.png' },
        })) as ToolResult;
        const uri = linked.content?.find((c) => c.type === 'resource_link')?.uri ?? '';
        const logo = (await client.readResource({ uri })).contents[0] as { blob?: string; mimeType?: string };
        expect(logo.mimeType).toBe('image/png');
        expect(
          Buffer.from(logo.blob ?? '', 'base64')
            .subarray(1, 4)
            .toString(),
        ).toBe('PNG');
        const encoded = encodeURIComponent(project);
        const readme = (await client.readResource({ uri: `forge://projects/${encoded}/files/readme/README.md` })).contents[0] as {
          text?: string;
        };
        expect(readme.text).toContain('## Running');
        const log = (await client.readResource({ uri: `forge://projects/${encoded}/jobs/1/log` })).contents[0] as { text?: string };
        expect(log.text).toContain('Job succeeded');
        expect(log.text).not.toContain(String.fromCharCode(27));
        await expect(client.readResource({ uri: `forge://projects/${encoded}/files/main/no/such.txt` })).rejects.toThrow();
      } finally {
        await client.close();
      }
    }
  });

  it('[MCP-PROMPTS] review_merge_request and triage_issue are listed and expand to plans naming the tools', async () => {
    for (const client of await connectSdkClients(stack.url, pat)) {
      try {
        expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['review_merge_request', 'triage_issue']);
        const review = await client.getPrompt({
          name: 'review_merge_request',
          arguments: { project, merge_request_iid: '1', focus: 'tests' },
        });
        const text = (review.messages[0]?.content as { text: string }).text;
        expect(text).toContain(`!1 of ${project}`);
        expect(text).toContain('get_merge_request');
        expect(text).toContain('weighing tests most');
        const triage = await client.getPrompt({ name: 'triage_issue', arguments: { project, issue_iid: '2' } });
        expect((triage.messages[0]?.content as { text: string }).text).toContain(`#2 of ${project}`);
      } finally {
        await client.close();
      }
    }
  });

  it('[MCP-COMPLETIONS] completes project paths and, for a project, its branches and tags', async () => {
    for (const client of await connectSdkClients(stack.url, pat)) {
      try {
        const ref = { type: 'ref/resource' as const, uri: 'forge://projects/{project}/files/{ref}/{+path}' };
        const projects = await client.complete({ ref, argument: { name: 'project', value: 'hello' } });
        expect(projects.completion.values).toEqual([project]);
        const refs = await client.complete({ ref, argument: { name: 'ref', value: 're' }, context: { arguments: { project } } });
        expect(refs.completion.values).toEqual(['readme']);
        const all = await client.complete({ ref, argument: { name: 'ref', value: '' }, context: { arguments: { project } } });
        expect(all.completion.values).toEqual(expect.arrayContaining(['main', 'import', 'readme', 'v1.0.0', 'v0.1.0']) as unknown);
        const prompt = await client.complete({
          ref: { type: 'ref/prompt', name: 'triage_issue' },
          argument: { name: 'project', value: 'hello-f' },
        });
        expect(prompt.completion.values).toEqual([project]);
      } finally {
        await client.close();
      }
    }
  });
});
