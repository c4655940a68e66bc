/**
 * The client callback allowlist `FORGE_OAUTH_ALLOWED_REDIRECT_URIS` (spec "Authentication" 5; issue 3 item 4).
 *
 * Syntax, a comma-separated list of:
 * - `defaults`: the built-in list ({@link DEFAULT_ALLOWED_REDIRECT_URIS});
 * - an exact URI (`https://app.example/cb`, `myapp://oauth/callback`), compared after URL normalization;
 * - an https prefix ending in `/*` (`https://app.example/oauth/*`): any URI that starts with everything before the
 *   `*` (the trailing slash is kept, so `https://app.example.evil/` never matches), without a query, without dot
 *   segments, and without any escape that decodes to a slash, backslash, dot, `%` or control character (`%2F`,
 *   `%5C`, `%2E`, `%25`, `%00`, `%0D%0A`, `%C2%85`, any case) — a server behind the prefix may decode them (twice,
 *   for `%252F`) and route the browser out of the prefix (`…/oauth/%2F..%2F..%2Fevil`), split a header
 *   (`…/%0d%0aSet-Cookie:x`), or pass a query on (`…/oauth/x?redirect=https://evil`);
 * - a loopback prefix `http://localhost/*`, `http://127.0.0.1/*` or `http://[::1]/*`: any port and path (a port in
 *   the entry pins it);
 * - `*`: no allowlist at all (logged as a warning; not recommended).
 */
import { checkRedirectUri, isLoopbackRedirect } from './oauth.redirect-uri.ts';

/** The built-in entries: loopback on any port plus the shared callbacks of well-known clients (forge-facts.md). */
export const DEFAULT_ALLOWED_REDIRECT_URIS: readonly string[] = [
  'http://localhost/*',
  'http://127.0.0.1/*',
  'http://[::1]/*',
  // Claude (web)
  'https://claude.ai/api/mcp/auth_callback',
  'https://claude.com/api/mcp/auth_callback',
  // ChatGPT connectors
  'https://chatgpt.com/connector_platform_oauth_redirect',
  'https://chatgpt.com/connector/oauth/*',
  // Cursor
  'cursor://anysphere.cursor-mcp/oauth/callback',
  'https://www.cursor.com/agents/mcp/oauth/callback',
  // VS Code (its loopback callback http://127.0.0.1:33418 is covered by the loopback entries)
  'https://vscode.dev/redirect',
  'https://insiders.vscode.dev/redirect',
];

export type AllowlistEntry =
  | { kind: 'exact'; uri: string }
  | { kind: 'prefix'; prefix: string }
  | { kind: 'loopback'; hostname: string; port: string; pathPrefix: string };

export interface Allowlist {
  /** `*` was given: every safe URI is allowed. */
  readonly any: boolean;
  readonly entries: readonly AllowlistEntry[];
  /** Private-use schemes of native apps named by exact entries (`cursor:`); other non-http schemes are refused. */
  readonly appSchemes: ReadonlySet<string>;
}

/** Parses one entry; returns a reason string when it is not valid. */
function parseEntry(text: string): AllowlistEntry | string {
  if (text.endsWith('/*')) {
    const base = text.slice(0, -1);
    let url: URL;
    try {
      url = new URL(base);
    } catch {
      return `${text}: not an absolute URI`;
    }
    if (base.includes('*')) return `${text}: "*" is allowed only as the final "/*"`;
    if (url.username || url.password || url.search || url.hash) return `${text}: a prefix must not carry user info, a query or a fragment`;
    if (isLoopbackRedirect(url)) return { kind: 'loopback', hostname: url.hostname, port: url.port, pathPrefix: url.pathname };
    if (url.protocol !== 'https:') return `${text}: prefixes must be https (plain http only for localhost, 127.0.0.1 and [::1])`;
    return { kind: 'prefix', prefix: url.href };
  }
  if (text.includes('*')) return `${text}: "*" is allowed only alone or as the final "/*"`;
  const check = checkRedirectUri(text, new Set([safeScheme(text)]));
  if (!check.ok) return `${text}: ${check.reason}`;
  return { kind: 'exact', uri: check.url.href };
}

/** The scheme of an entry, used to accept private-use schemes named in the allowlist itself. */
function safeScheme(text: string): string {
  const match = /^([a-z][a-z0-9+.-]*:)/i.exec(text);
  return match?.[1]?.toLowerCase() ?? '';
}

/** Parses the variable's value; throws an Error with one line naming the bad entry. */
export function parseAllowlist(raw: string): Allowlist {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (items.length === 0) throw new Error('the list is empty (use "defaults")');
  const entries: AllowlistEntry[] = [];
  let any = false;
  const expanded = items.flatMap((item) => (item === 'defaults' ? DEFAULT_ALLOWED_REDIRECT_URIS : [item]));
  for (const item of expanded) {
    if (item === '*') {
      any = true;
      continue;
    }
    const entry = parseEntry(item);
    if (typeof entry === 'string') throw new Error(entry);
    entries.push(entry);
  }
  const appSchemes = new Set<string>();
  // With `*` the well-known app schemes stay usable; anything else non-http still needs naming.
  const schemeSources = any ? [...entries, ...DEFAULT_ALLOWED_REDIRECT_URIS.map((e) => parseEntry(e))] : entries;
  for (const entry of schemeSources) {
    if (typeof entry !== 'string' && entry.kind === 'exact') {
      const scheme = new URL(entry.uri).protocol;
      if (scheme !== 'http:' && scheme !== 'https:') appSchemes.add(scheme);
    }
  }
  return Object.freeze({ any, entries: Object.freeze(entries), appSchemes });
}

/**
 * Escapes of a path separator, a dot, a `%` (a second decoding turns `%252F` into `/`) or a C0 control character,
 * in any case: a server behind a prefix may decode them into separators, dot segments or header breaks.
 */
const ENCODED_SEPARATOR = /%(2f|5c|2e|25|[01][0-9a-f]|7f)/i;
/** C0 and C1 control characters, once the escapes are decoded (`%C2%85` is NEL, a line break to some parsers). */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** A `.` or `..` path segment (URL parsing resolves them, so the raw text is checked too). */
const DOT_SEGMENT = /(^|\/)\.{1,2}(\/|$)/;

/** Whether a path's escapes decode to a control character, or to no UTF-8 text at all. */
function decodesToControl(path: string): boolean {
  try {
    return CONTROL.test(decodeURIComponent(path));
  } catch {
    return true;
  }
}

/** Whether the part of a URI after a prefix entry could lead out of the prefix once a server decodes it. */
function escapesPrefix(rest: string, raw: string): boolean {
  const rawPath = raw.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '').split(/[?#]/)[0] ?? '';
  return (
    [rest, rawPath].some((path) => ENCODED_SEPARATOR.test(path) || DOT_SEGMENT.test(path) || decodesToControl(path)) || raw.includes('?')
  );
}

/** Whether one entry admits a (safe, parsed) URI; `raw` is the URI as the client wrote it. */
function entryMatches(entry: AllowlistEntry, url: URL, raw: string): boolean {
  switch (entry.kind) {
    case 'exact':
      return url.href === entry.uri;
    case 'prefix':
      return url.href.startsWith(entry.prefix) && url.search === '' && !escapesPrefix(url.href.slice(entry.prefix.length), raw);
    case 'loopback':
      return (
        isLoopbackRedirect(url) &&
        url.hostname === entry.hostname &&
        (entry.port === '' || url.port === entry.port) &&
        url.pathname.startsWith(entry.pathPrefix)
      );
  }
}

/**
 * Whether the server may redirect to `uri`: the URI must be safe ({@link checkRedirectUri}) and admitted by an
 * entry, or the list is `*`.
 */
export function isAllowedRedirectUri(list: Allowlist, uri: string): boolean {
  const check = checkRedirectUri(uri, list.appSchemes);
  if (!check.ok) return false;
  if (list.any) return true;
  return list.entries.some((entry) => entryMatches(entry, check.url, uri));
}
