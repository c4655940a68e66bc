import { describe, expect, it } from 'vitest';
import { appendQuery, isRegisteredRedirectUri, parseRedirectUri, redirectUriMatches } from './devforge.redirect-uri.ts';

describe('redirectUriMatches (Doorkeeper URIChecker, exact)', () => {
  it.each([
    ['https://app.example/cb', 'https://app.example/cb', true],
    ['https://APP.example/cb', 'https://app.example/cb', true],
    ['https://app.example', 'https://app.example/', true],
    ['https://app.example/cb/', 'https://app.example/cb', false],
    ['https://app.example/CB', 'https://app.example/cb', false],
    ['http://app.example/cb', 'https://app.example/cb', false],
    ['https://app.example:444/cb', 'https://app.example/cb', false],
    ['https://app.example/cb?x=1', 'https://app.example/cb', false],
    ['https://app.example/cb?x=1', 'https://app.example/cb?x=1', true],
    ['https://app.example.attacker.test/cb', 'https://app.example/cb', false],
    ['https://app.example@attacker.test/cb', 'https://app.example/cb', false],
    ['http://127.0.0.1:1234/cb', 'http://127.0.0.1:33418/cb', true],
    ['http://127.0.0.1/cb', 'http://127.0.0.1:33418/cb', true],
    ['http://127.0.0.2:1234/cb', 'http://127.0.0.1:33418/cb', false],
    ['http://[::1]:9/cb', 'http://[::1]:8000/cb', true],
    ['http://127.0.0.1:1234/other', 'http://127.0.0.1:33418/cb', false],
    ['https://127.0.0.1:1234/cb', 'http://127.0.0.1:33418/cb', false],
    ['http://localhost:1234/cb', 'http://localhost:6274/cb', false],
    ['http://localhost:1234/cb', 'http://127.0.0.1:1234/cb', false],
    ['cursor://anysphere.cursor-mcp/oauth/callback', 'cursor://anysphere.cursor-mcp/oauth/callback', true],
  ])('%s against %s → %s', (requested, registered, expected) => {
    expect(redirectUriMatches(requested, registered)).toBe(expected);
  });

  it('refuses fragments, relative URIs and script schemes', () => {
    expect(parseRedirectUri('https://app.example/cb#frag')).toBeUndefined();
    expect(parseRedirectUri('/cb')).toBeUndefined();
    expect(parseRedirectUri('javascript:alert(1)')).toBeUndefined();
    expect(parseRedirectUri('data:text/html,x')).toBeUndefined();
    expect(isRegisteredRedirectUri('https://app.example/cb#x', ['https://app.example/cb#x'])).toBe(false);
  });
});

describe('appendQuery', () => {
  it('keeps the URI own query and drops blank values', () => {
    expect(appendQuery('https://app.example/cb?keep=1%202', { code: 'c', state: '' })).toBe('https://app.example/cb?keep=1%202&code=c');
    expect(appendQuery('https://app.example/cb', { error: 'access_denied', error_description: 'a b', state: 's&t' })).toBe(
      'https://app.example/cb?error=access_denied&error_description=a+b&state=s%26t',
    );
  });
});
