import { describe, expect, it } from 'vitest';
import { DEFAULT_ALLOWED_REDIRECT_URIS, isAllowedRedirectUri, parseAllowlist } from './oauth.allowlist.ts';
import { checkRedirectUri, consentKeyForRedirect, redirectUriMatches } from './oauth.redirect-uri.ts';

describe('allowlist', () => {
  const defaults = parseAllowlist('defaults');

  it('[ALLOW-DEFAULTS] admits loopback callbacks on any port and path', () => {
    for (const uri of [
      'http://localhost:6274/oauth/callback',
      'http://127.0.0.1:33418',
      'http://127.0.0.1:51234/callback?x=1',
      'http://[::1]:8000/cb',
      'http://localhost/cb',
    ]) {
      expect(isAllowedRedirectUri(defaults, uri), uri).toBe(true);
    }
  });

  it('[ALLOW-DEFAULTS] admits the shared callbacks of well-known clients from forge-facts.md', () => {
    for (const uri of [
      'https://claude.ai/api/mcp/auth_callback',
      'https://claude.com/api/mcp/auth_callback',
      'https://chatgpt.com/connector_platform_oauth_redirect',
      'https://chatgpt.com/connector/oauth/abc123',
      'cursor://anysphere.cursor-mcp/oauth/callback',
      'https://www.cursor.com/agents/mcp/oauth/callback',
      'https://vscode.dev/redirect',
      'https://insiders.vscode.dev/redirect',
    ]) {
      expect(isAllowedRedirectUri(defaults, uri), uri).toBe(true);
    }
    expect(DEFAULT_ALLOWED_REDIRECT_URIS.length).toBeGreaterThan(8);
  });

  it('[ALLOW-DEFAULTS] refuses look-alikes of the default entries', () => {
    for (const uri of [
      'https://claude.ai/api/mcp/auth_callback/extra',
      'https://claude.ai.evil.example/api/mcp/auth_callback',
      'https://chatgpt.com/connector/oauthx',
      'https://chatgpt.com/connector/oauth/../../evil',
      'https://evil.example/callback',
      'http://localhost.evil.example/cb',
      'http://127.0.0.1.nip.io/cb',
      'https://localhost/cb',
      'cursor://evil/oauth/callback',
    ]) {
      expect(isAllowedRedirectUri(defaults, uri), uri).toBe(false);
    }
  });

  it('[ALLOW-SYNTAX] combines entries, keeps the trailing slash of prefixes and matches exact entries exactly', () => {
    const list = parseAllowlist('defaults, https://app.example/cb ,https://hooks.example/oauth/*');
    expect(isAllowedRedirectUri(list, 'https://app.example/cb')).toBe(true);
    expect(isAllowedRedirectUri(list, 'https://app.example/cb2')).toBe(false);
    expect(isAllowedRedirectUri(list, 'https://app.example/cb?x=1')).toBe(false);
    expect(isAllowedRedirectUri(list, 'https://hooks.example/oauth/tenant-1/callback')).toBe(true);
    expect(isAllowedRedirectUri(list, 'https://hooks.example/oauth')).toBe(false);
    expect(isAllowedRedirectUri(list, 'https://hooks.example/oauthx/cb')).toBe(false);
    expect(isAllowedRedirectUri(list, 'https://hooks.example:8443/oauth/cb')).toBe(false);
    expect(isAllowedRedirectUri(list, 'http://127.0.0.1:9/cb')).toBe(true);
    const noDefaults = parseAllowlist('https://app.example/cb');
    expect(isAllowedRedirectUri(noDefaults, 'http://127.0.0.1:9/cb')).toBe(false);
    expect(isAllowedRedirectUri(noDefaults, 'https://claude.ai/api/mcp/auth_callback')).toBe(false);
  });

  it('[ALLOW-SYNTAX] a loopback prefix with a port pins the port', () => {
    const list = parseAllowlist('http://127.0.0.1:33418/*');
    expect(isAllowedRedirectUri(list, 'http://127.0.0.1:33418/x')).toBe(true);
    expect(isAllowedRedirectUri(list, 'http://127.0.0.1:33419/x')).toBe(false);
  });

  it('[ALLOW-SYNTAX] refuses invalid entries with a reason naming them', () => {
    expect(() => parseAllowlist('http://example.com/*')).toThrow(/http:\/\/example.com\/\*: prefixes must be https/);
    expect(() => parseAllowlist('https://*.example.com/cb')).toThrow(/\*/);
    expect(() => parseAllowlist('https://example.com/a*b')).toThrow(/\*/);
    expect(() => parseAllowlist('not a uri')).toThrow(/not a uri/);
    expect(() => parseAllowlist('http://example.com/cb')).toThrow(/plain http/);
    expect(() => parseAllowlist(' , ')).toThrow(/empty/);
  });

  it('[ALLOW-PREFIX-STRICT] regression: a /* prefix admitted queries and encoded separators after the prefix', () => {
    for (const uri of [
      'https://chatgpt.com/connector/oauth/x?redirect=https://evil.example',
      'https://chatgpt.com/connector/oauth/x?',
      'https://chatgpt.com/connector/oauth/%2F..%2F..%2Fevil',
      'https://chatgpt.com/connector/oauth/%2f..%2f..%2fevil',
      'https://chatgpt.com/connector/oauth/x%5C..%5Cevil',
      'https://chatgpt.com/connector/oauth/x%5c..%5cevil',
      'https://chatgpt.com/connector/oauth/%2E%2E/evil',
      'https://chatgpt.com/connector/oauth/x/%2e%2e/y',
      'https://chatgpt.com/connector/oauth/x/%2e/y',
      'https://chatgpt.com/connector/oauth/x/../y',
      'https://chatgpt.com/connector/oauth/x/./y',
      'https://chatgpt.com/connector/oauth/x/..',
    ]) {
      expect(isAllowedRedirectUri(defaults, uri), uri).toBe(false);
    }
    const custom = parseAllowlist('https://hooks.example/mcp/*');
    expect(isAllowedRedirectUri(custom, 'https://hooks.example/mcp/tenant?next=/x')).toBe(false);
    expect(isAllowedRedirectUri(custom, 'https://hooks.example/mcp/a%2Fb')).toBe(false);
    // Plain paths under the prefix still match, dots inside a name included.
    expect(isAllowedRedirectUri(defaults, 'https://chatgpt.com/connector/oauth/abc123')).toBe(true);
    expect(isAllowedRedirectUri(defaults, 'https://chatgpt.com/connector/oauth/a.b/c..d')).toBe(true);
    expect(isAllowedRedirectUri(custom, 'https://hooks.example/mcp/tenant-1/callback')).toBe(true);
    // Exact entries keep their own query rules (the query must match exactly), and loopback callbacks may carry one.
    expect(isAllowedRedirectUri(parseAllowlist('https://app.example/cb?x=1'), 'https://app.example/cb?x=1')).toBe(true);
    expect(isAllowedRedirectUri(defaults, 'http://127.0.0.1:51234/callback?x=1')).toBe(true);
  });

  it('[ALLOW-PREFIX-STRICT] regression: a /* prefix admitted double-encoded separators, %00 and an encoded CRLF', () => {
    const list = parseAllowlist('https://app.example.com/oauth/*');
    for (const uri of [
      'https://app.example.com/oauth/%252F..%252Fevil',
      'https://app.example.com/oauth/%252f..%252fevil',
      'https://app.example.com/oauth/%255C..%255Cevil',
      'https://app.example.com/oauth/%252E%252E/evil',
      'https://app.example.com/oauth/x%25',
      'https://app.example.com/oauth/x%00',
      'https://app.example.com/oauth/%0d%0aSet-Cookie:x',
      'https://app.example.com/oauth/%0D%0ASet-Cookie:x',
      'https://app.example.com/oauth/x%09y',
      'https://app.example.com/oauth/x%1F',
      'https://app.example.com/oauth/x%7f',
      // C1 controls (NEL) in UTF-8, and escapes that are no UTF-8 at all.
      'https://app.example.com/oauth/x%C2%85y',
      'https://app.example.com/oauth/x%C0%AFy',
      'https://app.example.com/oauth/x%FF',
    ]) {
      expect(isAllowedRedirectUri(list, uri), uri).toBe(false);
    }
    // Other escapes (a space, non-ASCII letters) and plain names stay allowed under the prefix.
    for (const uri of [
      'https://app.example.com/oauth/a%20b',
      'https://app.example.com/oauth/caf%C3%A9',
      'https://app.example.com/oauth/cb-1_x~y',
      'https://app.example.com/oauth/%41',
    ]) {
      expect(isAllowedRedirectUri(list, uri), uri).toBe(true);
    }
  });

  it('[ALLOW-STAR] * admits every safe URI but still refuses unsafe ones', () => {
    const any = parseAllowlist('*');
    expect(any.any).toBe(true);
    expect(isAllowedRedirectUri(any, 'https://anything.example/cb')).toBe(true);
    expect(isAllowedRedirectUri(any, 'cursor://anysphere.cursor-mcp/oauth/callback')).toBe(true);
    expect(isAllowedRedirectUri(any, 'javascript:alert(1)')).toBe(false);
    expect(isAllowedRedirectUri(any, 'http://evil.example/cb')).toBe(false);
    expect(isAllowedRedirectUri(any, 'https://user@evil.example/cb')).toBe(false);
  });
});

describe('redirect URI safety and matching', () => {
  const schemes = new Set(['cursor:']);

  it('[REG-UNSAFE] refuses unsafe redirect URIs', () => {
    for (const uri of [
      'javascript:alert(1)',
      'data:text/html,hi',
      'file:///etc/passwd',
      'vbscript:x',
      'http://evil.example/cb',
      'http://localhost@evil.example/cb',
      'https://localhost@evil.example/cb',
      'http://user:pass@127.0.0.1/cb',
      'https://app.example/cb#frag',
      'https://app.example/cb#',
      'myapp://callback',
      'https://app.example/c b',
      'https://app.example\\@evil.example/cb',
      '/relative/cb',
      '',
      `https://app.example/${'a'.repeat(2100)}`,
    ]) {
      expect(checkRedirectUri(uri, schemes).ok, uri).toBe(false);
    }
  });

  it('[REG-UNSAFE] accepts https, loopback http and named app schemes', () => {
    for (const uri of [
      'https://app.example/cb',
      'http://127.0.0.1:1234/cb',
      'http://[::1]/cb',
      'http://localhost:6274/oauth/callback',
      'cursor://anysphere.cursor-mcp/oauth/callback',
    ]) {
      expect(checkRedirectUri(uri, schemes).ok, uri).toBe(true);
    }
  });

  it('[AUTHZ-REGISTERED] matches exactly, letting only the loopback port differ', () => {
    expect(redirectUriMatches('https://app.example/cb', 'https://app.example/cb')).toBe(true);
    expect(redirectUriMatches('https://app.example/cb/', 'https://app.example/cb')).toBe(false);
    expect(redirectUriMatches('https://app.example:8443/cb', 'https://app.example/cb')).toBe(false);
    expect(redirectUriMatches('https://APP.example/cb', 'https://app.example/cb')).toBe(true);
    expect(redirectUriMatches('http://127.0.0.1:5555/cb', 'http://127.0.0.1:1234/cb')).toBe(true);
    expect(redirectUriMatches('http://localhost:5555/cb', 'http://localhost/cb')).toBe(true);
    expect(redirectUriMatches('http://127.0.0.1:5555/other', 'http://127.0.0.1:1234/cb')).toBe(false);
    expect(redirectUriMatches('http://localhost:5555/cb', 'http://127.0.0.1:5555/cb')).toBe(false);
    expect(consentKeyForRedirect('http://127.0.0.1:5555/cb')).toBe(consentKeyForRedirect('http://127.0.0.1:6666/cb'));
  });
});
