/**
 * The dev forge's repository and CI APIs against GitLab's documented examples (repository_files.md, commits.md,
 * branches.md, pipelines.md, jobs.md; mcp-facts.md 2.3): every documented field present with the documented type,
 * offset-pagination headers past page one, GitLab's error bodies, scopes and visibility.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedDevForge } from './devforge.app.ts';
import { apiCaller, expectShape, startTwoUserForge, type Kind } from './devforge.testkit.ts';

let forge: StartedDevForge;
let pat = '';
let readOnly = '';
let otto = '';
const P = 'rita%2Fhello-forge';

beforeAll(async () => {
  ({ forge, pat, readOnly, otto } = await startTwoUserForge());
});
afterAll(async () => {
  await forge.close();
});

const api = apiCaller(
  () => forge.url,
  () => pat,
);

const COMMIT: Record<string, Kind | Kind[]> = {
  id: 'string',
  short_id: 'string',
  created_at: 'string',
  parent_ids: 'array',
  title: 'string',
  message: 'string',
  author_name: 'string',
  author_email: 'string',
  authored_date: 'string',
  committer_name: 'string',
  committer_email: 'string',
  committed_date: 'string',
  trailers: 'object',
  extended_trailers: 'object',
  web_url: 'string',
};

describe('dev forge repository API', () => {
  it('answers a file as GitLab documents it, 400 without ref, 404 for a missing file', async () => {
    const file = await api(`/projects/${P}/repository/files/src%2Fgreet.ts?ref=main`);
    expect(file.status).toBe(200);
    expectShape(
      file.body,
      {
        file_name: 'string',
        file_path: 'string',
        size: 'number',
        encoding: 'string',
        content: 'string',
        content_sha256: 'string',
        ref: 'string',
        blob_id: 'string',
        commit_id: 'string',
        last_commit_id: 'string',
        execute_filemode: 'boolean',
      },
      'file',
    );
    expect(file.body).toMatchObject({ file_name: 'greet.ts', file_path: 'src/greet.ts', encoding: 'base64', ref: 'main' });
    expect(Buffer.from(String(file.body.content), 'base64').toString()).toContain('Hello, ${name}!');
    expect((await api(`/projects/${P}/repository/files/src%2Fgreet.ts`)).body).toEqual({ error: 'ref is missing' });
    expect(await api(`/projects/${P}/repository/files/nope.txt?ref=main`)).toMatchObject({
      status: 404,
      body: { message: '404 File Not Found' },
    });
    const raw = await api(`/projects/${P}/repository/files/README.md/raw?ref=readme`);
    expect(raw.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(String(raw.body)).toContain('## Running');
  });

  it('answers commits with stats, last pipeline and diffs, paged with x-total, x-next-page and Link past page one', async () => {
    const single = await api(`/projects/${P}/repository/commits/main`);
    expectShape(
      single.body,
      { ...COMMIT, stats: 'object', status: ['string', 'null'], project_id: 'number', last_pipeline: ['object', 'null'] },
      'commit',
    );
    expect(single.body.last_pipeline).toMatchObject({ status: 'failed', ref: 'main' });
    const page1 = await api(`/projects/${P}/repository/commits?ref_name=main&per_page=2`);
    expect(page1.headers.get('x-total')).toBe('5');
    expect(page1.headers.get('x-next-page')).toBe('2');
    expect(page1.headers.get('link')).toContain('rel="next"');
    const page3 = await api(`/projects/${P}/repository/commits?ref_name=main&per_page=2&page=3`);
    expect(page3.body).toHaveLength(1);
    expect(page3.headers.get('x-next-page')).toBe('');
    expect(page3.headers.get('x-prev-page')).toBe('2');
    expectShape((page3.body as unknown[])[0], COMMIT, 'commit item');
    const diff = await api(`/projects/${P}/repository/commits/main/diff`);
    expectShape(
      (diff.body as unknown[])[0],
      {
        old_path: 'string',
        new_path: 'string',
        a_mode: 'string',
        b_mode: 'string',
        new_file: 'boolean',
        renamed_file: 'boolean',
        deleted_file: 'boolean',
        diff: 'string',
      },
      'diff',
    );
    expect(await api(`/projects/${P}/repository/commits/0000000`)).toMatchObject({
      status: 404,
      body: { message: '404 Commit Not Found' },
    });
  });

  it('answers branches, protected branches and tags as documented; writes need the api scope and membership', async () => {
    const branch = await api(`/projects/${P}/repository/branches/main`);
    expectShape(
      branch.body,
      {
        name: 'string',
        merged: 'boolean',
        protected: 'boolean',
        default: 'boolean',
        developers_can_push: 'boolean',
        developers_can_merge: 'boolean',
        can_push: 'boolean',
        web_url: 'string',
        commit: 'object',
      },
      'branch',
    );
    expect(branch.body).toMatchObject({ name: 'main', protected: true, default: true, developers_can_push: false });
    expectShape(branch.body.commit, COMMIT, 'branch.commit');
    const rules = await api(`/projects/${P}/protected_branches`);
    expect((rules.body as unknown[])[0]).toMatchObject({
      name: 'main',
      push_access_levels: [{ access_level: 40, access_level_description: 'Maintainers' }],
    });
    const tags = await api(`/projects/${P}/repository/tags`);
    expect((tags.body as { name: string }[]).map((t) => t.name)).toEqual(['v1.0.0', 'v0.1.0']);
    expectShape(
      (tags.body as unknown[])[0],
      { name: 'string', message: 'string', target: 'string', commit: 'object', release: ['object', 'null'], protected: 'boolean' },
      'tag',
    );
    // v1.0.0 has the seeded release, v0.1.0 none.
    expect((tags.body as { release: unknown }[]).map((t) => t.release)).toEqual([
      { tag_name: 'v1.0.0', description: expect.stringContaining('Highlights') as unknown },
      null,
    ]);

    const refused = await api(`/projects/${P}/repository/branches`, {
      token: readOnly,
      method: 'POST',
      body: { branch: 'x', ref: 'main' },
    });
    expect(refused).toMatchObject({ status: 403, body: { error: 'insufficient_scope' } });
    expect(await api(`/projects/${P}/repository/branches`, { method: 'POST', body: { branch: 'main', ref: 'main' } })).toMatchObject({
      status: 400,
      body: { message: 'Branch already exists' },
    });
    expect(await api(`/projects/${P}/repository/branches/main`, { method: 'DELETE' })).toMatchObject({
      status: 405,
      body: { message: 'Cannot remove HEAD branch' },
    });
    expect(await api(`/projects/${P}/repository/tree`, { token: otto })).toMatchObject({
      status: 404,
      body: { message: '404 Project Not Found' },
    });
    expect(
      await api('/projects/rita%2Fhandbook/repository/branches', { token: otto, method: 'POST', body: { branch: 'x', ref: 'main' } }),
    ).toMatchObject({
      status: 403,
    });
  });

  it('commits actions atomically with GitLab’s refusals', async () => {
    const created = await api(`/projects/${P}/repository/commits`, {
      method: 'POST',
      body: {
        branch: 'feature',
        start_branch: 'main',
        commit_message: 'Add notes',
        actions: [
          { action: 'create', file_path: 'notes.md', content: 'bm90ZXM=', encoding: 'base64' },
          { action: 'delete', file_path: 'data/words.txt' },
        ],
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ title: 'Add notes', stats: { additions: 1, deletions: 2500 } });
    const refused = await api(`/projects/${P}/repository/commits`, {
      method: 'POST',
      body: { branch: 'feature', commit_message: 'again', actions: [{ action: 'create', file_path: 'notes.md', content: 'x' }] },
    });
    expect(refused).toMatchObject({ status: 400, body: { message: 'A file with this name already exists' } });
    const stale = await api(`/projects/${P}/repository/commits`, {
      method: 'POST',
      body: {
        branch: 'feature',
        commit_message: 'stale',
        actions: [{ action: 'update', file_path: 'README.md', content: 'x', last_commit_id: '0'.repeat(40) }],
      },
    });
    expect(stale.body).toEqual({ message: 'You are attempting to update a file that has changed since you started editing it.' });
  });
});

describe('dev forge repository search', () => {
  it('finds blobs and commits on the default branch, in GitLab’s search shapes', async () => {
    const blobs = await api(`/projects/${P}/search?scope=blobs&search=GREET`);
    expect(blobs.status).toBe(200);
    expect(blobs.body.length).toBeGreaterThan(0);
    for (const hit of blobs.body) {
      expectShape(
        hit,
        {
          basename: 'string',
          data: 'string',
          path: 'string',
          filename: 'string',
          id: 'null',
          ref: 'string',
          startline: 'number',
          project_id: 'number',
        },
        'blob',
      );
      expect((hit as { data: string }).data.toLowerCase()).toContain('greet');
      expect((hit as { ref: string }).ref).toBe('main');
    }
    const commits = await api(`/projects/${P}/search?scope=commits&search=greeting`);
    expect(commits.body.map((c) => (c as { title: string }).title)).toEqual(
      expect.arrayContaining(['Add a greeting module', 'Fix the greeting punctuation']),
    );
    expectShape(
      commits.body[0],
      {
        id: 'string',
        short_id: 'string',
        title: 'string',
        message: 'string',
        author_name: 'string',
        committed_date: 'string',
        project_id: 'number',
      },
      'commit',
    );
    // "Expand the README" is on the `readme` branch only: GitLab searches the default branch.
    expect((await api(`/projects/${P}/search?scope=commits&search=expand`)).body).toEqual([]);
  });
});

describe('dev forge CI API', () => {
  it('answers pipelines and jobs as documented, the log as text/plain, 404 for a job without a log', async () => {
    const list = await api(`/projects/${P}/pipelines?per_page=1&page=2`);
    expect(list.headers.get('x-total')).toBe('3');
    expect(list.headers.get('x-next-page')).toBe('3');
    expectShape(
      (list.body as unknown[])[0],
      {
        id: 'number',
        iid: 'number',
        project_id: 'number',
        status: 'string',
        source: 'string',
        ref: 'string',
        sha: 'string',
        web_url: 'string',
        created_at: 'string',
        updated_at: 'string',
      },
      'pipeline item',
    );
    const pipeline = await api(`/projects/${P}/pipelines/2`);
    expectShape(
      pipeline.body,
      {
        id: 'number',
        iid: 'number',
        project_id: 'number',
        status: 'string',
        ref: 'string',
        sha: 'string',
        before_sha: 'string',
        tag: 'boolean',
        yaml_errors: ['string', 'null'],
        user: 'object',
        created_at: 'string',
        updated_at: 'string',
        started_at: ['string', 'null'],
        finished_at: ['string', 'null'],
        committed_at: ['string', 'null'],
        duration: ['number', 'null'],
        queued_duration: ['number', 'null'],
        coverage: ['string', 'null'],
        web_url: 'string',
        detailed_status: 'object',
      },
      'pipeline',
    );
    expectShape(
      pipeline.body.detailed_status,
      {
        icon: 'string',
        text: 'string',
        label: 'string',
        group: 'string',
        tooltip: 'string',
        has_details: 'boolean',
        details_path: 'string',
        illustration: 'null',
        favicon: 'string',
      },
      'detailed_status',
    );
    const jobs = await api(`/projects/${P}/pipelines/2/jobs?scope[]=failed`);
    expect(jobs.body).toHaveLength(1);
    const job = (jobs.body as Record<string, unknown>[])[0];
    expectShape(
      job,
      {
        id: 'number',
        name: 'string',
        stage: 'string',
        status: 'string',
        ref: 'string',
        tag: 'boolean',
        coverage: ['number', 'null'],
        allow_failure: 'boolean',
        created_at: 'string',
        started_at: 'string',
        finished_at: 'string',
        duration: 'number',
        queued_duration: 'number',
        user: 'object',
        commit: 'object',
        pipeline: 'object',
        web_url: 'string',
        project: 'object',
        artifacts: 'array',
        artifacts_expire_at: 'null',
        tag_list: 'array',
        runner: 'null',
        failure_reason: 'string',
      },
      'job',
    );
    expectShape(
      job?.commit,
      {
        author_email: 'string',
        author_name: 'string',
        created_at: 'string',
        id: 'string',
        message: 'string',
        short_id: 'string',
        title: 'string',
      },
      'job.commit',
    );
    expectShape(job?.pipeline, { id: 'number', project_id: 'number', ref: 'string', sha: 'string', status: 'string' }, 'job.pipeline');
    const trace = await api(`/projects/${P}/jobs/${String(job?.id)}/trace`);
    expect(trace.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(String(trace.body)).toContain('AssertionError');
    const running = (await api(`/projects/${P}/pipelines/3/jobs?scope[]=pending`)).body as { id: number }[];
    expect(await api(`/projects/${P}/jobs/${running[0]?.id}/trace`)).toMatchObject({ status: 404 });
    expect(await api(`/projects/${P}/pipeline`, { method: 'POST', body: { ref: 'nope' } })).toMatchObject({
      status: 400,
      body: { message: { base: ['Reference not found'] } },
    });
  });
});
