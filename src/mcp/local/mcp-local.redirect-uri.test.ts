import { describe, expect, it } from 'vitest';
import { DEFAULT_LOCAL_REDIRECT_URI, parseLoopbackRedirect, redirectUriForPort } from './mcp-local.redirect-uri.ts';

describe('parseLoopbackRedirect (local flow callback must stay on this machine)', () => {
  it.each([
    [DEFAULT_LOCAL_REDIRECT_URI, '127.0.0.1', 7171, '/callback'],
    ['http://127.0.0.5:9000/cb', '127.0.0.5', 9000, '/cb'],
    ['http://[::1]:7171/callback', '::1', 7171, '/callback'],
    ['http://localhost:7171/callback', 'localhost', 7171, '/callback'],
    ['http://127.0.0.1/callback', '127.0.0.1', 80, '/callback'],
    ['http://127.0.0.1:0/callback', '127.0.0.1', 0, '/callback'],
  ])('accepts %s', (value, bindHost, port, path) => {
    const parsed = parseLoopbackRedirect(value);
    expect(parsed).toMatchObject({ bindHost, port, path });
  });

  it.each([
    ['https://127.0.0.1:7171/callback', /http:\/\//],
    ['http://example.com:7171/callback', /loopback/],
    ['http://127.0.0.1.example.com/callback', /loopback/],
    ['http://localhost@evil.example/callback', /loopback/],
    ['http://user:pw@127.0.0.1:7171/callback', /user name/],
    ['http://127.0.0.1:7171/callback#x', /fragment/],
    ['http://127.0.0.1:7171/callback?x=1', /query/],
    ['http://10.0.0.1:7171/callback', /loopback/],
    ['127.0.0.1:7171/callback', /./],
    ['not a url', /absolute/],
  ])('refuses %s', (value, reason) => {
    const parsed = parseLoopbackRedirect(value);
    expect(typeof parsed).toBe('string');
    expect(parsed).toMatch(reason);
  });

  it('puts the real port into the redirect URI when the configured one is 0', () => {
    const parsed = parseLoopbackRedirect('http://127.0.0.1:0/callback');
    if (typeof parsed === 'string') throw new Error(parsed);
    expect(redirectUriForPort(parsed, 43210)).toBe('http://127.0.0.1:43210/callback');
  });
});
