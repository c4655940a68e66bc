import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeClock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { silentLogger } from '../../core/logger.ts';
import type { ForgeOAuthClient } from './mcp-local.forge-client.ts';
import { createTokenFile, type StoredTokenSet, type TokenFile } from './mcp-local.token-file.ts';
import { createOAuthTokenProvider, staticTokenProvider } from './mcp-local.token-provider.ts';

const FORGE = 'http://forge.test';
const HOUR = 3_600_000;

/**
 * A forge that rotates like GitLab: each refresh returns a new pair and retires the old refresh token. Unit tests
 * of the provider's decisions; the real dev forge is used by mcp-local.flow.test.ts.
 */
function rotatingForge(clock: { now(): number }) {
  let n = 0;
  const live = new Set<string>();
  const calls = { refresh: 0 };
  let down = false;
  const issue = (): StoredTokenSet => {
    n += 1;
    live.add(`refresh-${n}`);
    return {
      version: 1,
      forge_url: FORGE,
      client_id: 'app',
      access_token: `access-${n}`,
      refresh_token: `refresh-${n}`,
      expires_at: clock.now() + 2 * HOUR,
      scope: 'api',
    };
  };
  const client: ForgeOAuthClient = {
    exchangeCode: () => Promise.reject(new Error('not used')),
    async refresh(token) {
      calls.refresh += 1;
      await new Promise((r) => setTimeout(r, 5));
      if (down) throw new AppError('unavailable', 'the forge cannot be reached');
      if (!live.delete(token)) throw new AppError('unauthorized', 'the forge refused the refresh token (invalid_grant)');
      return issue();
    },
    revoke: () => Promise.resolve(),
    username: () => Promise.resolve('alice'),
  };
  return { client, issue, calls, live, setDown: (v: boolean) => (down = v) };
}

describe('OAuth token provider', () => {
  let dir: string;
  let tokenFile: TokenFile;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mcp-local-provider-'));
    tokenFile = createTokenFile({ path: join(dir, 'forge-token.json'), log: silentLogger() });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function setup() {
    const clock = fakeClock();
    const forge = rotatingForge(clock);
    const signIns: number[] = [];
    const provider = createOAuthTokenProvider({
      forgeUrl: FORGE,
      clientId: 'app',
      tokenFile,
      forge: forge.client,
      signIn: () => {
        signIns.push(clock.now());
        return Promise.resolve(forge.issue());
      },
      clock,
      log: silentLogger(),
    });
    return { clock, forge, signIns, provider };
  }

  it('signs in when there is no file, stores the set and reuses it', async () => {
    const { provider, signIns } = setup();
    await expect(provider.getToken()).resolves.toBe('access-1');
    await expect(provider.getToken()).resolves.toBe('access-1');
    expect(signIns).toHaveLength(1);
    expect((await tokenFile.read())?.refresh_token).toBe('refresh-1');
  });

  it('uses a valid stored set without signing in', async () => {
    const { provider, signIns, forge } = setup();
    await tokenFile.write(forge.issue());
    await expect(provider.getToken()).resolves.toBe('access-1');
    expect(signIns).toHaveLength(0);
  });

  it('refreshes five minutes before expiry, not earlier, and stores the rotated pair', async () => {
    const { provider, clock, forge, signIns } = setup();
    await provider.getToken();
    clock.advance(2 * HOUR - 5 * 60_000 - 1);
    await expect(provider.getToken()).resolves.toBe('access-1');
    expect(forge.calls.refresh).toBe(0);
    clock.advance(1);
    await expect(provider.getToken()).resolves.toBe('access-2');
    expect(forge.calls.refresh).toBe(1);
    expect(await tokenFile.read()).toMatchObject({ access_token: 'access-2', refresh_token: 'refresh-2' });
    expect(signIns).toHaveLength(1);
  });

  it('lets concurrent callers share one refresh (GitLab would refuse the second use of a rotated token)', async () => {
    const { provider, clock, forge, signIns } = setup();
    await provider.getToken();
    clock.advance(2 * HOUR);
    const tokens = await Promise.all([provider.getToken(), provider.getToken(), provider.getToken()]);
    expect(tokens).toEqual(['access-2', 'access-2', 'access-2']);
    expect(forge.calls.refresh).toBe(1);
    expect(signIns).toHaveLength(1);
  });

  it('starts a new browser sign-in when the forge refuses the refresh', async () => {
    const { provider, clock, forge, signIns } = setup();
    await provider.getToken();
    forge.live.clear(); // revoked at the forge
    clock.advance(2 * HOUR);
    await expect(provider.getToken()).resolves.toBe('access-2');
    expect(signIns).toHaveLength(2);
    expect((await tokenFile.read())?.access_token).toBe('access-2');
  });

  it('keeps the stored pair and reports the error when the forge is unreachable', async () => {
    const { provider, clock, forge, signIns } = setup();
    await provider.getToken();
    clock.advance(2 * HOUR);
    forge.setDown(true);
    await expect(provider.getToken()).rejects.toThrow(/cannot be reached/);
    expect(signIns).toHaveLength(1);
    expect((await tokenFile.read())?.refresh_token).toBe('refresh-1');
    forge.setDown(false);
    await expect(provider.getToken()).resolves.toBe('access-2');
  });

  it('picks up a pair another process rotated instead of signing in again', async () => {
    const first = setup();
    await first.provider.getToken();
    first.clock.advance(2 * HOUR);
    // Another process sharing the file refreshes first; our in-memory copy still holds refresh-1.
    const rotated = await first.forge.client.refresh('refresh-1');
    await tokenFile.write(rotated);
    await expect(first.provider.getToken()).resolves.toBe('access-2');
    expect(first.signIns).toHaveLength(1);
  });

  it('after a refused refresh, uses the pair another process stored meanwhile (a race on the shared file)', async () => {
    const { provider, clock, forge, signIns } = setup();
    await provider.getToken();
    clock.advance(2 * HOUR);
    const refresh = forge.client.refresh.bind(forge.client);
    // The other process wins the race: it rotates refresh-1 and stores the new pair while our request is in flight.
    forge.client.refresh = async (token) => {
      await tokenFile.write(await refresh(token));
      return refresh(token);
    };
    await expect(provider.getToken()).resolves.toBe('access-2');
    expect(signIns).toHaveLength(1);
  });

  it('drops a token the forge answered 401 to and refreshes', async () => {
    const { provider, forge } = setup();
    const token = await provider.getToken();
    provider.invalidate(token);
    await expect(provider.getToken()).resolves.toBe('access-2');
    expect(forge.calls.refresh).toBe(1);
  });

  it('never sends a token issued by another forge or application', async () => {
    const { provider, signIns } = setup();
    await tokenFile.write({
      version: 1,
      forge_url: 'http://other.test',
      client_id: 'app',
      access_token: 'foreign',
      refresh_token: 'r',
      expires_at: Date.UTC(2030, 0, 1),
      scope: 'api',
    });
    await expect(provider.getToken()).resolves.toBe('access-1');
    expect(signIns).toHaveLength(1);
  });

  it('static provider returns the personal access token', async () => {
    await expect(staticTokenProvider('glpat-x').getToken()).resolves.toBe('glpat-x');
  });
});
