/**
 * Who may talk to `/mcp` from a browser (issue 17 item 2; MCP 2026-07-28 "Security": validate `Origin`, 403 when
 * invalid). A request without `Origin` is not from a web page (native clients, SDK clients, curl) and passes; one
 * with an Origin passes only when that origin is the server's own (`MCP_SERVER_URL`) or listed in
 * `MCP_ALLOWED_ORIGINS`. `null` (sandboxed frames, `file:` pages, some redirects) is never allowed.
 *
 * Bound to loopback, the `Host` header must name the configured public host or a loopback name: a page that
 * rebinds its own domain to 127.0.0.1 (DNS rebinding) sends its own domain as Host and is refused. Ports are not
 * compared (a reverse proxy may or may not keep them); names are.
 */

export interface McpGuard {
  /** The origin to echo in CORS headers, `undefined` when there is no Origin, or `false` when it is refused. */
  origin(header: string | undefined): string | undefined | false;
  /** Whether the Host header is acceptable (always true unless bound to loopback). */
  host(header: string | undefined): boolean;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** Whether a bind address is a loopback one (the DNS-rebinding check applies only there). */
export function isLoopbackBind(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Parses `MCP_ALLOWED_ORIGINS`: comma-separated origins (`scheme://host[:port]`, no path). Throws with the
 * offending entry; the configuration reports it as one line at start.
 */
export function parseAllowedOrigins(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      let url: URL;
      try {
        url = new URL(entry);
      } catch {
        throw new Error(`not an origin: ${entry}`);
      }
      if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== entry.replace(/\/$/, '')) {
        throw new Error(`not an origin (scheme://host[:port], nothing after): ${entry}`);
      }
      return url.origin;
    });
}

export function createMcpGuard(settings: { serverUrl: string | undefined; allowedOrigins: readonly string[]; bindHost: string }): McpGuard {
  const origins = new Set(settings.allowedOrigins);
  let publicHost: string | undefined;
  if (settings.serverUrl) {
    const url = new URL(settings.serverUrl);
    origins.add(url.origin);
    publicHost = url.hostname;
  }
  const checkHost = isLoopbackBind(settings.bindHost);
  const hosts = new Set([...LOOPBACK_NAMES, ...(publicHost ? [publicHost] : [])]);
  return {
    origin(header) {
      if (header === undefined) return undefined;
      // Origins compare as serialized by the URL parser (lower-case scheme and host, default port dropped).
      let origin: string;
      try {
        origin = new URL(header).origin;
      } catch {
        return false;
      }
      return origin !== 'null' && origins.has(origin) ? origin : false;
    },
    host(header) {
      if (!checkHost) return true;
      if (header === undefined) return false;
      try {
        return hosts.has(new URL(`http://${header}`).hostname);
      } catch {
        return false;
      }
    },
  };
}
