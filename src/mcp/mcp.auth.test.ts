import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fakeClock } from '../core/clock.ts';
import { silentLogger } from '../core/logger.ts';
import { createBearerValidator, tokenCacheKey } from './mcp.auth.ts';
import type { TokenInfoResult } from './oauth/oauth.forge.ts';
import { createWindowRateLimiter, normalizeClientAddress } from './oauth/oauth.rate-limit.ts';

/** A forge token-info stand-in that counts calls (the flow tests use the real dev forge). */
function countingForge(answer: (token: string) => TokenInfoResult) {
  const calls: string[] = [];
  return {
    calls,
    forge: {
      async tokenInfo(token: string): Promise<TokenInfoResult> {
        calls.push(token);
        await new Promise((resolve) => setTimeout(resolve, 5));
        return answer(token);
      },
    },
  };
}

const good: TokenInfoResult = { ok: true, info: { resourceOwnerId: 1, scopes: ['api'], expiresIn: 7200, applicationUid: 'app' } };

describe('bearer validation cache', () => {
  it('[VALIDATE-CACHE] a burst of requests costs one forge check per token per TTL (at most 60 s)', async () => {
    const clock = fakeClock();
    const { forge, calls } = countingForge(() => good);
    const validator = createBearerValidator({ forge, clock, log: silentLogger(), appId: 'app', ttlMs: 120_000 });
    const results = await Promise.all(Array.from({ length: 20 }, () => validator.validate('tok-1')));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(calls).toHaveLength(1);
    clock.advance(59_999);
    await validator.validate('tok-1');
    expect(calls).toHaveLength(1);
    clock.advance(1);
    await validator.validate('tok-1');
    expect(calls).toHaveLength(2);
    await validator.validate('tok-2');
    expect(calls).toHaveLength(3);
  });

  it('[VALIDATE-CACHE] answers a cached valid token without the forge, and nothing once it expired or was forgotten', async () => {
    const clock = fakeClock();
    const { forge, calls } = countingForge((token) => (token === 'bad' ? { ok: false, kind: 'invalid', status: 401 } : good));
    const validator = createBearerValidator({ forge, clock, log: silentLogger(), appId: 'app', ttlMs: 60_000 });
    expect(validator.cachedValid('tok-1')).toBeUndefined();
    await validator.validate('tok-1');
    await validator.validate('bad');
    expect(validator.cachedValid('tok-1')).toMatchObject({ ok: true, key: tokenCacheKey('tok-1'), authInfo: { token: 'tok-1' } });
    // A refusal is cached too, but is not a valid answer.
    expect(validator.cachedValid('bad')).toBeUndefined();
    expect(calls).toEqual(['tok-1', 'bad']);
    clock.advance(60_000);
    expect(validator.cachedValid('tok-1')).toBeUndefined();
    await validator.validate('tok-1');
    expect(validator.cachedValid('tok-1')).toBeDefined();
    validator.forget('tok-1');
    expect(validator.cachedValid('tok-1')).toBeUndefined();
    expect(calls).toHaveLength(3);
  });

  it('[VALIDATE-CACHE] is keyed by a hash of the token, never the token', () => {
    expect(tokenCacheKey('secret-token')).not.toContain('secret-token');
    expect(tokenCacheKey('secret-token')).toHaveLength(43);
    // SHA-256, base64url: the same key for the same token whichever digest call makes it (replicas of two releases).
    for (const token of ['secret-token', 'glpat-\u00e9\u20ac\u{1F600}'])
      expect(tokenCacheKey(token)).toBe(createHash('sha256').update(token).digest('base64url'));
    expect(tokenCacheKey('a')).not.toBe(tokenCacheKey('b'));
  });

  it('[VALIDATE-CACHE] with the cache off every request asks the forge', async () => {
    const { forge, calls } = countingForge(() => good);
    const validator = createBearerValidator({ forge, clock: fakeClock(), log: silentLogger(), ttlMs: 0 });
    await validator.validate('t');
    await validator.validate('t');
    expect(calls).toHaveLength(2);
  });

  it('[VALIDATE-DROP-401] a token the forge answered 401 for is dropped: the next request is refused without trusting the cache', async () => {
    const { forge, calls } = countingForge(() => good);
    const validator = createBearerValidator({ forge, clock: fakeClock(), log: silentLogger() });
    expect((await validator.validate('t')).ok).toBe(true);
    validator.forget('t');
    expect(validator.size()).toBe(0);
    expect(await validator.validate('t')).toEqual({ ok: false, reason: 'invalid' });
    expect(calls).toHaveLength(1);
  });

  it('[VALIDATE-CACHE] remembers refusals for the TTL, so repeating a bad token costs one forge request', async () => {
    const clock = fakeClock();
    const { forge, calls } = countingForge(() => ({ ok: false, kind: 'invalid', status: 401 }));
    const validator = createBearerValidator({ forge, clock, log: silentLogger() });
    for (let i = 0; i < 5; i += 1) expect(await validator.validate('bad')).toEqual({ ok: false, reason: 'invalid' });
    expect(calls).toHaveLength(1);
    clock.advance(60_000);
    await validator.validate('bad');
    expect(calls).toHaveLength(2);
  });

  it('[MCP-EXPIRED-401] expired, invalid and foreign-application tokens are refused; an unreachable forge is not a 401', async () => {
    const clock = fakeClock();
    const answers: Record<string, TokenInfoResult> = {
      expired: { ok: true, info: { resourceOwnerId: 1, scopes: [], expiresIn: 0, applicationUid: 'app' } },
      invalid: { ok: false, kind: 'invalid', status: 401 },
      foreign: { ok: true, info: { resourceOwnerId: 1, scopes: [], expiresIn: 100, applicationUid: 'other-app' } },
      down: { ok: false, kind: 'unavailable', status: 0 },
      short: { ok: true, info: { resourceOwnerId: 1, scopes: [], expiresIn: 2, applicationUid: 'app' } },
    };
    const { forge, calls } = countingForge((t) => answers[t] ?? good);
    const validator = createBearerValidator({ forge, clock, log: silentLogger(), appId: 'app' });
    expect(await validator.validate('expired')).toEqual({ ok: false, reason: 'expired' });
    expect(await validator.validate('invalid')).toEqual({ ok: false, reason: 'invalid' });
    expect(await validator.validate('foreign')).toEqual({ ok: false, reason: 'wrong_application' });
    expect(await validator.validate('down')).toEqual({ ok: false, reason: 'unavailable' });
    // A cached token is not served past its own expiry: the forge is asked again.
    expect((await validator.validate('short')).ok).toBe(true);
    const asked = calls.length;
    clock.advance(1_999);
    await validator.validate('short');
    expect(calls.length).toBe(asked);
    clock.advance(1);
    await validator.validate('short');
    expect(calls.length).toBe(asked + 1);
  });
});

describe('register rate limit', () => {
  it('[REG-RATE] allows the configured number per window and then answers with the seconds to wait', () => {
    const clock = fakeClock();
    const limiter = createWindowRateLimiter({ clock, limit: 3, windowMs: 3_600_000 });
    expect([1, 2, 3].map(() => limiter.hit('a').allowed)).toEqual([true, true, true]);
    expect(limiter.hit('a')).toEqual({ allowed: false, retryAfterSeconds: 3600 });
    expect(limiter.hit('b').allowed).toBe(true);
    clock.advance(1_800_000);
    expect(limiter.hit('a')).toEqual({ allowed: false, retryAfterSeconds: 1800 });
    clock.advance(1_800_000);
    expect(limiter.hit('a').allowed).toBe(true);
  });

  it('[REG-TRUST-PROXY] normalizes forwarded addresses with ports to one key per client', () => {
    expect(normalizeClientAddress('203.0.113.7:5312')).toBe('203.0.113.7');
    expect(normalizeClientAddress('::ffff:198.51.100.4')).toBe('198.51.100.4');
    expect(normalizeClientAddress('not-an-ip:99')).toBe('not-an-ip:99');
    expect(normalizeClientAddress(undefined)).toBe('unknown');
  });

  it('[RATE-IPV6] regression: IPv6 clients were counted per full address; now by /64, IPv4-mapped as IPv4', () => {
    expect(normalizeClientAddress('[2001:db8::1]:443')).toBe('2001:db8:0:0::/64');
    expect(normalizeClientAddress('[2001:DB8::1]')).toBe('2001:db8:0:0::/64');
    expect(normalizeClientAddress('2001:db8:0:0:ffff:ffff:ffff:ffff')).toBe('2001:db8:0:0::/64');
    expect(normalizeClientAddress('2001:db8:0:1::1')).toBe('2001:db8:0:1::/64');
    expect(normalizeClientAddress('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(normalizeClientAddress('::ffff:c633:6404')).toBe('198.51.100.4');
    expect(normalizeClientAddress('[::ffff:198.51.100.4]:80')).toBe('198.51.100.4');
  });
});
