/**
 * The loopback redirect URI of the local OAuth flow (spec mcp-oauth.md point 4: only the local flow reads
 * `FORGE_OAUTH_REDIRECT_URI`). The code must come back to this machine, so only plain-http loopback addresses are
 * accepted (RFC 8252 §7.3): a redirect to any other host would hand the authorization code to someone else.
 */

/** The default callback of the local flow; register exactly this URL in the forge application. */
export const DEFAULT_LOCAL_REDIRECT_URI = 'http://127.0.0.1:7171/callback';

/** A validated loopback callback: where to listen and which path to answer. */
export interface LoopbackRedirect {
  /** The URL as configured (normalized by the URL parser). With port 0 the real port is chosen when listening. */
  url: URL;
  /** Host to bind, without IPv6 brackets (`127.0.0.1`, `::1`, `localhost`). */
  bindHost: string;
  /** Port to bind; 0 lets the system choose (works with forges that let loopback ports vary, RFC 8252 §7.3). */
  port: number;
  /** Path the forge redirects to, e.g. `/callback`. */
  path: string;
}

function isLoopbackHost(hostname: string): boolean {
  if (hostname === 'localhost' || hostname === '[::1]') return true;
  const parts = hostname.split('.');
  return parts.length === 4 && parts[0] === '127' && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

/**
 * Parses and checks a local-flow redirect URI; returns a one-line reason when it is not acceptable.
 * Accepted: `http://` to `127.0.0.0/8`, `[::1]` or `localhost`, without userinfo, query or fragment.
 */
export function parseLoopbackRedirect(value: string): LoopbackRedirect | string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not an absolute URL';
  }
  if (url.protocol !== 'http:') return 'must use http:// (the callback is served locally without TLS)';
  if (!isLoopbackHost(url.hostname)) return 'must point to a loopback address (127.0.0.1, [::1] or localhost)';
  if (url.username !== '' || url.password !== '') return 'must not contain a user name or password';
  if (url.hash !== '' || value.includes('#')) return 'must not contain a fragment';
  if (url.search !== '') return 'must not contain a query string';
  const port = url.port === '' ? 80 : Number(url.port);
  const bindHost = url.hostname === '[::1]' ? '::1' : url.hostname;
  return { url, bindHost, port, path: url.pathname };
}

/** The redirect URI to send to the forge once the listener knows its port (differs from the configured one only for port 0). */
export function redirectUriForPort(redirect: LoopbackRedirect, port: number): string {
  const url = new URL(redirect.url.href);
  url.port = String(port);
  return url.href;
}
