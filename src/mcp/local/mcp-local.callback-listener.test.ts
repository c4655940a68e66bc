import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/logger.ts';
import { startCallbackListener, type CallbackListener } from './mcp-local.callback-listener.ts';
import { parseLoopbackRedirect, type LoopbackRedirect } from './mcp-local.redirect-uri.ts';

function redirect(value = 'http://127.0.0.1:0/callback'): LoopbackRedirect {
  const parsed = parseLoopbackRedirect(value);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

describe('loopback callback listener', () => {
  const open: CallbackListener[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((l) => l.close()));
  });

  async function start(state = 'state-1', timeoutMs?: number) {
    const listener = await startCallbackListener({ redirect: redirect(), state, log: silentLogger(), timeoutMs });
    open.push(listener);
    return listener;
  }

  it('listens on a real port and answers the code of a callback with the right state', async () => {
    const listener = await start();
    expect(listener.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(listener.redirectUri).not.toContain(':0/');
    const response = await fetch(`${listener.redirectUri}?code=the-code&state=state-1`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await response.text()).toContain('Signed in');
    await expect(listener.code).resolves.toBe('the-code');
  });

  it('ignores callbacks with a missing or wrong state and keeps waiting for the right one', async () => {
    const listener = await start();
    expect((await fetch(`${listener.redirectUri}?code=evil`)).status).toBe(400);
    expect((await fetch(`${listener.redirectUri}?code=evil&state=state-2`)).status).toBe(400);
    expect((await fetch(`${listener.redirectUri}?error=access_denied&state=wrong`)).status).toBe(400);
    expect((await fetch(`${listener.redirectUri}?code=good&state=state-1`)).status).toBe(200);
    await expect(listener.code).resolves.toBe('good');
  });

  it('answers 404 on other paths and methods', async () => {
    const listener = await start();
    const base = new URL(listener.redirectUri);
    expect((await fetch(`${base.origin}/other?code=x&state=state-1`)).status).toBe(404);
    expect((await fetch(`${listener.redirectUri}?code=x&state=state-1`, { method: 'POST' })).status).toBe(404);
  });

  it('rejects with access_denied when the user refuses at the forge', async () => {
    const listener = await start();
    const response = await fetch(`${listener.redirectUri}?error=access_denied&error_description=nope&state=state-1`);
    expect(response.status).toBe(200);
    await expect(listener.code).rejects.toThrow(/refused at the forge \(access_denied\)/);
  });

  it('stops listening after the code arrived', async () => {
    const listener = await start();
    await fetch(`${listener.redirectUri}?code=c&state=state-1`);
    await listener.code;
    await listener.close();
    await expect(fetch(`${listener.redirectUri}?code=c2&state=state-1`)).rejects.toThrow();
  });

  it('gives up after the timeout', async () => {
    const listener = await start('state-1', 50);
    await expect(listener.code).rejects.toThrow(/no sign-in arrived/);
  });

  it('reports a port in use as a clear error', async () => {
    const first = await start();
    const port = new URL(first.redirectUri).port;
    await expect(
      startCallbackListener({ redirect: redirect(`http://127.0.0.1:${port}/callback`), state: 's', log: silentLogger() }),
    ).rejects.toThrow(/port is in use/);
  });
});
