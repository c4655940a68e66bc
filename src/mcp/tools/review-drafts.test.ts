/**
 * save_merge_request_review against the dev forge: a batched review (`submit_review`) publishes only the drafts it
 * wrote and deletes them when a step fails, so a retry writes each comment once; a diff note given one line number
 * gets the other from the file's diff (a context line needs both), and a line outside the diff is refused before
 * anything is written.
 */
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevForge, type StartedDevForge } from '../../devforge/index.ts';
import { captureLogger, toolJson } from '../mcp.testkit.ts';
import { createForgeMcpServer } from './forge.tools.ts';
import { diffLinePair } from './review.positions.ts';

type Json = Record<string, unknown>;

/** One hunk of `src/app.ts` whose lines sit at different numbers on each side (old 10–14, new 12–17). */
const HUNK = [
  '@@ -10,5 +12,6 @@ export function main() {',
  ' const a = 1;',
  ' const b = 2;',
  '-const c = 3;',
  '+const c = 4;',
  '+const d = 5;',
  ' return a + b + c;',
  ' }',
  '\\ No newline at end of file',
  '',
].join('\n');

describe('save_merge_request_review: drafts and diff positions', () => {
  let forge: StartedDevForge;
  let pat = '';
  let boPat = '';
  let projectId = 0;
  const ada = { id: 1, username: 'ada', name: 'Ada', email: 'ada@example.test', password: 'pw-ada-123456' };
  const bo = { id: 2, username: 'bo', name: 'Bo', email: 'bo@example.test', password: 'pw-bo-1234567' };
  const project = 'demo/webshop';
  let client: Client;

  beforeAll(async () => {
    forge = await startDevForge({ users: [ada, bo], applications: [] });
    pat = forge.createPersonalAccessToken('ada', ['api']);
    boPat = forge.createPersonalAccessToken('bo', ['api']);
    const server = createForgeMcpServer({ forgeUrl: forge.url, fetch, log: captureLogger().logger, getToken: async () => pat });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    client = new Client({ name: 't', version: '1' });
    await client.connect(clientSide);
    // Listing first makes the client validate structured results against each tool's outputSchema.
    await client.listTools();
    projectId = (await ok('get_project', { project_id: project })).id as number;
  });
  afterAll(async () => {
    await client.close();
    await forge.close();
  });

  const call = async (name: string, args: Json) => toolJson(await client.callTool({ name, arguments: args })) as Json;
  const ok = async (name: string, args: Json) => {
    const result = await client.callTool({ name, arguments: args });
    expect(result.isError, `${name}: ${JSON.stringify(result.structuredContent)}`).toBeFalsy();
    return toolJson(result) as Json;
  };
  const rest = async (method: string, path: string, token = pat, body?: Json) => {
    const response = await fetch(`${forge.url}/api/v4/projects/${projectId}${path}`, {
      method,
      headers: { 'private-token': token, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, json: response.status === 204 ? undefined : await response.json() };
  };

  /** A new merge request whose change is {@link HUNK}. */
  async function mergeRequest(branch: string): Promise<number> {
    const mr = await ok('save_merge_request', { project_id: project, source_branch: branch, target_branch: 'main', title: branch });
    const iid = mr.iid as number;
    forge.setMergeRequestFiles(projectId, iid, [{ path: 'src/app.ts', diff: HUNK }]);
    return iid;
  }
  const drafts = async (iid: number, token = pat) => (await rest('GET', `/merge_requests/${iid}/draft_notes`, token)).json as Json[];
  const noteBodies = async (iid: number) => {
    const notes = (await rest('GET', `/merge_requests/${iid}/notes?per_page=100`)).json as Json[];
    return notes.map((n) => n.body);
  };
  const review = (iid: number, args: Json) => ({ project_id: project, merge_request_iid: iid, ...args });

  it('[REVIEW-LINES] reads a line pair from unified diff hunks: added, removed, context, outside', () => {
    expect(diffLinePair(HUNK, 'new_line', 12)).toEqual({ old_line: 10, new_line: 12 });
    expect(diffLinePair(HUNK, 'new_line', 15)).toEqual({ new_line: 15 });
    expect(diffLinePair(HUNK, 'old_line', 12)).toEqual({ old_line: 12 });
    expect(diffLinePair(HUNK, 'old_line', 13)).toEqual({ old_line: 13, new_line: 16 });
    expect(diffLinePair(HUNK, 'new_line', 17)).toEqual({ old_line: 14, new_line: 17 });
    expect(diffLinePair(HUNK, 'new_line', 18)).toBeUndefined();
    expect(diffLinePair(HUNK, 'new_line', 11)).toBeUndefined();
    expect(diffLinePair(HUNK, 'old_line', 15)).toBeUndefined();
    expect(diffLinePair('@@ -0,0 +1,2 @@\n+a\n+b\n', 'new_line', 2)).toEqual({ new_line: 2 });
  });

  it('[REVIEW-CONTEXT] a diff note on an unchanged line given only new_line (or only old_line) gets the other number', async () => {
    const iid = await mergeRequest('review-context');
    const byNew = await ok(
      'save_merge_request_review',
      review(iid, { method: 'create_diff_note', body: 'Sum looks off.', new_path: 'src/app.ts', new_line: 16 }),
    );
    expect((byNew.discussion as { notes: Json[] }).notes[0]).toMatchObject({
      position: { new_path: 'src/app.ts', old_path: 'src/app.ts', new_line: 16, old_line: 13 },
    });
    const byOld = await ok(
      'save_merge_request_review',
      review(iid, { method: 'create_diff_note', body: 'Brace.', old_path: 'src/app.ts', old_line: 14 }),
    );
    expect((byOld.discussion as { notes: Json[] }).notes[0]).toMatchObject({ position: { new_line: 17, old_line: 14 } });
    const added = await ok(
      'save_merge_request_review',
      review(iid, { method: 'create_diff_note', body: 'New.', new_path: 'src/app.ts', new_line: 15 }),
    );
    const addedPosition = (added.discussion as { notes: { position?: Json }[] }).notes[0]?.position;
    expect(addedPosition).toMatchObject({ new_line: 15 });
    expect(addedPosition?.old_line ?? null).toBeNull();
    // The same in a batched review.
    expect(
      await ok(
        'save_merge_request_review',
        review(iid, { method: 'submit_review', comments: [{ body: 'Context, batched.', new_path: 'src/app.ts', new_line: 12 }] }),
      ),
    ).toMatchObject({ published: 1 });
    const threads = (await ok('get_merge_request', { project_id: project, merge_request_iid: iid, include: ['discussions'] })) as {
      discussions: { items: { notes: Json[] }[] };
    };
    const batched = threads.discussions.items.flatMap((d) => d.notes).find((n) => n.body === 'Context, batched.');
    expect(batched).toMatchObject({ position: { new_line: 12, old_line: 10 } });
  });

  it('[REVIEW-OUTSIDE] a line or a path outside the diff is refused before anything is written', async () => {
    const iid = await mergeRequest('review-outside');
    const before = await noteBodies(iid);
    expect(
      await call('save_merge_request_review', review(iid, { method: 'create_diff_note', body: 'x', new_path: 'src/app.ts', new_line: 20 })),
    ).toMatchObject({ error: { type: 'validation', status: 0, message: expect.stringContaining("not in the file's diff") as unknown } });
    expect(
      await call(
        'save_merge_request_review',
        review(iid, { method: 'create_diff_note', body: 'x', new_path: 'src/other.ts', new_line: 1 }),
      ),
    ).toMatchObject({ error: { type: 'validation', message: expect.stringContaining('not a file the merge request changes') as unknown } });
    const batch = await call(
      'save_merge_request_review',
      review(iid, {
        method: 'submit_review',
        comments: [
          { body: 'Fine.', new_path: 'src/app.ts', new_line: 16 },
          { body: 'Outside.', old_path: 'src/app.ts', old_line: 2 },
        ],
      }),
    );
    expect(batch).toMatchObject({
      error: { type: 'validation', status: 0, message: expect.stringMatching(/^comments\[1\]: old_line is not/) as unknown },
    });
    expect(await drafts(iid)).toEqual([]);
    expect(await noteBodies(iid)).toEqual(before);
  });

  it('[REVIEW-ROLLBACK] a batch whose second draft the forge refuses leaves no drafts; the retry publishes each comment once', async () => {
    const iid = await mergeRequest('review-rollback');
    const failed = await call(
      'save_merge_request_review',
      review(iid, {
        method: 'submit_review',
        comments: [
          { body: 'First comment.', new_path: 'src/app.ts', new_line: 16 },
          // Both numbers given are sent as they are; this pair is no line of the diff, so GitLab answers 400.
          { body: 'Second comment.', new_path: 'src/app.ts', old_line: 10, new_line: 13 },
        ],
        summary: 'Summary.',
      }),
    );
    expect(failed).toMatchObject({
      error: { type: 'validation', status: 400, message: expect.stringContaining('Nothing of this review was kept') as unknown },
    });
    expect(await drafts(iid)).toEqual([]);
    expect(await noteBodies(iid)).not.toContain('First comment.');

    const retried = await ok(
      'save_merge_request_review',
      review(iid, {
        method: 'submit_review',
        comments: [
          { body: 'First comment.', new_path: 'src/app.ts', new_line: 16 },
          { body: 'Second comment.', new_path: 'src/app.ts', old_line: 10, new_line: 12 },
        ],
        summary: 'Summary.',
      }),
    );
    expect(retried).toMatchObject({ published: 2, note: { body: 'Summary.' } });
    const bodies = await noteBodies(iid);
    expect(bodies.filter((b) => b === 'First comment.')).toHaveLength(1);
    expect(bodies.filter((b) => b === 'Second comment.')).toHaveLength(1);
    expect(await drafts(iid)).toEqual([]);
  });

  it('[REVIEW-OWN-DRAFTS] the user’s own pending drafts stay drafts; only this review’s comments are published and counted', async () => {
    const iid = await mergeRequest('review-own-drafts');
    const mine = await rest('POST', `/merge_requests/${iid}/draft_notes`, pat, { note: 'Still thinking about this.' });
    expect(mine.status).toBe(201);
    const submitted = await ok(
      'save_merge_request_review',
      review(iid, {
        method: 'submit_review',
        comments: [{ body: 'Please add a test.' }, { body: 'On the sum.', new_path: 'src/app.ts', new_line: 16 }],
      }),
    );
    expect(submitted).toMatchObject({ published: 2 });
    const bodies = await noteBodies(iid);
    expect(bodies).toEqual(expect.arrayContaining(['Please add a test.', 'On the sum.']));
    expect(bodies).not.toContain('Still thinking about this.');
    expect((await drafts(iid)).map((d) => d.note)).toEqual(['Still thinking about this.']);
  });

  it('[REVIEW-LEFTOVER] a draft that cannot be deleted after a failure is reported, with its id', async () => {
    const iid = await mergeRequest('review-leftover');
    // The deletion of the first draft fails (a 500 on DELETE …/draft_notes/:id); the second draft's creation is refused.
    forge.faults.add({ kind: 'server_error', path: /\/draft_notes\/\d+$/ });
    const failed = await call(
      'save_merge_request_review',
      review(iid, {
        method: 'submit_review',
        comments: [
          { body: 'Kept by accident.', new_path: 'src/app.ts', new_line: 16 },
          { body: 'Bad pair.', new_path: 'src/app.ts', old_line: 1, new_line: 2 },
        ],
      }),
    );
    forge.faults.clear();
    const left = await drafts(iid);
    expect(left.map((d) => d.note)).toEqual(['Kept by accident.']);
    expect(failed).toMatchObject({
      error: {
        type: 'validation',
        status: 400,
        message: expect.stringContaining(
          `1 draft note(s) of this review could not be deleted and remain pending on the merge request (draft ids ${String(left[0]?.id)})`,
        ) as unknown,
      },
    });
    expect(await noteBodies(iid)).not.toContain('Kept by accident.');
  });

  it('[REVIEW-DEVFORGE] the dev forge publishes and deletes one draft as GitLab does: 204, and 404 for a missing or another user’s draft', async () => {
    const iid = await mergeRequest('review-devforge');
    const a = (await rest('POST', `/merge_requests/${iid}/draft_notes`, pat, { note: 'One.' })).json as { id: number };
    const b = (await rest('POST', `/merge_requests/${iid}/draft_notes`, pat, { note: 'Two.' })).json as { id: number };
    expect(await rest('PUT', `/merge_requests/${iid}/draft_notes/${a.id}/publish`, boPat)).toEqual({
      status: 404,
      json: { message: '404 Not found' },
    });
    expect(await rest('DELETE', `/merge_requests/${iid}/draft_notes/${a.id}`, boPat)).toEqual({
      status: 404,
      json: { message: '404 Not found' },
    });
    expect(await rest('PUT', `/merge_requests/${iid}/draft_notes/${a.id}/publish`)).toEqual({ status: 204, json: undefined });
    expect(await rest('PUT', `/merge_requests/${iid}/draft_notes/${a.id}/publish`)).toEqual({
      status: 404,
      json: { message: '404 Not found' },
    });
    expect(await rest('DELETE', `/merge_requests/${iid}/draft_notes/${b.id}`)).toEqual({ status: 204, json: undefined });
    expect(await rest('DELETE', `/merge_requests/${iid}/draft_notes/${b.id}`)).toEqual({ status: 404, json: { message: '404 Not found' } });
    expect(await drafts(iid)).toEqual([]);
    const bodies = await noteBodies(iid);
    expect(bodies).toContain('One.');
    expect(bodies).not.toContain('Two.');
    expect(await drafts(iid, boPat)).toEqual([]);
  });
});
