/**
 * A forge 401 on a tool call (the token revoked or expired after the bearer was validated and cached): `/mcp`
 * answers HTTP 401 `invalid_token`, so the client re-authenticates, instead of a tool error; the next request is
 * refused at the bearer check without asking the forge.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postRpc, startStack, type Stack } from './mcp.testkit.ts';

let stack: Stack;
let token = '';

beforeEach(async () => {
  stack = await startStack({ mode: 'none', validationCacheTtlMs: 60_000 });
  token = stack.forge.forge.createPersonalAccessToken(stack.forge.user.username, ['api']);
});
afterEach(async () => {
  await stack.close();
});

const post = (message: unknown, headers: Record<string, string> = {}) => postRpc(stack.url, token, message, headers);

const whoami = (meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: 9,
  method: 'tools/call',
  params: { name: 'get_current_user', arguments: {}, ...(meta ? { _meta: meta } : {}) },
});

describe('[MCP-FORGE-401] a forge 401 on a tool call', () => {
  it('is answered HTTP 401 invalid_token, and the next request is refused without a forge call', async () => {
    expect((await post(whoami())).status).toBe(200); // validated and cached
    stack.forge.forge.revokeAllTokensOf(stack.forge.user.username);
    const refused = await post(whoami());
    expect(refused.status).toBe(401);
    expect(refused.challenge).toContain('error="invalid_token"');
    expect(JSON.parse(refused.text)).toMatchObject({ error: { code: -32001 } });
    const checks = stack.forge.forge.counters.tokenInfo + stack.forge.forge.counters.user + stack.forge.forge.counters.api;
    const again = await post({ jsonrpc: '2.0', id: 10, method: 'tools/list', params: {} });
    expect(again.status).toBe(401);
    expect(stack.forge.forge.counters.tokenInfo + stack.forge.forge.counters.user + stack.forge.forge.counters.api).toBe(checks);
  });

  it('keeps the forbidden result with status 401 and a sign-in-again message in an SSE answer already started', async () => {
    expect((await post(whoami())).status).toBe(200);
    stack.forge.forge.revokeAllTokensOf(stack.forge.user.username);
    const streamed = await post(whoami({ progressToken: 'p' }));
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain('"type":"forbidden"');
    expect(streamed.text).toContain('"status":401');
    expect(streamed.text).toMatch(/Sign in again/);
    expect((await post(whoami())).status).toBe(401);
  });
});
