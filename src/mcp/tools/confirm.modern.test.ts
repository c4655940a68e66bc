/**
 * Confirmation on the 2026-07-28 revision over `/mcp` (issue 18 item 2): a client that declared elicitation gets an
 * `input_required` result with a form and a sealed requestState; its retry with the accepted answer merges, and a
 * retry whose arguments changed is refused. Raw JSON-RPC, since the exchange itself is what is pinned.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postModernToolCall, startTokenStack, type Stack } from '../mcp.testkit.ts';

type Json = Record<string, unknown>;

describe('confirmation by multi-round-trip input (2026-07-28)', () => {
  let stack: Stack;
  let pat = '';
  beforeAll(async () => {
    ({ stack, pat } = await startTokenStack());
  });
  afterAll(async () => {
    await stack.close();
  });

  const call = async (name: string, args: Json, extra: Json = {}) =>
    await postModernToolCall(stack.url, pat, name, args, { extra, clientName: 'confirm-modern' });

  it('[TOOL-CONFIRM] input_required with a form; the accepted retry merges; changed arguments on the retry are refused', async () => {
    const project = 'demo/webshop';
    const opened = await call('save_merge_request', {
      project_id: project,
      source_branch: 'modern',
      target_branch: 'main',
      title: 'Modern',
    });
    const iid = (opened.structuredContent as Json).iid as number;
    const got = await call('get_merge_request', { project_id: project, merge_request_iid: iid });
    const sha = ((got.structuredContent as Json).merge_request as Json).sha as string;
    const args = { project_id: project, merge_request_iid: iid, sha };

    const asked = await call('accept_merge_request', args);
    expect(asked.resultType).toBe('input_required');
    const requests = asked.inputRequests as Record<string, { method: string; params: { mode?: string; message: string } }>;
    expect(requests.confirm?.method).toBe('elicitation/create');
    expect(requests.confirm?.params.message).toContain(`!${iid}`);
    const state = asked.requestState as string;
    const accepted = { confirm: { action: 'accept', content: { confirm: true } } };

    const changed = await call('accept_merge_request', { ...args, squash: true }, { inputResponses: accepted, requestState: state });
    expect(changed.isError).toBe(true);
    expect(JSON.stringify(changed.structuredContent)).toContain('other arguments');

    const declined = await call('accept_merge_request', args, { inputResponses: { confirm: { action: 'decline' } }, requestState: state });
    expect(declined.isError).toBe(true);

    // The state above was consumed by the decline: ask again, then accept.
    const again = await call('accept_merge_request', args);
    const merged = await call('accept_merge_request', args, { inputResponses: accepted, requestState: again.requestState });
    expect(merged.isError, JSON.stringify(merged)).toBeFalsy();
    expect(merged.structuredContent).toMatchObject({ status: 'merged', merge_request: { state: 'merged' } });
  });
});
