/**
 * The tool matrix's table (issue 18, tests that must exist): for every registered tool, the calls that exercise it
 * against the dev forge's seeded demo data — one entry per `include` value, `method`, search `scope` and `action`
 * of the consolidated tools, a paging entry for every tool that takes a cursor, and the confirmation flow for the
 * tools that ask first. tool-matrix.test.ts runs each entry through every client and transport and fails for a
 * tool (or a branch of one) that has no entry here, so a new tool cannot go uncovered.
 *
 * The branch values (`include`, `method`, `scope`, `action`) sit in the static `args`, where the coverage check
 * reads them; what only exists at run time (an issue to update, a branch to delete, a merge request's head sha)
 * comes from `prepare`, which makes it through the dev forge's REST API just before the call. `prepare` gets the
 * run's name, so the runs (one per client and transport) write to things of their own.
 */

import { expect } from 'vitest';

type Json = Record<string, unknown>;

/** The dev forge's REST API as the matrix's user, for what an entry needs to exist before its call. */
export interface ForgeRest {
  request(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: Json): Promise<Json & Json[]>;
}

export interface SampleContext {
  /** A short name of the run (`v2-http`, `v1-http`, `v2-stdio`, `v1-stdio`), for names that must not clash between runs. */
  run: string;
  rest: ForgeRest;
}

export interface Sample {
  /** What the entry exercises, for the test's name. */
  label: string;
  args: Json;
  /** Arguments only known at run time, made through the REST API; merged over `args`. */
  prepare?(ctx: SampleContext): Promise<Json>;
  /** The tool asks first: the first answer is `confirmation_required`, the second call carries its token. */
  confirm?: true;
  /** A paging entry: the call's page is followed by the next one through the cursor (dotted paths reach an include's page). */
  page?: { items: string; next: string; cursorArg: string };
  /**
   * Why a list answer may be empty (a list answer must otherwise hold items: a filter that matches nothing
   * exercises little). Says what the dev forge lacks, so the entry is revisited when it gains it.
   */
  empty?: string;
  /** Fields the structured value must hold (a partial match). */
  expect?: Json;
  /** Checks at the forge that the write happened (after a confirmation, not only the tool's word for it). */
  verify?(ctx: SampleContext, args: Json): Promise<void>;
}

/** The demo group's project (issues, merge requests with diffs and discussions) and the user's repository project. */
export const WEBSHOP = 'demo/webshop';
export const HELLO = 'dana/hello-forge';

const LIST = { items: 'items', next: 'next_cursor', cursorArg: 'cursor' } as const;

/** The dev forge's search (devforge.issues.ts) answers these scopes with no results: it has no index of them. */

const enc = encodeURIComponent;
const webshop = `/projects/${enc(WEBSHOP)}`;
const hello = `/projects/${enc(HELLO)}`;

async function newIssue(ctx: SampleContext, extra: Json = {}): Promise<number> {
  return (await ctx.rest.request('POST', `${webshop}/issues`, { title: `Matrix ${ctx.run}`, ...extra })).iid as number;
}

/** A fresh open merge request of the webshop, with its head sha once the forge has one. */
async function newMergeRequest(ctx: SampleContext, what: string): Promise<{ iid: number; sha: string }> {
  const made = await ctx.rest.request('POST', `${webshop}/merge_requests`, {
    source_branch: `matrix-${what}-${ctx.run}`,
    target_branch: 'main',
    title: `Matrix ${what} ${ctx.run}`,
  });
  const got = await ctx.rest.request('GET', `${webshop}/merge_requests/${String(made.iid)}`);
  return { iid: got.iid as number, sha: got.sha as string };
}

/** A resolvable thread on the webshop's first merge request. */
async function mergeRequestThread(ctx: SampleContext): Promise<string> {
  return (await ctx.rest.request('POST', `${webshop}/merge_requests/1/discussions`, { body: `Thread of ${ctx.run}` })).id as string;
}

async function newBranch(ctx: SampleContext, what: string, ref = 'main'): Promise<string> {
  const branch = `matrix-${what}-${ctx.run}`;
  await ctx.rest.request('POST', `${hello}/repository/branches`, { branch, ref });
  return branch;
}

async function newPipeline(ctx: SampleContext, ref: string): Promise<number> {
  return (await ctx.rest.request('POST', `${hello}/pipeline`, { ref })).id as number;
}

/** A release of the run's own on a new tag at main; its tag name. */
async function newRelease(ctx: SampleContext, what: string): Promise<string> {
  const tag = `matrix-${what}-release-${ctx.run}`;
  await ctx.rest.request('POST', `${hello}/releases`, { tag_name: tag, ref: 'main', name: `Matrix ${what}` });
  return tag;
}

async function newWikiPage(ctx: SampleContext, what: string): Promise<string> {
  return (await ctx.rest.request('POST', `${hello}/wikis`, { title: `matrix ${what} ${ctx.run}`, content: 'Matrix.' })).slug as string;
}

async function newWebhook(ctx: SampleContext, what: string): Promise<number> {
  return (await ctx.rest.request('POST', `${hello}/hooks`, { url: `https://matrix.example.test/${what}/${ctx.run}` })).id as number;
}

/** A failed job of the seeded pipelines (it has a log). */
async function failedJob(ctx: SampleContext): Promise<number> {
  const pipelines = await ctx.rest.request('GET', `${hello}/pipelines?status=failed`);
  const jobs = await ctx.rest.request('GET', `${hello}/pipelines/${String(pipelines[0]?.id)}/jobs?scope[]=failed`);
  return jobs[0]?.id as number;
}

/** A pipeline with more jobs than one page of get_pipeline (100): a branch whose CI configuration has 101. */
async function bigPipeline(ctx: SampleContext): Promise<number> {
  const branch = `matrix-jobs-${ctx.run}`;
  const jobs = Array.from({ length: 101 }, (_, i) => `job-${String(i)}:\n  stage: test\n  script: echo ${String(i)}\n`).join('');
  await ctx.rest.request('POST', `${hello}/repository/commits`, {
    branch,
    start_branch: 'main',
    commit_message: 'A pipeline of 101 jobs',
    actions: [{ action: 'update', file_path: '.gitlab-ci.yml', content: `stages:\n  - test\n${jobs}` }],
  });
  return newPipeline(ctx, branch);
}

export const SAMPLES: Record<string, Sample[]> = {
  // core
  get_server_info: [{ label: 'toolsets and version', args: {} }],
  get_user: [
    { label: 'the caller', args: {}, expect: { username: 'dana' } },
    { label: 'by username', args: { username: 'dana' }, expect: { username: 'dana' } },
  ],
  list_projects: [
    { label: 'member projects', args: { membership: true, detail: 'full' } },
    { label: 'paging', args: { per_page: 1 }, page: LIST },
  ],
  get_project: [
    { label: 'by path', args: { project_id: HELLO }, expect: { path_with_namespace: HELLO } },
    { label: 'by web URL', args: {}, prepare: async (ctx) => ({ project_id: (await ctx.rest.request('GET', webshop)).web_url }) },
  ],
  search: [
    { label: 'scope=projects, global', args: { scope: 'projects', search: 'hello' } },
    { label: 'scope=issues, group', args: { scope: 'issues', search: 'cart', group_id: 'demo' } },
    { label: 'scope=merge_requests, project', args: { scope: 'merge_requests', search: 'cart', project_id: WEBSHOP } },
    { label: 'scope=notes', args: { scope: 'notes', search: 'reducer', project_id: WEBSHOP } },
    { label: 'scope=blobs', args: { scope: 'blobs', search: 'greet', project_id: HELLO } },
    { label: 'scope=commits', args: { scope: 'commits', search: 'greeting', project_id: HELLO } },
    { label: 'scope=wiki_blobs', args: { scope: 'wiki_blobs', search: 'deploy', project_id: HELLO } },
    { label: 'scope=users', args: { scope: 'users', search: 'dana' } },
    { label: 'scope=milestones', args: { scope: 'milestones', search: 'v1', project_id: HELLO } },
    { label: 'paging', args: { scope: 'issues', search: 'the', per_page: 1 }, page: LIST },
  ],
  search_labels: [
    { label: 'a project', args: { project_id: WEBSHOP } },
    { label: 'paging', args: { project_id: WEBSHOP, per_page: 1 }, page: LIST },
  ],

  // issues
  list_issues: [
    { label: 'filters', args: { project_id: WEBSHOP, state: 'all', order_by: 'updated_at', sort: 'asc', detail: 'full' } },
    { label: 'paging', args: { project_id: WEBSHOP, per_page: 1 }, page: LIST },
  ],
  get_issue: [
    { label: 'bare', args: { project_id: WEBSHOP, issue_iid: 1 } },
    { label: 'include=notes', args: { project_id: WEBSHOP, issue_iid: 1, include: ['notes'] } },
    { label: 'include=discussions', args: { project_id: WEBSHOP, issue_iid: 1, include: ['discussions'] } },
    { label: 'include=links', args: { project_id: WEBSHOP, issue_iid: 1, include: ['links'] } },
    { label: 'include=related_merge_requests', args: { project_id: WEBSHOP, issue_iid: 1, include: ['related_merge_requests'] } },
    {
      label: 'paging its notes',
      args: { project_id: WEBSHOP, include: ['notes'] },
      prepare: async (ctx) => {
        const iid = await newIssue(ctx);
        for (let i = 0; i < 21; i += 1) await ctx.rest.request('POST', `${webshop}/issues/${iid}/notes`, { body: `Note ${i}` });
        return { issue_iid: iid };
      },
      page: { items: 'notes.items', next: 'notes.next_cursor', cursorArg: 'include_cursor' },
    },
  ],
  save_issue: [
    { label: 'create', args: { project_id: WEBSHOP, title: 'Matrix: a new issue', labels: 'matrix', assignee_usernames: ['dana'] } },
    {
      label: 'update and close',
      args: { project_id: WEBSHOP, add_labels: ['triaged'], state_event: 'close' },
      prepare: async (ctx) => ({ issue_iid: await newIssue(ctx) }),
      expect: { state: 'closed' },
    },
    {
      label: 'make a confidential issue public (asks first)',
      args: { project_id: WEBSHOP, confidential: false },
      prepare: async (ctx) => ({ issue_iid: await newIssue(ctx, { confidential: true }) }),
      confirm: true,
      verify: async (ctx, args) => {
        expect(await ctx.rest.request('GET', `${webshop}/issues/${String(args.issue_iid)}`)).toMatchObject({ confidential: false });
      },
    },
  ],
  save_issue_note: [
    { label: 'a note', args: { project_id: WEBSHOP, issue_iid: 1, body: 'Matrix note.' } },
    {
      label: 'a reply in a discussion',
      args: { project_id: WEBSHOP, issue_iid: 1, body: 'Matrix reply.' },
      prepare: async (ctx) => {
        const thread = await ctx.rest.request('POST', `${webshop}/issues/1/discussions`, { body: `Thread of ${ctx.run}` });
        return { discussion_id: thread.id };
      },
    },
  ],

  // merge_requests
  list_merge_requests: [
    { label: 'filters', args: { project_id: WEBSHOP, state: 'opened', target_branch: 'main', detail: 'full' } },
    { label: 'paging', args: { project_id: WEBSHOP, state: 'all', per_page: 1 }, page: LIST },
  ],
  get_merge_request: [
    { label: 'bare', args: { project_id: WEBSHOP, merge_request_iid: 1 } },
    ...['notes', 'discussions', 'diffs', 'commits', 'pipelines', 'approvals', 'versions'].map((include) => ({
      label: `include=${include}`,
      args: { project_id: WEBSHOP, merge_request_iid: 1, include: [include] },
    })),
    {
      label: 'paging its notes',
      args: { project_id: WEBSHOP, include: ['notes'] },
      prepare: async (ctx) => {
        const { iid } = await newMergeRequest(ctx, 'notes');
        for (let i = 0; i < 21; i += 1) await ctx.rest.request('POST', `${webshop}/merge_requests/${iid}/notes`, { body: `Note ${i}` });
        return { merge_request_iid: iid };
      },
      page: { items: 'notes.items', next: 'notes.next_cursor', cursorArg: 'include_cursor' },
    },
  ],
  get_merge_request_diffs: [
    { label: 'path filter', args: { project_id: WEBSHOP, merge_request_iid: 1, paths: ['db/**'] } },
    { label: 'paging', args: { project_id: WEBSHOP, merge_request_iid: 1, per_page: 1 }, page: LIST },
  ],
  save_merge_request: [
    {
      label: 'create',
      args: { target_branch: 'main', title: 'Matrix: a new merge request', project_id: WEBSHOP },
      prepare: async (ctx) => ({ source_branch: `matrix-new-${ctx.run}` }),
    },
    {
      label: 'update',
      args: { project_id: WEBSHOP, title: 'Matrix: renamed', add_labels: ['matrix'] },
      prepare: async (ctx) => ({ merge_request_iid: (await newMergeRequest(ctx, 'update')).iid }),
      expect: { title: 'Matrix: renamed' },
    },
    {
      label: 'rebase',
      args: { project_id: WEBSHOP, rebase: true },
      prepare: async (ctx) => ({ merge_request_iid: (await newMergeRequest(ctx, 'rebase')).iid }),
      expect: { rebase_in_progress: true },
    },
  ],
  save_merge_request_review: [
    { label: 'method=create_note', args: { project_id: WEBSHOP, merge_request_iid: 1, method: 'create_note', body: 'Matrix note.' } },
    {
      label: 'method=create_diff_note',
      args: {
        project_id: WEBSHOP,
        merge_request_iid: 1,
        method: 'create_diff_note',
        body: 'Matrix line note.',
        new_path: 'src/cart/total.ts',
        new_line: 3,
      },
    },
    {
      label: 'method=reply_discussion',
      args: { project_id: WEBSHOP, merge_request_iid: 1, method: 'reply_discussion', body: 'Matrix reply.' },
      prepare: async (ctx) => ({ discussion_id: await mergeRequestThread(ctx) }),
    },
    {
      label: 'method=resolve_discussion',
      args: { project_id: WEBSHOP, merge_request_iid: 1, method: 'resolve_discussion' },
      prepare: async (ctx) => ({ discussion_id: await mergeRequestThread(ctx) }),
    },
    {
      label: 'method=submit_review',
      args: {
        project_id: WEBSHOP,
        merge_request_iid: 1,
        method: 'submit_review',
        comments: [{ body: 'Matrix draft on a line.', new_path: 'src/cart/total.ts', new_line: 3 }, { body: 'Matrix draft.' }],
        summary: 'Matrix review.',
      },
      expect: { published: 2 },
    },
    {
      label: 'method=approve',
      args: { project_id: WEBSHOP, method: 'approve' },
      prepare: async (ctx) => ({ merge_request_iid: (await newMergeRequest(ctx, 'approve')).iid }),
      expect: { approved: true },
    },
    {
      label: 'method=unapprove',
      args: { project_id: WEBSHOP, method: 'unapprove' },
      prepare: async (ctx) => {
        const { iid } = await newMergeRequest(ctx, 'unapprove');
        await ctx.rest.request('POST', `${webshop}/merge_requests/${String(iid)}/approve`);
        return { merge_request_iid: iid };
      },
    },
  ],
  accept_merge_request: [
    {
      label: 'merge (asks first)',
      args: { project_id: WEBSHOP },
      prepare: async (ctx) => {
        const { iid, sha } = await newMergeRequest(ctx, 'merge');
        return { merge_request_iid: iid, sha };
      },
      confirm: true,
      expect: { status: 'merged' },
      verify: async (ctx, args) => {
        expect(await ctx.rest.request('GET', `${webshop}/merge_requests/${String(args.merge_request_iid)}`)).toMatchObject({
          state: 'merged',
        });
      },
    },
  ],

  // repository
  get_repository_file: [
    {
      label: 'a line window',
      args: { project_id: HELLO, file_path: 'data/words.txt', offset: 10, limit: 5 },
      expect: { total_lines: 2500 },
    },
    { label: 'a binary file', args: { project_id: HELLO, file_path: 'assets/logo.png', ref: 'main' }, expect: { binary: true } },
    { label: 'blame', args: { project_id: HELLO, file_path: 'src/greet.ts', blame: true } },
  ],
  list_repository_tree: [
    { label: 'recursive', args: { project_id: HELLO, recursive: true } },
    { label: 'paging', args: { project_id: HELLO, path: 'docs', per_page: 3 }, page: LIST },
  ],
  list_commits: [
    { label: 'a path, with stats', args: { project_id: HELLO, path: 'src/greet.ts', with_stats: true } },
    { label: 'paging', args: { project_id: HELLO, ref_name: 'main', per_page: 1 }, page: LIST },
  ],
  get_commit: [
    { label: 'stats only', args: { project_id: HELLO, sha: 'main' } },
    {
      label: 'paging its diff',
      args: { project_id: HELLO, include_diff: true, per_page: 1 },
      // The initial commit: six files.
      prepare: async (ctx) => ({
        sha: (await ctx.rest.request('GET', `${hello}/repository/commits?ref_name=main&per_page=100`)).at(-1)?.id,
      }),
      page: { items: 'diffs', next: 'next_cursor', cursorArg: 'cursor' },
    },
    { label: 'compared from the merge base', args: { project_id: HELLO, from: 'import', sha: 'readme' } },
    { label: 'compared straight', args: { project_id: HELLO, from: 'import', sha: 'readme', straight: true } },
    {
      label: 'paging a comparison',
      args: { project_id: HELLO, from: 'import', sha: 'readme', per_page: 1 },
      page: { items: 'diffs', next: 'next_cursor', cursorArg: 'cursor' },
    },
  ],
  add_commit: [
    {
      label: 'action=create, update, move and chmod on a new branch',
      args: {
        project_id: HELLO,
        start_branch: 'main',
        commit_message: 'Matrix: several actions',
        actions: [
          { action: 'create', file_path: 'matrix/new.txt', content: 'new\n' },
          { action: 'update', file_path: 'src/greet.ts', old: 'Hello', new: 'Hi' },
          { action: 'move', previous_path: 'docs/guide-01.md', file_path: 'docs/moved-01.md' },
          { action: 'chmod', file_path: 'src/app.ts', execute_filemode: true },
        ],
      },
      prepare: async (ctx) => ({ branch: `matrix-commit-${ctx.run}` }),
    },
    {
      label: 'action=delete (asks first)',
      args: { project_id: HELLO, commit_message: 'Matrix: delete a file', actions: [{ action: 'delete', file_path: 'README.md' }] },
      prepare: async (ctx) => ({ branch: await newBranch(ctx, 'rm') }),
      confirm: true,
      verify: async (ctx, args) => {
        await expect(ctx.rest.request('GET', `${hello}/repository/files/README.md?ref=${enc(String(args.branch))}`)).rejects.toThrow(
          /: 404 /,
        );
      },
    },
  ],
  list_branches: [
    { label: 'search', args: { project_id: HELLO, search: 'ma' } },
    { label: 'paging', args: { project_id: HELLO, per_page: 1 }, page: LIST },
  ],
  save_branch: [
    { label: 'create', args: { project_id: HELLO, ref: 'main' }, prepare: async (ctx) => ({ branch: `matrix-made-${ctx.run}` }) },
    {
      label: 'protect',
      args: { project_id: HELLO, protected: true, access_level: 'developer' },
      prepare: async (ctx) => ({ branch: await newBranch(ctx, 'protect') }),
      expect: { protected: true },
      // The one access_level is both the push and the merge level (GitLab's 30 is Developer).
      verify: async (ctx, args) => {
        expect(await ctx.rest.request('GET', `${hello}/protected_branches/${enc(String(args.branch))}`)).toMatchObject({
          push_access_levels: [{ access_level: 30 }],
          merge_access_levels: [{ access_level: 30 }],
        });
      },
    },
    {
      label: 'delete (asks first)',
      args: { project_id: HELLO, delete: true },
      prepare: async (ctx) => ({ branch: await newBranch(ctx, 'del') }),
      confirm: true,
      verify: async (ctx, args) => {
        await expect(ctx.rest.request('GET', `${hello}/repository/branches/${enc(String(args.branch))}`)).rejects.toThrow(/: 404 /);
      },
    },
  ],

  // ci
  list_pipelines: [
    { label: 'status filter', args: { project_id: HELLO, status: 'failed' } },
    { label: 'paging', args: { project_id: HELLO, per_page: 1 }, page: LIST },
  ],
  get_pipeline: [
    {
      label: 'failed jobs',
      args: { project_id: HELLO, job_status: ['failed'] },
      prepare: async (ctx) => ({ pipeline_id: (await ctx.rest.request('GET', `${hello}/pipelines?status=failed`))[0]?.id }),
    },
    {
      label: 'paging its jobs',
      args: { project_id: HELLO },
      prepare: async (ctx) => ({ pipeline_id: await bigPipeline(ctx) }),
      page: { items: 'jobs', next: 'jobs_next_cursor', cursorArg: 'jobs_cursor' },
    },
  ],
  manage_pipeline: [
    {
      label: 'action=create with variables',
      args: { project_id: HELLO, action: 'create', ref: 'readme', variables: [{ key: 'MATRIX', value: 'yes' }] },
      expect: { pipeline: { ref: 'readme' } },
    },
    {
      label: 'action=retry',
      args: { project_id: HELLO, action: 'retry' },
      // A pipeline of its own, cancelled: retrying the seeded failed one would leave the other runs none to read.
      prepare: async (ctx) => {
        const id = await newPipeline(ctx, 'readme');
        await ctx.rest.request('POST', `${hello}/pipelines/${String(id)}/cancel`);
        return { pipeline_id: id };
      },
    },
    {
      label: 'action=cancel',
      args: { project_id: HELLO, action: 'cancel' },
      prepare: async (ctx) => ({ pipeline_id: await newPipeline(ctx, 'readme') }),
    },
    {
      label: 'action=cancel on a protected branch (asks first)',
      args: { project_id: HELLO, action: 'cancel' },
      prepare: async (ctx) => ({ pipeline_id: await newPipeline(ctx, 'main') }),
      confirm: true,
      verify: async (ctx, args) => {
        expect(await ctx.rest.request('GET', `${hello}/pipelines/${String(args.pipeline_id)}`)).toMatchObject({ status: 'canceled' });
      },
    },
  ],
  get_job: [
    {
      label: 'log tail',
      args: { project_id: HELLO, include_log: true, tail_lines: 3 },
      prepare: async (ctx) => ({ job_id: await failedJob(ctx) }),
    },
    {
      label: 'log grep',
      args: { project_id: HELLO, include_log: true, grep: 'error', context_lines: 1 },
      prepare: async (ctx) => ({ job_id: await failedJob(ctx) }),
    },
  ],
  lint_ci_config: [
    {
      label: 'given content',
      args: { project_id: HELLO, content: 'build:\n  stage: nowhere\n  script: make\n' },
      expect: { valid: false },
    },
    { label: 'the project’s own', args: { project_id: HELLO, include_jobs: true }, expect: { valid: true } },
  ],

  // releases (opt-in)
  list_releases: [
    { label: 'by creation, oldest first', args: { project_id: HELLO, order_by: 'created_at', sort: 'asc' } },
    {
      label: 'paging',
      args: { project_id: HELLO, per_page: 1 },
      // The seed has one release: each run adds one of its own, so there is a page two.
      prepare: async (ctx) => {
        await newRelease(ctx, 'page');
        return {};
      },
      page: LIST,
    },
  ],
  get_release: [{ label: 'the seeded one', args: { project_id: HELLO, tag_name: 'v1.0.0' }, expect: { milestones: ['v1.0'] } }],
  save_release: [
    {
      label: 'create, with a new tag',
      args: { project_id: HELLO, ref: 'main', tag_message: 'Matrix', description: 'Matrix notes.', milestones: ['v1.1'] },
      prepare: async (ctx) => ({ tag_name: `matrix-release-${ctx.run}` }),
      expect: { created: true, milestones: ['v1.1'] },
      verify: async (ctx, args) => {
        expect(await ctx.rest.request('GET', `${hello}/releases/${enc(String(args.tag_name))}`)).toMatchObject({
          description: 'Matrix notes.',
        });
      },
    },
    {
      label: 'update',
      args: { project_id: HELLO, name: 'Matrix renamed', description: 'New notes.' },
      prepare: async (ctx) => ({ tag_name: await newRelease(ctx, 'update') }),
      expect: { created: false, name: 'Matrix renamed', description: 'New notes.' },
    },
  ],
  list_milestones: [
    { label: 'active, searched', args: { project_id: HELLO, state: 'active', search: 'v1' } },
    { label: 'paging', args: { project_id: HELLO, per_page: 2 }, page: LIST },
  ],
  save_milestone: [
    {
      label: 'create',
      args: { project_id: HELLO, description: 'Matrix.', start_date: '2026-01-01', due_date: '2026-02-01' },
      prepare: async (ctx) => ({ title: `Matrix ${ctx.run}` }),
      expect: { created: true, state: 'active', due_date: '2026-02-01' },
    },
    {
      label: 'close',
      args: { project_id: HELLO, state_event: 'close' },
      prepare: async (ctx) => {
        const made = await ctx.rest.request('POST', `${hello}/milestones`, { title: `Matrix close ${ctx.run}` });
        return { milestone_id: made.id };
      },
      expect: { created: false, state: 'closed' },
      verify: async (ctx, args) => {
        expect(await ctx.rest.request('GET', `${hello}/milestones/${String(args.milestone_id)}`)).toMatchObject({ state: 'closed' });
      },
    },
  ],
  list_tags: [
    { label: 'search', args: { project_id: HELLO, search: 'v1' } },
    { label: 'paging', args: { project_id: HELLO, per_page: 1 }, page: LIST },
  ],
  add_tag: [
    {
      label: 'annotated',
      args: { project_id: HELLO, ref: 'main', message: 'Matrix' },
      prepare: async (ctx) => ({ tag_name: `matrix-${ctx.run}` }),
    },
  ],
  delete_tag: [
    {
      label: 'delete (asks first)',
      args: { project_id: HELLO },
      prepare: async (ctx) => {
        const tag = `matrix-del-${ctx.run}`;
        await ctx.rest.request('POST', `${hello}/repository/tags`, { tag_name: tag, ref: 'main' });
        return { tag_name: tag };
      },
      confirm: true,
      verify: async (ctx, args) => {
        await expect(ctx.rest.request('GET', `${hello}/repository/tags/${enc(String(args.tag_name))}`)).rejects.toThrow(/: 404 /);
      },
    },
  ],

  // wiki (opt-in)
  list_wiki_pages: [
    { label: 'with content', args: { project_id: HELLO, with_content: true } },
    { label: 'paging', args: { project_id: HELLO, per_page: 2 }, page: LIST },
  ],
  get_wiki_page: [
    { label: 'a sub-page', args: { project_id: HELLO, slug: 'ops/deploy' }, expect: { slug: 'ops/deploy', format: 'markdown' } },
  ],
  save_wiki_page: [
    {
      label: 'create',
      args: { project_id: HELLO, content: 'Matrix page.' },
      prepare: async (ctx) => ({ title: `matrix new ${ctx.run}` }),
      expect: { created: true, content: 'Matrix page.' },
    },
    {
      label: 'update',
      args: { project_id: HELLO, content: 'Matrix, updated.', format: 'asciidoc' },
      prepare: async (ctx) => ({ slug: await newWikiPage(ctx, 'update') }),
      expect: { created: false, content: 'Matrix, updated.', format: 'asciidoc' },
      verify: async (ctx, args) => {
        expect(await ctx.rest.request('GET', `${hello}/wikis/${enc(String(args.slug))}`)).toMatchObject({ content: 'Matrix, updated.' });
      },
    },
  ],
  delete_wiki_page: [
    {
      label: 'delete (asks first)',
      args: { project_id: HELLO },
      prepare: async (ctx) => ({ slug: await newWikiPage(ctx, 'delete') }),
      confirm: true,
      expect: { deleted: true },
      verify: async (ctx, args) => {
        await expect(ctx.rest.request('GET', `${hello}/wikis/${enc(String(args.slug))}`)).rejects.toThrow(/: 404 /);
      },
    },
  ],

  // admin (opt-in)
  list_ci_variables: [
    {
      label: 'values revealed',
      args: { project_id: HELLO, reveal_values: true },
      // The plain variable's value shows; the masked ones' never do (devforge.extras.ts seeds the three).
      expect: {
        items: [
          { key: 'DEPLOY_TARGET', value: 'staging.example.test' },
          { key: 'DEPLOY_TOKEN', masked: true },
          { key: 'SIGNING_KEY', hidden: true },
        ],
      },
    },
    { label: 'paging', args: { project_id: HELLO, per_page: 2 }, page: LIST },
  ],
  list_members: [
    { label: 'inherited, by name', args: { project_id: WEBSHOP, include_inherited: true, query: 'dana' } },
    // The demo group's project has every seeded user as a member: the matrix's forge seeds a second user
    // (tool-matrix.test.ts), since GitLab's API adds members but creates no users.
    { label: 'paging', args: { project_id: WEBSHOP, per_page: 1 }, page: LIST },
  ],
  list_webhooks: [
    { label: 'the seeded one', args: { project_id: HELLO } },
    {
      label: 'paging',
      args: { project_id: HELLO, per_page: 1 },
      // The seed has one webhook: each run adds one of its own, so there is a page two.
      prepare: async (ctx) => {
        await newWebhook(ctx, 'page');
        return {};
      },
      page: LIST,
    },
  ],
  save_webhook: [
    {
      label: 'create',
      args: { project_id: HELLO, events: ['push', 'merge_requests'], token: 'matrix-secret', enable_ssl_verification: false },
      prepare: async (ctx) => ({ url: `https://matrix.example.test/${ctx.run}` }),
      expect: { created: true, events: ['push', 'merge_requests'], enable_ssl_verification: false },
    },
    {
      label: 'update',
      args: { project_id: HELLO, events: ['pipeline'], name: 'Matrix hook' },
      prepare: async (ctx) => ({ hook_id: await newWebhook(ctx, 'update') }),
      expect: { created: false, events: ['pipeline'], name: 'Matrix hook' },
      verify: async (ctx, args) => {
        expect(await ctx.rest.request('GET', `${hello}/hooks/${String(args.hook_id)}`)).toMatchObject({
          pipeline_events: true,
          push_events: false,
        });
      },
    },
  ],
};

/** The input fields whose values choose a branch of a consolidated tool: each value needs an entry. */
export const BRANCH_FIELDS = ['include', 'method', 'scope', 'action'] as const;

/**
 * A call of an alias (a tool's other name, kept callable for prompts and rules written for GitLab's server but not
 * listed) beside the call of its tool with the same arguments: the alias must answer like its target.
 */
export interface AliasSample {
  /** The tool it is an alias of. */
  target: string;
  args: Json;
  /** Arguments of the target's call only: what the alias's name implies (`save_pipeline` is `action: create`). */
  targetArgs?: Json;
  /**
   * `value`: a read, both answers are equal. `shape`: a write, each call makes a record of its own, so the answers
   * must have the same fields of the same kinds.
   */
  same: 'value' | 'shape';
  /** Fields both structured values must hold (a partial match). */
  expect?: Json;
  /** Checks at the forge that the alias's write happened. */
  verify?(ctx: SampleContext, value: Json): Promise<void>;
}

export const ALIASES: Record<string, AliasSample> = {
  get_current_user: { target: 'get_user', args: {}, same: 'value', expect: { username: 'dana' } },
  create_issue: {
    target: 'save_issue',
    args: { project_id: WEBSHOP, title: 'Matrix: through create_issue', labels: 'matrix-alias' },
    same: 'shape',
    expect: { title: 'Matrix: through create_issue', labels: ['matrix-alias'] },
    async verify(ctx, value) {
      const issue = await ctx.rest.request('GET', `${webshop}/issues/${String(value.iid)}`);
      expect(issue.title).toBe('Matrix: through create_issue');
    },
  },
  save_pipeline: {
    target: 'manage_pipeline',
    args: { project_id: HELLO, ref: 'readme', variables: [{ key: 'MATRIX_ALIAS', value: 'yes' }] },
    targetArgs: { action: 'create' },
    same: 'shape',
    expect: { pipeline: { ref: 'readme' } },
    async verify(ctx, value) {
      const pipeline = await ctx.rest.request('GET', `${hello}/pipelines/${String((value.pipeline as Json).id)}`);
      expect(pipeline.ref).toBe('readme');
    },
  },
};
