// The early account-state read of the provider-call commands (src/admin/state-prefetch.ts): it starts only for a
// bearer whose Account an accepted lookup named before, and is handed over only for the principal the lookup accepts
// now, with that same Account; everything else reads as before, in the handler.
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/core/identity/identity.model.ts';
import { createStatePrefetch } from '../../src/admin/state-prefetch.ts';

const request = (authorization?: string) => ({ headers: authorization === undefined ? {} : { authorization } }) as FastifyRequest;

const principal = (accountId: string, via: Principal['via'] = 'bearer'): Principal => ({
  accountId,
  humanId: 'h1',
  email: 'a@example.test',
  role: 'admin',
  plane: 'platform',
  capabilities: new Set(),
  credentialId: 'c1',
  via,
});

function setup() {
  const reads: string[] = [];
  const prefetch = createStatePrefetch(async (accountId) => {
    reads.push(accountId);
    return `state of ${accountId}`;
  });
  return { reads, prefetch };
}

describe('state prefetch', () => {
  it('reads nothing early for a token it has not seen accepted, then starts the read on its next request', async () => {
    const { reads, prefetch } = setup();
    const first = request('Bearer tok_1');
    prefetch.start(first);
    expect(reads).toEqual([]);
    expect(prefetch.take(first, principal('acct-1'))).toBeUndefined();

    const second = request('Bearer tok_1');
    prefetch.start(second);
    expect(reads, 'started before the lookup answered').toEqual(['acct-1']);
    expect(await prefetch.take(second, principal('acct-1'))).toBe('state of acct-1');
    expect(prefetch.take(second, principal('acct-1')), 'handed over once').toBeUndefined();
  });

  it('hands nothing over when the accepted principal names another Account, or came by cookie', () => {
    const { reads, prefetch } = setup();
    const seen = request('Bearer tok_2');
    prefetch.start(seen);
    void prefetch.take(seen, principal('acct-2'));
    const other = request('Bearer tok_2');
    prefetch.start(other);
    expect(reads).toEqual(['acct-2']);
    expect(prefetch.take(other, principal('acct-3'))).toBeUndefined();
    const viaCookie = request('Bearer tok_2');
    prefetch.start(viaCookie);
    expect(prefetch.take(viaCookie, principal('acct-3', 'cookie'))).toBeUndefined();
  });

  it('keeps tokens apart and ignores what is not a bearer', () => {
    const { reads, prefetch } = setup();
    const a = request('Bearer tok_a');
    prefetch.start(a);
    void prefetch.take(a, principal('acct-a'));
    prefetch.start(request('Bearer tok_b'));
    prefetch.start(request('Basic dG9rX2E='));
    prefetch.start(request());
    prefetch.start(request(`Bearer ${'x'.repeat(129)}`));
    expect(reads).toEqual([]);
  });

  it('drops the read of a refused caller without an unhandled rejection', async () => {
    const prefetch = createStatePrefetch(async () => Promise.reject(new Error('database down')));
    const seen = request('Bearer tok_c');
    prefetch.start(seen);
    void prefetch.take(seen, principal('acct-c'));
    // The next request is refused by authentication: its handler never runs and never takes the read.
    prefetch.start(request('Bearer tok_c'));
    await new Promise((resolve) => setTimeout(resolve, 20));
  });
});
