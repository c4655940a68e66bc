/**
 * The dev forge's JSON against GitLab's documented field lists (mcp-facts.md §2.3, from doc/api/projects.md,
 * issues.md, merge_requests.md, notes.md, discussions.md): every documented field is present, and the
 * values checked where the shape matters to clients (ids, references, diff_refs, positions, changes_count as a string).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevForge, type StartedDevForge } from './index.ts';

type Json = Record<string, unknown>;

const DOCUMENTED = {
  project:
    'id description default_branch visibility ssh_url_to_repo http_url_to_repo web_url readme_url tag_list name name_with_namespace path path_with_namespace issues_enabled open_issues_count merge_requests_enabled jobs_enabled wiki_enabled created_at last_activity_at creator_id namespace archived avatar_url forks_count star_count _links permissions',
  issue:
    'id iid project_id title description state created_at updated_at closed_at closed_by labels milestone author assignee assignees upvotes downvotes merge_requests_count user_notes_count due_date web_url references time_stats has_tasks confidential discussion_locked moved_to_id _links task_completion_status',
  merge_request:
    'id iid project_id title description state merged_by merge_user merged_at closed_by closed_at created_at updated_at target_branch source_branch upvotes downvotes author assignee assignees reviewers source_project_id target_project_id labels draft work_in_progress milestone merge_when_pipeline_succeeds merge_status detailed_merge_status sha merge_commit_sha squash_commit_sha user_notes_count discussion_locked should_remove_source_branch force_remove_source_branch web_url references time_stats squash squash_on_merge task_completion_status has_conflicts blocking_discussions_resolved subscribed changes_count latest_build_started_at latest_build_finished_at first_deployed_to_production_at pipeline head_pipeline diff_refs merge_error first_contribution user diverged_commits_count',
  note: 'id body attachment author created_at updated_at system noteable_id noteable_type project_id noteable_iid resolvable confidential internal imported imported_from',
  discussion: 'id individual_note notes',
  diff: 'old_path new_path a_mode b_mode diff new_file renamed_file deleted_file generated_file collapsed too_large',
  version: 'id head_commit_sha base_commit_sha start_commit_sha created_at merge_request_id state real_size',
};

describe('dev forge JSON against GitLab’s documented fields', () => {
  let forge: StartedDevForge;
  let pat = '';
  const get = async (path: string): Promise<Json | Json[]> => {
    const response = await fetch(`${forge.url}/api/v4${path}`, { headers: { 'private-token': pat } });
    expect(response.status, path).toBe(200);
    return (await response.json()) as Json | Json[];
  };
  const check = (kind: keyof typeof DOCUMENTED, value: unknown) => {
    const missing = DOCUMENTED[kind].split(' ').filter((f) => !(f in (value as Json)));
    expect(missing, kind).toEqual([]);
  };

  beforeAll(async () => {
    forge = await startDevForge({
      users: [{ id: 1, username: 'ada', name: 'Ada', email: 'ada@example.test', password: 'pw-ada-123456' }],
      applications: [],
    });
    pat = forge.createPersonalAccessToken('ada', ['api']);
  });
  afterAll(async () => {
    await forge.close();
  });

  it('project, issue, merge request, note, discussion, diff and version carry every documented field', async () => {
    const p = 'demo%2Fwebshop';
    check('project', await get(`/projects/${p}`));
    const issue = (await get(`/projects/${p}/issues/1`)) as Json;
    check('issue', issue);
    expect(issue).toMatchObject({ state: 'opened', labels: ['bug', 'checkout'], references: { short: '#1', full: 'demo/webshop#1' } });
    expect((issue.milestone as Json).title).toBe('v1.2');
    const mr = (await get(`/projects/${p}/merge_requests/1`)) as Json;
    check('merge_request', mr);
    expect(typeof mr.changes_count).toBe('string');
    expect(Object.keys(mr.diff_refs as Json).sort()).toEqual(['base_sha', 'head_sha', 'start_sha']);
    const [note] = (await get(`/projects/${p}/issues/1/notes`)) as Json[];
    check('note', note);
    expect(note).toMatchObject({ noteable_type: 'Issue', noteable_iid: 1, system: false });
    const discussions = (await get(`/projects/${p}/merge_requests/1/discussions`)) as Json[];
    for (const d of discussions) check('discussion', d);
    const diffNote = discussions.flatMap((d) => d.notes as Json[]).find((n) => n.type === 'DiffNote');
    expect(diffNote).toMatchObject({
      resolvable: true,
      resolved: false,
      position: { position_type: 'text', new_path: 'src/cart/total.ts' },
    });
    expect(String((discussions[0] as Json).id)).toMatch(/^[0-9a-f]{40}$/);
    const diffs = (await get(`/projects/${p}/merge_requests/1/diffs`)) as Json[];
    for (const d of diffs) check('diff', d);
    expect(diffs.find((d) => d.too_large === true)).toMatchObject({ diff: '' });
    for (const v of (await get(`/projects/${p}/merge_requests/1/versions`)) as Json[]) check('version', v);
  });

  it('merge_status settles asynchronously: checking on the first read after creation, then can_be_merged', async () => {
    const created = await fetch(`${forge.url}/api/v4/projects/demo%2Fwebshop/merge_requests`, {
      method: 'POST',
      headers: { 'private-token': pat, 'content-type': 'application/json' },
      body: JSON.stringify({ source_branch: 'async', target_branch: 'main', title: 'Async' }),
    });
    const { iid } = (await created.json()) as { iid: number };
    const first = (await get(`/projects/demo%2Fwebshop/merge_requests/${iid}`)) as Json;
    expect([first.merge_status, first.detailed_merge_status]).toEqual(['checking', 'checking']);
    const second = (await get(`/projects/demo%2Fwebshop/merge_requests/${iid}`)) as Json;
    expect([second.merge_status, second.detailed_merge_status]).toEqual(['can_be_merged', 'mergeable']);
  });
});
