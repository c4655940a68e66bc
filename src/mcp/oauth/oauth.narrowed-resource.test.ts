/**
 * A narrowed `/mcp/x/{toolsets}[/readonly]` URL as an OAuth resource: its own protected-resource document (RFC 9728
 * path insertion) names it exactly, and `/authorize` accepts it as `resource` beside `/mcp`; anything else is still
 * `invalid_target`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizeUrl, CLIENT_CALLBACK, pkce, registerClient, startStack, type Stack } from '../mcp.testkit.ts';

let stack: Stack;
let clientId = '';

beforeAll(async () => {
  stack = await startStack({ mode: 'callback_proxy', serverPath: '/forge' });
  clientId = await registerClient(stack.serverUrl);
});
afterAll(async () => {
  await stack.close();
});

async function authorizeWith(resource: string): Promise<{ status: number; error: string | null }> {
  const response = await fetch(
    authorizeUrl(stack.serverUrl, {
      client_id: clientId,
      redirect_uri: CLIENT_CALLBACK,
      code_challenge: pkce().challenge,
      state: 's',
      resource,
    }),
    { redirect: 'manual' },
  );
  await response.body?.cancel();
  const location = response.headers.get('location');
  return { status: response.status, error: location ? new URL(location).searchParams.get('error') : null };
}

describe('[SURFACE-URL] a narrowed URL as an OAuth resource', () => {
  it('has its own protected-resource document, at the root and under the server path', async () => {
    const origin = new URL(stack.serverUrl).origin;
    for (const url of [
      `${origin}/.well-known/oauth-protected-resource/forge/mcp/x/issues,projects`,
      `${stack.serverUrl}/.well-known/oauth-protected-resource/mcp/x/issues/readonly`,
    ]) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      const suffix = url.endsWith('/readonly') ? '/mcp/x/issues/readonly' : '/mcp/x/issues,projects';
      expect(await response.json()).toMatchObject({ resource: `${stack.serverUrl}${suffix}`, authorization_servers: [stack.serverUrl] });
    }
    expect((await fetch(`${stack.serverUrl}/.well-known/oauth-protected-resource/mcp/x/Bad%20Name`)).status).toBe(404);
  });

  it('is accepted by /authorize as resource; an unknown resource is still invalid_target', async () => {
    expect((await authorizeWith(`${stack.serverUrl}/mcp/x/issues/readonly`)).error).toBeNull();
    expect((await authorizeWith(`${stack.serverUrl}/mcp`)).error).toBeNull();
    expect((await authorizeWith(`${stack.serverUrl}/mcp/x/../admin`)).error).toBe('invalid_target');
    expect((await authorizeWith(`${stack.serverUrl}/elsewhere`)).error).toBe('invalid_target');
  });
});
