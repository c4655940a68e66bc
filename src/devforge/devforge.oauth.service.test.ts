import { describe, expect, it } from 'vitest';
import { createOAuthService } from './devforge.oauth.service.ts';
import { createDevForgeStore } from './devforge.store.ts';

describe('OAuth service memory', () => {
  it('drops used and expired codes while keeping live ones', () => {
    let now = 0;
    const store = createDevForgeStore({
      users: [{ id: 1, username: 'u', name: 'U', email: 'u@x.test', password: 'p' }],
      applications: [{ uid: 'app', name: 'A', redirectUris: ['https://a.test/cb'], confidential: false, scopes: ['api'] }],
      now,
    });
    const oauth = createOAuthService({ store, clock: () => now, accessTokenTtlSeconds: 7200 });
    const pre = oauth.preAuthorize({ client_id: 'app', redirect_uri: 'https://a.test/cb', response_type: 'code', scope: 'api' });
    if (pre.kind !== 'ok') throw new Error('pre-authorization failed');
    for (let i = 0; i < 300; i += 1) oauth.approve(pre.preAuth, 1);
    now += 601_000;
    const live = new URL(oauth.approve(pre.preAuth, 1)).searchParams.get('code') ?? '';
    for (let i = 0; i < 300; i += 1) oauth.approve(pre.preAuth, 1);
    expect(store.grants.size).toBeLessThan(320);
    const answer = oauth.token({ grant_type: 'authorization_code', code: live, redirect_uri: 'https://a.test/cb' }, { clientId: 'app' });
    expect(answer.status).toBe(200);
  });
});
