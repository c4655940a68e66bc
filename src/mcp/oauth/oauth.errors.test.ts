/**
 * Every OAuth error answer, JSON or page, carries `Cache-Control: no-store` and `Pragma: no-cache`: the writer
 * adds them itself (oauth.errors.ts), so an endpoint cannot forget them.
 */
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_CALLBACK, authorizeUrl, pkce, registerClient, startStack, type Stack } from '../mcp.testkit.ts';
import { oauthError, sendOAuthJson } from './oauth.errors.ts';

function expectNoStore(response: Response, what: string): void {
  expect(response.headers.get('cache-control'), what).toBe('no-store');
  expect(response.headers.get('pragma'), what).toBe('no-cache');
}

const form = (fields: Record<string, string>) => ({ method: 'POST', body: new URLSearchParams(fields) });
const json = (body: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body });

/** Requests that each end in an OAuth error on `/register`, `/token` or `/revoke`, with the error expected. */
const jsonErrorCases: [string, string, RequestInit, string][] = [
  ['register without redirect_uris', '/register', json('{}'), 'invalid_redirect_uri'],
  [
    'register with bad metadata',
    '/register',
    json(JSON.stringify({ redirect_uris: [CLIENT_CALLBACK], grant_types: ['password'] })),
    'invalid_client_metadata',
  ],
  [
    'register with an unsafe redirect URI',
    '/register',
    json(JSON.stringify({ redirect_uris: ['javascript:alert(1)'] })),
    'invalid_redirect_uri',
  ],
  ['register with a body that is not JSON', '/register', json('{nope'), 'invalid_request'],
  ['token with an unknown grant', '/token', form({ grant_type: 'password' }), 'unsupported_grant_type'],
  ['token without a code', '/token', form({ grant_type: 'authorization_code' }), 'invalid_request'],
  [
    'token with an unknown code',
    '/token',
    form({ grant_type: 'authorization_code', code: 'nope', code_verifier: 'v'.repeat(43) }),
    'invalid_grant',
  ],
  ['token refresh without a refresh token', '/token', form({ grant_type: 'refresh_token' }), 'invalid_request'],
  ['token with a JSON array body', '/token', json('[1,2]'), 'invalid_request'],
  ['revoke without a token', '/revoke', form({}), 'invalid_request'],
  ['revoke with a JSON string body', '/revoke', json('"token"'), 'invalid_request'],
];

describe('OAuth error answers are never cached', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ mode: 'callback_proxy', registerLimitPerHour: 1000 });
  });
  afterAll(async () => {
    await stack.close();
  });

  it.each(jsonErrorCases)('[TOKEN-ERRORS] %s: RFC 6749 error with no-store', async (what, path, init, error) => {
    const response = await fetch(`${stack.serverUrl}${path}`, init);
    expect(response.status, what).toBeGreaterThanOrEqual(400);
    expect(((await response.json()) as { error?: string }).error, what).toBe(error);
    expectNoStore(response, what);
  });

  it('[TOKEN-ERRORS] error pages and error redirects of the browser endpoints carry no-store', async () => {
    const clientId = await registerClient(stack.serverUrl);
    const pages: [string, Promise<Response>][] = [
      [
        'authorize with an unknown client',
        fetch(authorizeUrl(stack.serverUrl, { client_id: 'unknown', redirect_uri: CLIENT_CALLBACK, code_challenge: pkce().challenge }), {
          redirect: 'manual',
        }),
      ],
      [
        'authorize with a bad PKCE method',
        fetch(
          authorizeUrl(stack.serverUrl, {
            client_id: clientId,
            redirect_uri: CLIENT_CALLBACK,
            code_challenge: pkce().challenge,
            code_challenge_method: 'plain',
          }),
          { redirect: 'manual' },
        ),
      ],
      ['callback without state', fetch(`${stack.serverUrl}/callback?code=x`, { redirect: 'manual' })],
      [
        'consent form without a CSRF token',
        fetch(`${stack.serverUrl}/authorize`, { ...form({ request: 'x', decision: 'approve' }), redirect: 'manual' }),
      ],
    ];
    for (const [what, pending] of pages) {
      const response = await pending;
      expect(response.status, what).toBeGreaterThanOrEqual(300);
      if (response.status === 302)
        expect(new URL(response.headers.get('location') ?? '').searchParams.get('error'), what).toBe('invalid_request');
      expectNoStore(response, what);
    }
  });
});

describe('sendOAuthJson', () => {
  it('[TOKEN-ERRORS] adds no-store even when the answer names other headers, and keeps them', async () => {
    const app = Fastify();
    app.get('/', async (_request, reply) =>
      sendOAuthJson(reply, oauthError(429, 'too_many_requests', 'Slow down.', { 'retry-after': '7', 'cache-control': 'max-age=60' })),
    );
    try {
      const response = await app.inject({ method: 'GET', url: '/' });
      expect(response.statusCode).toBe(429);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers.pragma).toBe('no-cache');
      expect(response.headers['retry-after']).toBe('7');
      expect(response.json()).toEqual({ error: 'too_many_requests', error_description: 'Slow down.' });
    } finally {
      await app.close();
    }
  });
});
