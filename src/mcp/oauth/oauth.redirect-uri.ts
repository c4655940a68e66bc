/**
 * Redirect URI rules shared by `/register`, `/authorize` and the allowlist: which URIs are safe to redirect a
 * signed-in browser to at all, and how a requested URI is compared with a registered one.
 */

/** The loopback host names a native client may listen on (forge-facts.md: matched on any port, RFC 8252 §7.3). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Schemes never accepted as a redirect target, whatever the allowlist says (script or local-content schemes). */
const FORBIDDEN_SCHEMES = new Set([
  'javascript:',
  'data:',
  'vbscript:',
  'file:',
  'blob:',
  'about:',
  'filesystem:',
  'view-source:',
  'ws:',
  'wss:',
  'ftp:',
]);

/** Longest redirect URI accepted; browsers and proxies start truncating URLs not far beyond this. */
export const MAX_REDIRECT_URI_LENGTH = 2000;

export type RedirectUriCheck = { ok: true; url: URL } | { ok: false; reason: string };

/** True for `http://localhost`, `http://127.0.0.1` and `http://[::1]` on any port. */
export function isLoopbackRedirect(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/**
 * Checks that a redirect URI is safe to send a browser to (issue 3 item 3): absolute, no fragment, no user info
 * (which defeats `http://localhost@evil.example` tricks), no control characters, `https`, plain `http` only on
 * loopback, and any other scheme only when it is one of `appSchemes` (private-use schemes of native apps that the
 * allowlist names, such as `cursor:`).
 */
export function checkRedirectUri(value: string, appSchemes: ReadonlySet<string>): RedirectUriCheck {
  if (value.length === 0 || value.length > MAX_REDIRECT_URI_LENGTH) return { ok: false, reason: 'empty or too long' };
  // Control characters, spaces and backslashes are either stripped or rewritten by URL parsers, so what would be
  // compared is not what the client sent.
  // eslint-disable-next-line no-control-regex -- matching control characters is the point of this check
  if (/[\u0000-\u0020\u007f\\]/.test(value)) return { ok: false, reason: 'contains whitespace, control characters or backslashes' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, reason: 'not an absolute URI' };
  }
  if (value.includes('#')) return { ok: false, reason: 'has a fragment' };
  if (url.username !== '' || url.password !== '' || /^[a-z][a-z0-9+.-]*:\/\/[^/?]*@/i.test(value)) {
    return { ok: false, reason: 'has user information' };
  }
  const scheme = url.protocol;
  if (FORBIDDEN_SCHEMES.has(scheme)) return { ok: false, reason: `scheme ${scheme} is not allowed` };
  if (scheme === 'https:') {
    if (url.hostname === '') return { ok: false, reason: 'has no host' };
    return { ok: true, url };
  }
  if (scheme === 'http:') {
    return isLoopbackRedirect(url) ? { ok: true, url } : { ok: false, reason: 'plain http is allowed only for loopback hosts' };
  }
  if (!appSchemes.has(scheme)) return { ok: false, reason: `scheme ${scheme} is not a registered app scheme` };
  return { ok: true, url };
}

/**
 * Whether a requested redirect URI matches a registered one: exactly (after normalization), except that loopback
 * callbacks may use any port (RFC 8252 §7.3; issue 3 item 5 "exact, loopback port excepted").
 */
export function redirectUriMatches(requested: string, registered: string): boolean {
  let a: URL;
  let b: URL;
  try {
    a = new URL(requested);
    b = new URL(registered);
  } catch {
    return false;
  }
  if (a.href === b.href) return true;
  if (isLoopbackRedirect(a) && isLoopbackRedirect(b) && a.hostname === b.hostname) {
    a.port = '';
    b.port = '';
    return a.href === b.href;
  }
  return false;
}

/** The registered URI a request matches, if any. */
export function findRegisteredRedirectUri(requested: string, registered: readonly string[]): string | undefined {
  return registered.find((r) => redirectUriMatches(requested, r));
}

/**
 * The key under which consent is remembered for a callback: the normalized URI, with the port of a loopback
 * callback removed, because native clients pick a new ephemeral port for every sign-in.
 */
export function consentKeyForRedirect(uri: string): string {
  const url = new URL(uri);
  if (isLoopbackRedirect(url)) url.port = '';
  return url.href;
}

/** Appends parameters to a redirect URI, keeping its own query (RFC 6749 §3.1.2: the query must be retained). */
export function withQuery(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.append(key, value);
  return url.href;
}
