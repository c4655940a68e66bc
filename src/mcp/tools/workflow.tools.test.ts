/**
 * The core, issues and merge_requests tools (issue 18) against the dev forge's demo data, through the v2 SDK client
 * (which validates every structuredContent against the listed outputSchema once it has listed the tools): each
 * include and method branch, paging past page one, read-only tokens refused, and the confirmations of a merge and
 * of making a confidential issue public (token: accepted, replayed, changed arguments; elicitation: accepted and
 * declined).
 */
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevForge, type StartedDevForge } from '../../devforge/index.ts';
import { captureLogger, toolJson } from '../mcp.testkit.ts';
import { createForgeMcpServer } from './forge.tools.ts';

type Json = Record<string, unknown>;

describe('the core, issues and merge_requests tools on the dev forge', () => {
  let forge: StartedDevForge;
  let pat = '';
  const ada = { id: 1, username: 'ada', name: 'Ada', email: 'ada@example.test', password: 'pw-ada-123456' };
  const bo = { id: 2, username: 'bo', name: 'Bo', email: 'bo@example.test', password: 'pw-bo-1234567' };
  const project = 'demo/webshop';

  beforeAll(async () => {
    forge = await startDevForge({ users: [ada, bo], applications: [] });
    pat = forge.createPersonalAccessToken('ada', ['api']);
  });
  afterAll(async () => {
    await forge.close();
  });

  async function connect(token = pat, elicit?: (message: string) => { action: 'accept' | 'decline'; content?: Json }) {
    const server = createForgeMcpServer({ forgeUrl: forge.url, fetch, log: captureLogger().logger, getToken: async () => token });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 't', version: '1' }, elicit ? { capabilities: { elicitation: { form: {} } } } : {});
    if (elicit)
      client.setRequestHandler('elicitation/create', async (request) => {
        const answer = elicit(String((request.params as { message?: unknown }).message));
        return answer.content ? { action: answer.action, content: answer.content as Record<string, boolean> } : { action: answer.action };
      });
    await client.connect(clientSide);
    // Listing first makes the client validate structured results against each tool's outputSchema.
    await client.listTools();
    const call = async (name: string, args: Json = {}) => client.callTool({ name, arguments: args });
    const ok = async (name: string, args: Json = {}) => {
      const result = await call(name, args);
      expect(result.isError, `${name}: ${JSON.stringify(result.structuredContent)}`).toBeFalsy();
      return toolJson(result) as Json;
    };
    return { call, ok, close: () => client.close() };
  }

  it('[TOOL-CORE] get_user (me, by username, by id, the old name), search in each level, labels', async () => {
    const { ok, call, close } = await connect();
    try {
      expect(await ok('get_user')).toMatchObject({ username: 'ada' });
      expect(await ok('get_current_user')).toMatchObject({ username: 'ada' });
      expect(await ok('get_user', { username: '@bo' })).toMatchObject({ id: 2 });
      expect(await ok('get_user', { user_id: 2 })).toMatchObject({ username: 'bo' });
      expect(toolJson(await call('get_user', { username: 'nobody' }))).toMatchObject({ error: { type: 'not_found' } });
      const global = (await ok('search', { scope: 'issues', search: 'checkout' })) as { items: Json[] };
      expect(global.items.map((i) => i.title)).toContain('Checkout fails for carts over 100 items');
      expect(((await ok('search', { scope: 'merge_requests', search: 'cart', group_id: 'demo' })) as { items: Json[] }).items).toHaveLength(
        1,
      );
      const notes = (await ok('search', { scope: 'notes', search: 'legacy cart', project_id: project })) as { items: Json[] };
      expect(notes.items[0]).toMatchObject({ noteable_type: 'Issue', body: 'Yes, in the legacy cart table.' });
      const labels = (await ok('search_labels', { project_id: project })) as { items: Json[] };
      expect(labels.items.map((l) => l.name)).toEqual(['bug', 'checkout', 'documentation', 'feature']);
      expect(labels.items.find((l) => l.name === 'checkout')).toMatchObject({ open_issues_count: 1, open_merge_requests_count: 2 });
    } finally {
      await close();
    }
  });

  it('[TOOL-ISSUES] save_issue creates and updates (labels, assignees, close); list filters and pages; get with every include; notes and replies', async () => {
    const { ok, call, close } = await connect();
    try {
      const created = await ok('save_issue', { project_id: project, title: 'Slow search', labels: 'perf', assignee_usernames: ['bo'] });
      expect(created, JSON.stringify(created)).toMatchObject({
        title: 'Slow search',
        labels: ['perf'],
        assignees: ['bo'],
        state: 'opened',
      });
      const iid = created.iid as number;
      const updated = await ok('save_issue', {
        project_id: project,
        issue_iid: iid,
        add_labels: ['bug'],
        remove_labels: ['perf'],
        state_event: 'close',
      });
      expect(updated).toMatchObject({ labels: ['bug'], state: 'closed' });
      expect(toolJson(await call('save_issue', { project_id: project, issue_iid: iid }))).toMatchObject({ error: { type: 'validation' } });
      expect(toolJson(await call('save_issue', { project_id: project }))).toMatchObject({ error: { type: 'validation' } });
      expect(toolJson(await call('save_issue', { project_id: project, title: 'x', assignee_usernames: ['ghost'] }))).toMatchObject({
        error: { type: 'validation', message: expect.stringContaining('ghost') as unknown },
      });
      // The old name still creates.
      expect(await ok('create_issue', { project_id: project, title: 'Via the old name' })).toMatchObject({ title: 'Via the old name' });

      const byAssignee = (await ok('list_issues', { project_id: project, assignee_username: 'bo', state: 'closed' })) as { items: Json[] };
      expect(byAssignee.items.map((i) => i.iid)).toEqual([iid]);
      expect(
        ((await ok('list_issues', { project_id: project, milestone: 'v1.3' })) as { items: Json[] }).items.map((i) => i.title),
      ).toEqual(['Add a wish list']);
      const future = new Date(Date.now() + 3_600_000).toISOString();
      expect(((await ok('list_issues', { project_id: project, created_after: future })) as { items: Json[] }).items).toEqual([]);
      const past = new Date(Date.now() - 10 * 365 * 86_400_000).toISOString();
      expect(((await ok('list_issues', { project_id: project, created_before: past })) as { items: Json[] }).items).toEqual([]);
      expect(((await ok('list_issues', { project_id: project, updated_before: past })) as { items: Json[] }).items).toEqual([]);
      expect(
        ((await ok('list_issues', { project_id: project, created_before: future, per_page: 1 })) as { items: Json[] }).items,
      ).toHaveLength(1);
      const first = (await ok('list_issues', { project_id: project, per_page: 2, sort: 'asc' })) as { items: Json[]; next_cursor: string };
      const second = (await ok('list_issues', { project_id: project, per_page: 2, sort: 'asc', cursor: first.next_cursor })) as {
        items: Json[];
      };
      expect(second.items.length).toBeGreaterThan(0);
      expect(second.items.map((i) => i.iid)).not.toContain(first.items[0]?.iid);

      const full = (await ok('get_issue', {
        project_id: project,
        issue_iid: 1,
        include: ['notes', 'discussions', 'links', 'related_merge_requests'],
      })) as {
        issue: Json;
        notes: { items: Json[] };
        discussions: { items: { id: string; notes: Json[]; individual_note: boolean }[] };
        links: Json[];
        related_merge_requests: { items: Json[] };
      };
      expect(full.issue).toMatchObject({ iid: 1, assignees: ['ada'], milestone: 'v1.2', labels: ['bug', 'checkout'] });
      expect(full.notes.items.map((n) => n.body)).toEqual([
        'I can reproduce this with 120 items.',
        'Is the total stored as a 16-bit integer?',
        'Yes, in the legacy cart table.',
      ]);
      const thread = full.discussions.items.find((d) => !d.individual_note);
      expect(thread?.notes).toHaveLength(2);
      expect(full.links).toEqual([]);
      expect(full.related_merge_requests.items.map((m) => m.title)).toEqual(['Store cart totals as 64-bit integers']);
      const bare = await ok('get_issue', { project_id: project, issue_iid: 1 });
      expect(Object.keys(bare)).toEqual(['issue']);

      expect(await ok('save_issue_note', { project_id: project, issue_iid: 1, body: 'Still happens on 1.2.' })).toMatchObject({
        author: 'ada',
      });
      const reply = await ok('save_issue_note', { project_id: project, issue_iid: 1, body: 'Confirmed.', discussion_id: thread?.id });
      expect(reply).toMatchObject({ body: 'Confirmed.' });
      const after = (await ok('get_issue', { project_id: project, issue_iid: 1, include: ['discussions'] })) as {
        discussions: { items: { id: string; notes: Json[] }[] };
      };
      expect(after.discussions.items.find((d) => d.id === thread?.id)?.notes).toHaveLength(3);
    } finally {
      await close();
    }
  });

  it('[TOOL-MERGE-REQUESTS] get with every include, per-file diffs (cap, globs, too_large), save, every review method', async () => {
    const { ok, call, close } = await connect();
    try {
      const list = (await ok('list_merge_requests', { project_id: project, state: 'opened', detail: 'full' })) as { items: Json[] };
      expect(list.items.map((m) => m.title)).toEqual(['Draft: Wish list page', 'Store cart totals as 64-bit integers']);
      const got = (await ok('get_merge_request', {
        project_id: project,
        merge_request_iid: 1,
        include: ['notes', 'discussions', 'diffs', 'commits', 'pipelines', 'approvals', 'versions'],
      })) as Json & {
        merge_request: Json & { diff_refs: Json };
        diffs: { items: Json[] };
        approvals: Json;
      };
      expect(got.merge_request).toMatchObject({
        iid: 1,
        changes_count: '3',
        diff_refs: { head_sha: expect.stringMatching(/^[0-9a-f]{40}$/) as unknown },
      });
      expect(got.diffs.items).toEqual([
        { old_path: 'src/cart/total.ts', new_path: 'src/cart/total.ts', additions: 1, deletions: 1 },
        {
          old_path: 'db/migrations/0042_widen_total.sql',
          new_path: 'db/migrations/0042_widen_total.sql',
          additions: 1,
          deletions: 0,
          new_file: true,
        },
        {
          old_path: 'db/schema.generated.sql',
          new_path: 'db/schema.generated.sql',
          additions: 0,
          deletions: 0,
          new_file: true,
          too_large: true,
        },
      ]);
      expect(got.approvals).toEqual({ approved: true, approvals_left: 0, approved_by: ['bo'] });
      expect(got).toMatchObject({ pipelines: { items: [], has_more: false }, commits: { items: [{ id: got.merge_request.sha }] } });
      expect((got.versions as { items: Json[] }).items).toHaveLength(1);
      expect((got.discussions as { items: Json[] }).items).toHaveLength(2);

      // A byte cap smaller than two files: one file per answer, the rest behind next_cursor, nothing lost.
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 5; i += 1) {
        const page = (await ok('get_merge_request_diffs', {
          project_id: project,
          merge_request_iid: 1,
          max_bytes: 1000,
          per_page: 2,
          ...(cursor ? { cursor } : {}),
        })) as {
          items: Json[];
          next_cursor: string | null;
        };
        seen.push(...page.items.map((f) => String(f.new_path)));
        if (page.next_cursor === null) break;
        cursor = page.next_cursor;
      }
      expect(seen).toEqual(['src/cart/total.ts', 'db/migrations/0042_widen_total.sql', 'db/schema.generated.sql']);
      const sql = (await ok('get_merge_request_diffs', { project_id: project, merge_request_iid: 1, paths: ['db/**'] })) as {
        items: Json[];
      };
      expect(sql.items.map((f) => [f.new_path, f.too_large ?? false, 'diff' in f])).toEqual([
        ['db/migrations/0042_widen_total.sql', false, true],
        ['db/schema.generated.sql', true, false],
      ]);

      const created = await ok('save_merge_request', {
        project_id: project,
        source_branch: 'fix-typo',
        target_branch: 'main',
        title: 'Fix a typo',
        reviewer_usernames: ['bo'],
      });
      expect(created).toMatchObject({ state: 'opened', source_branch: 'fix-typo' });
      const closed = await ok('save_merge_request', {
        project_id: project,
        merge_request_iid: created.iid,
        state_event: 'close',
        add_labels: ['docs'],
      });
      expect(closed).toMatchObject({ state: 'closed', labels: ['docs'] });
      expect(
        toolJson(
          await call('save_merge_request', {
            project_id: project,
            source_branch: 'fix-typo',
            target_branch: 'main',
            title: 'x',
            state_event: 'close',
          }),
        ),
      ).toMatchObject({
        error: { type: 'validation' },
      });

      const review = (args: Json) => ok('save_merge_request_review', { project_id: project, merge_request_iid: 1, ...args });
      expect(await review({ method: 'create_note', body: 'Thanks!' })).toMatchObject({ method: 'create_note', note: { body: 'Thanks!' } });
      const diffNote = (await review({ method: 'create_diff_note', body: 'Use 0n here.', new_path: 'src/cart/total.ts', new_line: 3 })) as {
        discussion: { id: string; notes: Json[] };
      };
      expect(diffNote.discussion.notes[0]).toMatchObject({ position: { new_path: 'src/cart/total.ts', new_line: 3 } });
      expect(
        toolJson(
          await call('save_merge_request_review', {
            project_id: project,
            merge_request_iid: 1,
            method: 'create_diff_note',
            body: 'x',
            new_path: 'src/cart/total.ts',
            new_line: 99,
          }),
        ),
      ).toMatchObject({
        // A line outside the file's diff is refused by the tool before the forge's 400 (review-drafts.test.ts).
        error: { type: 'validation', status: 0, message: expect.stringContaining("not in the file's diff") as unknown },
      });
      expect(await review({ method: 'reply_discussion', discussion_id: diffNote.discussion.id, body: 'Done.' })).toMatchObject({
        note: { body: 'Done.' },
      });
      const resolved = (await review({ method: 'resolve_discussion', discussion_id: diffNote.discussion.id })) as {
        discussion: { notes: Json[] };
      };
      expect(resolved.discussion.notes.every((n) => n.resolved === true)).toBe(true);
      expect(
        toolJson(await call('save_merge_request_review', { project_id: project, merge_request_iid: 1, method: 'approve', body: 'nope' })),
      ).toMatchObject({
        error: { type: 'validation', message: 'approve does not take body' },
      });
      const submitted = await review({
        method: 'submit_review',
        comments: [{ body: 'Rename total?', new_path: 'src/cart/total.ts', new_line: 3 }, { body: 'Overall fine.' }],
        summary: 'Two small things.',
      });
      expect(submitted).toMatchObject({ published: 2, note: { body: 'Two small things.' } });
      const threads = (await ok('get_merge_request', { project_id: project, merge_request_iid: 1, include: ['discussions'] })) as {
        discussions: { items: { notes: Json[] }[] };
      };
      expect(threads.discussions.items.flatMap((d) => d.notes.map((n) => n.body))).toEqual(
        expect.arrayContaining(['Rename total?', 'Overall fine.', 'Two small things.']),
      );
      expect(await review({ method: 'approve' })).toMatchObject({ approved: true, diff_head_sha: got.merge_request.sha });
      expect(await review({ method: 'unapprove' })).toMatchObject({ method: 'unapprove' });
      // Rebasing is a method of save_merge_request (rebase_merge_request was its own tool).
      expect(await ok('save_merge_request', { project_id: project, merge_request_iid: 1, rebase: true })).toMatchObject({
        iid: 1,
        rebase_in_progress: true,
      });
    } finally {
      await close();
    }
  });

  it('[TOOL-CONFIRM] merging asks first: a token redeems once and only for the same arguments; merging again is already_merged', async () => {
    const { ok, call, close } = await connect();
    try {
      const mr = await ok('save_merge_request', {
        project_id: project,
        source_branch: 'confirm-me',
        target_branch: 'main',
        title: 'Confirm me',
      });
      const head = ((await ok('get_merge_request', { project_id: project, merge_request_iid: mr.iid })) as { merge_request: Json })
        .merge_request.sha as string;
      const args = { project_id: project, merge_request_iid: mr.iid, sha: head };
      const asked = await call('accept_merge_request', args);
      expect(asked.isError).toBeFalsy();
      const { confirmation_required: question } = toolJson(asked) as { confirmation_required: { token: string; summary: string } };
      expect(question.summary).toContain(`!${String(mr.iid)}`);
      // Still open: nothing merged without the token.
      expect(
        ((await ok('get_merge_request', { project_id: project, merge_request_iid: mr.iid })) as { merge_request: Json }).merge_request
          .state,
      ).toBe('opened');
      expect(toolJson(await call('accept_merge_request', { ...args, squash: true, confirmation_token: question.token }))).toMatchObject({
        error: { type: 'forbidden', message: expect.stringContaining('other arguments') as unknown },
      });
      expect(await ok('accept_merge_request', { ...args, confirmation_token: question.token })).toMatchObject({
        status: 'merged',
        merge_request: { state: 'merged' },
      });
      expect(await ok('accept_merge_request', args)).toMatchObject({ status: 'already_merged' });
      // The token was consumed: a replay on another open merge request's identical arguments cannot happen, and on this one it is refused.
      const again = await call('accept_merge_request', { ...args, confirmation_token: question.token });
      expect(toolJson(again)).toMatchObject({ status: 'already_merged' });
      const stale = await ok('save_merge_request', { project_id: project, source_branch: 'moved', target_branch: 'main', title: 'Moved' });
      const token = (
        toolJson(await call('accept_merge_request', { project_id: project, merge_request_iid: stale.iid, sha: 'abcdef1' })) as {
          confirmation_required: { token: string };
        }
      ).confirmation_required.token;
      expect(
        toolJson(
          await call('accept_merge_request', {
            project_id: project,
            merge_request_iid: stale.iid,
            sha: 'abcdef1',
            confirmation_token: token,
          }),
        ),
      ).toMatchObject({
        error: { type: 'conflict', status: 409 },
      });
      expect(
        toolJson(
          await call('accept_merge_request', {
            project_id: project,
            merge_request_iid: stale.iid,
            sha: 'abcdef1',
            confirmation_token: token,
          }),
        ),
      ).toMatchObject({
        error: { type: 'forbidden', message: expect.stringContaining('already used') as unknown },
      });
    } finally {
      await close();
    }
  });

  it('[TOOL-CONFIRM] with a client that supports elicitation the user is asked in the call: accepted merges, declined writes nothing', async () => {
    const asked: string[] = [];
    let answer: 'accept' | 'decline' = 'decline';
    const { ok, call, close } = await connect(pat, (message) => {
      asked.push(message);
      return answer === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: 'decline' };
    });
    try {
      const secret = await ok('save_issue', { project_id: project, title: 'Security hole', confidential: true });
      const declined = await call('save_issue', { project_id: project, issue_iid: secret.iid, confidential: false });
      expect(toolJson(declined)).toMatchObject({
        error: { type: 'forbidden', message: expect.stringContaining('did not confirm') as unknown },
      });
      expect(asked[0]).toContain(`#${String(secret.iid)}`);
      const still = (await ok('get_issue', { project_id: project, issue_iid: secret.iid })) as { issue: Json };
      expect(still.issue, JSON.stringify(still)).toMatchObject({ confidential: true });
      answer = 'accept';
      expect(await ok('save_issue', { project_id: project, issue_iid: secret.iid, confidential: false })).toMatchObject({
        confidential: false,
      });
      // Not a confidential issue any more: no question.
      expect(await ok('save_issue', { project_id: project, issue_iid: secret.iid, confidential: false })).toMatchObject({
        confidential: false,
      });
      expect(asked).toHaveLength(2);
    } finally {
      await close();
    }
  });

  it('[TOOL-ERRORS] a read_api token reads and is refused every write with insufficient_scope; a non-member gets 403', async () => {
    const reader = await connect(forge.createPersonalAccessToken('ada', ['read_api']));
    try {
      await reader.ok('get_merge_request', { project_id: project, merge_request_iid: 1 });
      for (const [name, args] of [
        ['save_issue', { project_id: project, title: 'no' }],
        ['save_issue_note', { project_id: project, issue_iid: 1, body: 'no' }],
        ['save_merge_request', { project_id: project, merge_request_iid: 1, title: 'no' }],
        ['save_merge_request_review', { project_id: project, merge_request_iid: 1, method: 'create_note', body: 'no' }],
        ['save_merge_request', { project_id: project, merge_request_iid: 1, rebase: true }],
      ] as const)
        expect(toolJson(await reader.call(name, args)), name).toMatchObject({ error: { type: 'insufficient_scope', status: 403 } });
    } finally {
      await reader.close();
    }
    const outsider = await connect(forge.createPersonalAccessToken('bo', ['api']));
    try {
      expect(toolJson(await outsider.call('save_issue', { project_id: 'ada/handbook', title: 'drive-by' }))).toMatchObject({
        error: { type: 'forbidden', status: 403 },
      });
      expect(toolJson(await outsider.call('get_issue', { project_id: 'ada/hello-forge', issue_iid: 1 }))).toMatchObject({
        error: { type: 'not_found', status: 404 },
      });
    } finally {
      await outsider.close();
    }
  });
});
