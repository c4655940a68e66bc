/**
 * Where the callback-proxy flow keeps its records between requests (spec "Stored records"): in a bounded LRU in
 * this process (stateful mode: at most 1000 entries, 10-minute lifetime), or sealed into the opaque parameters
 * themselves (stateless mode), so any replica can continue a flow another replica started.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../core/clock.ts';
import type { ReplayCache } from './oauth.replay.ts';
import type { Sealer, UnsealFailure } from './oauth.seal.ts';

/** Spec "Limits": the in-memory stores hold at most 1000 entries. */
export const MEMORY_STORE_MAX = 1000;
/** Spec "Limits": proxy codes live 10 minutes; pending transactions get the same lifetime. */
export const PROXY_CODE_TTL_MS = 10 * 60_000;
export const PENDING_TTL_MS = 10 * 60_000;

/** The pending transaction between `/authorize` and `/callback` (spec "Stored records"). */
export interface PendingTransaction {
  clientId: string;
  redirectUri: string;
  /** The client's own state, returned to it unchanged. */
  state?: string;
  codeChallenge: string;
  scope: string;
  /** Proxy PKCE verifier for the server-to-forge leg (spec "Authentication" 2). */
  proxyVerifier: string;
  expiresAt: number;
}

/** The forge's token response, kept until the client redeems its proxy code. */
export interface ForgeTokens {
  access_token: string;
  token_type: string;
  refresh_token?: string;
  expires_in?: number;
  scope?: string;
  created_at?: number;
}

/** Stored tokens under a one-time proxy code, bound to the client, its callback and its PKCE challenge. */
export interface ProxyCodeRecord {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  tokens: ForgeTokens;
  expiresAt: number;
}

/**
 * Why a state or code could not be taken; logged, never shown to clients. `unavailable`: the value is genuine but
 * its one-time use could not be recorded (the shared replay cache is unreachable), so it is refused.
 */
export type TakeFailure = 'unknown' | 'replayed' | 'expired' | 'unavailable' | UnsealFailure;

/** A failure may carry the genuine value (`known`) when only recording its use failed, so callers can answer it. */
export type Taken<T> = { ok: true; value: T } | { ok: false; reason: TakeFailure; known?: T };

export interface FlowStore {
  /** Keeps a pending transaction; returns the proxy `state` to send to the forge. */
  savePending(tx: PendingTransaction): Promise<string>;
  /** Takes (and removes) a pending transaction by proxy state: a state works once. */
  takePending(state: string): Promise<Taken<PendingTransaction>>;
  /** Keeps tokens; returns the one-time proxy code. */
  saveCode(record: ProxyCodeRecord): Promise<string>;
  /** Takes (and removes) a proxy code. Expiry is checked by the caller, before any token is returned. */
  takeCode(code: string): Promise<Taken<ProxyCodeRecord>>;
  /** Drops expired entries now (stateful mode; the listener calls it every minute). */
  sweep?(): void;
}

/** A random opaque handle: 256 bits, URL-safe. */
export function randomHandle(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * A bounded LRU whose time is `clock` (so fake clocks drive expiry in tests) and whose `take` is get-and-delete.
 * `onDiscard` hears of entries that leave unused: evicted by newer ones, or expired.
 */
export function createBoundedStore<T extends object>(deps: {
  clock: Clock;
  max?: number;
  ttlMs: number;
  onDiscard?: (value: T) => void;
}): {
  cache: LRUCache<string, T>;
  put(key: string, value: T): void;
  take(key: string): T | undefined;
} {
  const onDiscard = deps.onDiscard;
  const cache = new LRUCache<string, T>({
    max: deps.max ?? MEMORY_STORE_MAX,
    ttl: deps.ttlMs,
    ttlResolution: 0,
    perf: { now: () => deps.clock.now() },
    ...(onDiscard
      ? {
          dispose: (value: T, _key: string, reason: LRUCache.DisposeReason) =>
            reason === 'evict' || reason === 'expire' ? onDiscard(value) : undefined,
        }
      : {}),
  });
  return {
    cache,
    put: (key, value) => void cache.set(key, value),
    take: (key) => {
      const value = cache.get(key);
      if (value !== undefined) cache.delete(key);
      return value;
    },
  };
}

/**
 * Stateful mode: both records in bounded in-memory LRUs of this process. `onCodeDiscarded` hears of proxy codes
 * that leave unredeemed (evicted or expired), so the forge tokens behind them can be revoked.
 */
export function createMemoryFlowStore(deps: {
  clock: Clock;
  max?: number;
  onCodeDiscarded?: (record: ProxyCodeRecord) => void;
}): FlowStore & {
  pending: LRUCache<string, PendingTransaction>;
  codes: LRUCache<string, ProxyCodeRecord>;
  sweep(): void;
} {
  const pending = createBoundedStore<PendingTransaction>({
    clock: deps.clock,
    ttlMs: PENDING_TTL_MS,
    ...(deps.max ? { max: deps.max } : {}),
  });
  const codes = createBoundedStore<ProxyCodeRecord>({
    clock: deps.clock,
    ttlMs: PROXY_CODE_TTL_MS,
    ...(deps.max ? { max: deps.max } : {}),
    ...(deps.onCodeDiscarded ? { onDiscard: deps.onCodeDiscarded } : {}),
  });
  return {
    pending: pending.cache,
    codes: codes.cache,
    sweep() {
      pending.cache.purgeStale();
      codes.cache.purgeStale();
    },
    async savePending(tx) {
      const state = randomHandle();
      pending.put(state, tx);
      return state;
    },
    async takePending(state) {
      const tx = pending.take(state);
      if (!tx) return { ok: false, reason: 'unknown' };
      return tx.expiresAt > deps.clock.now() ? { ok: true, value: tx } : { ok: false, reason: 'expired' };
    },
    async saveCode(record) {
      const code = randomHandle();
      codes.put(code, record);
      return code;
    },
    async takeCode(code) {
      const record = codes.take(code);
      if (!record) return { ok: false, reason: 'unknown' };
      if (record.expiresAt > deps.clock.now()) return { ok: true, value: record };
      deps.onCodeDiscarded?.(record);
      return { ok: false, reason: 'expired' };
    },
  };
}

/**
 * Stateless mode: the records are sealed into the proxy state and the proxy code; a random `jti` in each, consumed
 * in the replay cache, makes them one-time.
 */
export function createSealedFlowStore(deps: { sealer: Sealer; replay: ReplayCache; clock: Clock }): FlowStore {
  const take = async <T extends { expiresAt: number }>(purpose: 'tx' | 'code', sealed: string): Promise<Taken<T>> => {
    const opened = deps.sealer.unseal<T & { jti?: unknown }>(purpose, sealed);
    if (!opened.ok) return opened;
    const { jti, ...rest } = opened.value;
    const value = rest as unknown as T;
    if (typeof jti !== 'string') return { ok: false, reason: 'malformed' };
    let firstUse: boolean;
    try {
      firstUse = await deps.replay.consume(`${purpose}:${jti}`, value.expiresAt);
    } catch {
      // Fail closed, but say what the value was: the caller can still send the client an error, not a dead end.
      return { ok: false, reason: 'unavailable', known: value };
    }
    if (!firstUse) return { ok: false, reason: 'replayed' };
    return { ok: true, value };
  };
  return {
    async savePending(tx) {
      return deps.sealer.seal('tx', { ...tx, jti: randomUUID() }, tx.expiresAt - deps.clock.now());
    },
    takePending: (state) => take<PendingTransaction>('tx', state),
    async saveCode(record) {
      return deps.sealer.seal('code', { ...record, jti: randomUUID() }, record.expiresAt - deps.clock.now());
    },
    takeCode: (code) => take<ProxyCodeRecord>('code', code),
  };
}
