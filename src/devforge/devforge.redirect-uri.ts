/**
 * Redirect URI checks as GitLab's Doorkeeper does them (forge-facts.md: "Matching is exact; some releases let only
 * the port vary, and only for loopback IP literals").
 *
 * Deliberate difference from Doorkeeper: Doorkeeper ignores a query string the client adds to a registered URI that
 * has none; the dev forge compares the query too, because forge-facts.md and the MCP server's design rely on exact
 * matching and a stricter stand-in can only surface bugs, never hide them.
 */

/** Parses an absolute URI the way Doorkeeper accepts it: a scheme, a host (or opaque part) and no fragment. */
export function parseRedirectUri(value: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.hash !== '' || value.includes('#')) return undefined;
  if (url.host === '' && url.pathname === '') return undefined;
  // Doorkeeper's `forbid_redirect_uri` in GitLab refuses these schemes outright.
  if (['javascript:', 'data:', 'vbscript:'].includes(url.protocol)) return undefined;
  return url;
}

/** True for IP literals in the loopback ranges (127.0.0.0/8 and ::1), as Ruby's `IPAddr#loopback?`; never for names. */
function isLoopbackIpLiteral(url: URL): boolean {
  const host = url.hostname;
  if (host === '[::1]') return true;
  const parts = host.split('.');
  return parts.length === 4 && parts[0] === '127' && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

/** A canonical form for comparison: the parsed URL, with the port dropped when both sides are loopback literals. */
function comparable(url: URL, dropPort: boolean): string {
  const copy = new URL(url.href);
  if (dropPort) copy.port = '';
  return copy.href;
}

/** Whether a requested redirect URI matches one registered URI (exact, the port free only for loopback literals). */
export function redirectUriMatches(requested: string, registered: string): boolean {
  const a = parseRedirectUri(requested);
  const b = parseRedirectUri(registered);
  if (a === undefined || b === undefined) return false;
  const loopback = isLoopbackIpLiteral(a) && isLoopbackIpLiteral(b);
  return comparable(a, loopback) === comparable(b, loopback);
}

/** Whether a requested redirect URI is valid for an application with these registered URIs. */
export function isRegisteredRedirectUri(requested: string, registered: readonly string[]): boolean {
  return registered.some((r) => redirectUriMatches(requested, r));
}

/**
 * Appends parameters to a redirect URI without disturbing its own query, as Doorkeeper's `uri_with_query` does.
 * Parameters whose value is undefined or empty are left out (Doorkeeper drops blank `state`).
 */
export function appendQuery(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  const extra = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') extra.append(k, v);
  const own = url.search.startsWith('?') ? url.search.slice(1) : url.search;
  url.search = own === '' ? extra.toString() : `${own}&${extra.toString()}`;
  return url.href;
}
