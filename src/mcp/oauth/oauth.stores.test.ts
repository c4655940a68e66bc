import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fakeClock } from '../../core/clock.ts';
import { silentLogger } from '../../core/logger.ts';
import { parseAllowlist } from './oauth.allowlist.ts';
import { createClientMetadataResolver } from './oauth.client-metadata.ts';
import { createClientRegistry } from './oauth.clients.ts';
import { createMemoryReplayCache } from './oauth.replay.ts';
import { createSealer } from './oauth.seal.ts';
import {
  createMemoryFlowStore,
  createSealedFlowStore,
  MEMORY_STORE_MAX,
  PROXY_CODE_TTL_MS,
  type PendingTransaction,
  type ProxyCodeRecord,
} from './oauth.stores.ts';

function tx(n: number, expiresAt: number): PendingTransaction {
  return {
    clientId: `c${n}`,
    redirectUri: 'http://127.0.0.1/cb',
    codeChallenge: 'x'.repeat(43),
    scope: 'api',
    proxyVerifier: 'v'.repeat(43),
    expiresAt,
  };
}
function codeRecord(expiresAt: number): ProxyCodeRecord {
  return {
    clientId: 'c',
    redirectUri: 'http://127.0.0.1/cb',
    codeChallenge: 'x'.repeat(43),
    tokens: { access_token: 'a', token_type: 'Bearer' },
    expiresAt,
  };
}

describe('flow stores', () => {
  it('[LRU-BOUND] the in-memory stores hold at most 1000 entries: entry 1001 evicts the oldest', async () => {
    const clock = fakeClock();
    const store = createMemoryFlowStore({ clock });
    expect(MEMORY_STORE_MAX).toBe(1000);
    const states: string[] = [];
    for (let i = 0; i < 1000; i += 1) states.push(await store.savePending(tx(i, clock.now() + 600_000)));
    expect(store.pending.size).toBe(1000);
    const newest = await store.savePending(tx(1000, clock.now() + 600_000));
    expect(store.pending.size).toBe(1000);
    expect(await store.takePending(states[0] ?? '')).toEqual({ ok: false, reason: 'unknown' });
    expect((await store.takePending(states[1] ?? '')).ok).toBe(true);
    expect((await store.takePending(newest)).ok).toBe(true);
    const codes: string[] = [];
    for (let i = 0; i < 1001; i += 1) codes.push(await store.saveCode(codeRecord(clock.now() + PROXY_CODE_TTL_MS)));
    expect(store.codes.size).toBe(1000);
    expect((await store.takeCode(codes[0] ?? '')).ok).toBe(false);
    expect((await store.takeCode(codes[1000] ?? '')).ok).toBe(true);
  });

  it('[LRU-BOUND] the client registry of stateful mode is bounded the same way', async () => {
    const clock = fakeClock();
    const metadata = createClientMetadataResolver({ allowlist: parseAllowlist('defaults'), clock, log: silentLogger() });
    const registry = createClientRegistry({ clock, metadata });
    const first = await registry.register({ redirectUris: ['http://127.0.0.1/cb'] });
    for (let i = 0; i < 1000; i += 1) await registry.register({ redirectUris: ['http://127.0.0.1/cb'] });
    expect(registry.size()).toBe(1000);
    expect((await registry.resolve(first.clientId, '203.0.113.1')).ok).toBe(false);
  });

  it('[LRU-BOUND] a registration in use is evicted last: flushing it takes 1000 registrations after its last use', async () => {
    const clock = fakeClock();
    const metadata = createClientMetadataResolver({ allowlist: parseAllowlist('defaults'), clock, log: silentLogger() });
    const registry = createClientRegistry({ clock, metadata });
    const used = await registry.register({ redirectUris: ['http://127.0.0.1/cb'] });
    for (let i = 0; i < 999; i += 1) await registry.register({ redirectUris: ['http://127.0.0.1/cb'] });
    // Every sign-in resolves the client, which makes it the most recently used again.
    expect((await registry.resolve(used.clientId, '203.0.113.1')).ok).toBe(true);
    for (let i = 0; i < 999; i += 1) await registry.register({ redirectUris: ['http://127.0.0.1/cb'] });
    expect((await registry.resolve(used.clientId, '203.0.113.1')).ok).toBe(true);
  });

  it('[STATE-REPLAY] [CODE-ONCE] a state and a code are taken once; entries lapse after 10 minutes', async () => {
    const clock = fakeClock();
    const store = createMemoryFlowStore({ clock });
    const state = await store.savePending(tx(1, clock.now() + 600_000));
    expect((await store.takePending(state)).ok).toBe(true);
    expect(await store.takePending(state)).toEqual({ ok: false, reason: 'unknown' });
    const code = await store.saveCode(codeRecord(clock.now() + PROXY_CODE_TTL_MS));
    expect((await store.takeCode(code)).ok).toBe(true);
    expect((await store.takeCode(code)).ok).toBe(false);
    const late = await store.savePending(tx(2, clock.now() + 600_000));
    clock.advance(600_001);
    expect((await store.takePending(late)).ok).toBe(false);
  });

  it('[STATELESS-SEALED] [REPLAY-LOCAL] sealed states and codes open on any replica with the secret, once per replay cache', async () => {
    const clock = fakeClock();
    const secret = randomBytes(32);
    const replay = createMemoryReplayCache({ clock });
    const a = createSealedFlowStore({ sealer: createSealer({ secret, clock }), replay, clock });
    const b = createSealedFlowStore({ sealer: createSealer({ secret, clock }), replay, clock });
    const state = await a.savePending(tx(1, clock.now() + 600_000));
    const taken = await b.takePending(state);
    expect(taken.ok && taken.value.clientId).toBe('c1');
    expect(await a.takePending(state)).toEqual({ ok: false, reason: 'replayed' });
    const code = await a.saveCode(codeRecord(clock.now() + PROXY_CODE_TTL_MS));
    expect((await b.takeCode(code)).ok).toBe(true);
    expect(await b.takeCode(code)).toEqual({ ok: false, reason: 'replayed' });
    const foreign = createSealedFlowStore({ sealer: createSealer({ secret: randomBytes(32), clock }), replay, clock });
    expect(await foreign.takeCode(await a.saveCode(codeRecord(clock.now() + 1000)))).toEqual({ ok: false, reason: 'unknown_key' });
    const expiring = await a.saveCode(codeRecord(clock.now() + PROXY_CODE_TTL_MS));
    clock.advance(PROXY_CODE_TTL_MS);
    expect(await b.takeCode(expiring)).toEqual({ ok: false, reason: 'expired' });
  });

  it('[REG-VIRTUAL-ID] stateless client ids are sealed registrations any replica reads; stateful ids are UUIDs', async () => {
    const clock = fakeClock();
    const secret = randomBytes(32);
    const metadata = createClientMetadataResolver({ allowlist: parseAllowlist('defaults'), clock, log: silentLogger() });
    const replicaA = createClientRegistry({ clock, metadata, sealer: createSealer({ secret, clock }) });
    const replicaB = createClientRegistry({ clock, metadata, sealer: createSealer({ secret, clock }) });
    const client = await replicaA.register({ redirectUris: ['http://127.0.0.1:9/cb'], clientName: 'Tool' });
    const seen = await replicaB.resolve(client.clientId, '203.0.113.1');
    expect(seen.ok && seen.client.redirectUris).toEqual(['http://127.0.0.1:9/cb']);
    expect(seen.ok && seen.client.clientName).toBe('Tool');
    const stateful = createClientRegistry({ clock, metadata });
    expect((await stateful.register({ redirectUris: ['http://127.0.0.1/cb'] })).clientId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect((await stateful.resolve(client.clientId, '203.0.113.1')).ok).toBe(false);
  });
});
