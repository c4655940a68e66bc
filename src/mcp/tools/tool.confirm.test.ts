/**
 * The confirmation token of high-impact writes (issue 18 item 2) on its own: bound to the tool, the exact
 * arguments and the forge user; 5 minutes; once. The flows through real clients are in merge-requests.tools.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMemoryReplayCache } from '../oauth/oauth.replay.ts';
import { CONFIRMATION_TTL_MS, ConfirmationRefused, createConfirmer } from './tool.confirm.ts';

function confirmer(secret = randomBytes(32)) {
  let now = 1_000_000;
  const clock = { now: () => now };
  const c = createConfirmer({ secret, replay: createMemoryReplayCache({ clock }), now: clock.now });
  return { c, advance: (ms: number) => (now += ms) };
}

const subject = { tool: 'accept_merge_request', args: { project_id: 'a/b', merge_request_iid: 1, sha: 'abc' }, forgeToken: 'glpat-x' };

describe('confirmation tokens', () => {
  it('[TOOL-CONFIRM] a token redeems once, for the same tool, arguments (any key order) and user, within 5 minutes', async () => {
    const { c, advance } = confirmer();
    const { token } = c.mint(subject);
    const reordered = { ...subject, args: { sha: 'abc', merge_request_iid: 1, project_id: 'a/b', confirmation_token: token } };
    await expect(c.redeem(token, reordered)).resolves.toBeUndefined();
    await expect(c.redeem(token, subject)).rejects.toThrow(/already used/);

    const second = c.mint(subject).token;
    await expect(c.redeem(second, { ...subject, args: { ...subject.args, sha: 'def' } })).rejects.toThrow(/other arguments/);
    await expect(c.redeem(second, { ...subject, tool: 'delete_branch' })).rejects.toThrow(/other arguments/);
    await expect(c.redeem(second, { ...subject, forgeToken: 'glpat-someone-else' })).rejects.toThrow(/other arguments/);
    advance(CONFIRMATION_TTL_MS + 1);
    await expect(c.redeem(second, subject)).rejects.toThrow(/expired/);
  });

  it('[TOOL-CONFIRM] a token of another secret, or forged, is refused', async () => {
    const { c } = confirmer();
    const other = confirmer().c.mint(subject).token;
    await expect(c.redeem(other, subject)).rejects.toBeInstanceOf(ConfirmationRefused);
    const [body] = c.mint(subject).token.split('.');
    await expect(c.redeem(`${body}.AAAA`, subject)).rejects.toThrow(/not one this server issued/);
    await expect(c.redeem('true', subject)).rejects.toThrow(/not one this server issued/);
  });

  it('[TOOL-CONFIRM] replicas sharing the secret accept each other’s tokens', async () => {
    const secret = randomBytes(32);
    const token = confirmer(secret).c.mint(subject).token;
    await expect(confirmer(secret).c.redeem(token, subject)).resolves.toBeUndefined();
  });
});
