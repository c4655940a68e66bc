/**
 * The `POST /register` limit (spec "Limits": per client IP, `OAUTH_REGISTER_RATE_LIMIT_PER_HOUR`, default 20).
 * A fixed window per address that opens at the address's first registration; timed by the injected clock so tests
 * can move past the hour.
 */
import { isIP } from 'node:net';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../core/clock.ts';
import { addressKey } from './oauth.ip.ts';

export interface RateDecision {
  allowed: boolean;
  /** Seconds until the window reopens (for `Retry-After`), when refused. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  hit(key: string): RateDecision;
}

/** Addresses tracked at once; the least recently seen are forgotten first. */
const MAX_TRACKED = 50_000;

export function createWindowRateLimiter(deps: { clock: Clock; limit: number; windowMs: number }): RateLimiter {
  const windows = new LRUCache<string, { start: number; count: number }>({ max: MAX_TRACKED });
  return {
    hit(key) {
      const now = deps.clock.now();
      let window = windows.get(key);
      if (!window || now - window.start >= deps.windowMs) {
        window = { start: now, count: 0 };
        windows.set(key, window);
      }
      window.count += 1;
      if (window.count <= deps.limit) return { allowed: true, retryAfterSeconds: 0 };
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((window.start + deps.windowMs - now) / 1000)) };
    },
  };
}

/**
 * The client address used as the limit key. Fastify gives the socket address, or with `TRUST_PROXY` the first
 * untrusted forwarded hop, which proxies sometimes write with a port (`203.0.113.7:5312`, `[2001:db8::1]:443`): the
 * port is removed so one client counts once. IPv4-mapped IPv6 counts as the IPv4 address and IPv6 by its /64
 * ({@link addressKey}); anything unparsable falls back to the raw text rather than failing.
 */
export function normalizeClientAddress(raw: string | undefined): string {
  if (!raw) return 'unknown';
  let value = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed?.[1]) value = bracketed[1];
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(value)) value = value.slice(0, value.lastIndexOf(':'));
  return isIP(value.replace(/%.*$/, '')) !== 0 ? addressKey(value.toLowerCase()) : value.slice(0, 100);
}
