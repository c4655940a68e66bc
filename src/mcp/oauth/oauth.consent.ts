/**
 * The consent page of callback proxy mode (spec "Authentication" 6; issue 3 item 6). The forge sees only the
 * server's callback, so it cannot tell the user where the authorization will end up; this page does, before the
 * user is sent to the forge.
 *
 * - CSRF: a random value in an HttpOnly cookie, and in the form an HMAC of that value and the sealed request, so a
 *   form posted from another site (which cannot read the cookie) fails, and a token cannot be moved to another
 *   request.
 * - Memory: approvals live 30 days in a sealed cookie, per client and callback (works on every replica).
 * - The page is self-contained (inline style allowed by a per-response nonce, no script, no third-party assets),
 *   cannot be framed (`frame-ancestors 'none'`), and is readable on a phone.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { consentKeyForRedirect, isLoopbackRedirect } from './oauth.redirect-uri.ts';
import type { Sealer } from './oauth.seal.ts';

/** Spec "Limits": consent approval memory, 30 days per client and callback URL. */
export const CONSENT_TTL_MS = 30 * 24 * 3_600_000;
/** Approvals kept in one cookie; the oldest are dropped beyond this (a cookie holds about 4 KiB). */
const MAX_APPROVALS = 20;

export interface CookieNames {
  csrf: string;
  consent: string;
  /** `Secure` and the `__Host-` prefix when the public URL is https. */
  secure: boolean;
}

/** Cookie names for a public base URL: `__Host-` prefixed (and Secure) on https. */
export function cookieNames(serverUrl: string): CookieNames {
  const secure = serverUrl.startsWith('https://');
  return secure ? { csrf: '__Host-mcp_csrf', consent: '__Host-mcp_consent', secure } : { csrf: 'mcp_csrf', consent: 'mcp_consent', secure };
}

/** A fresh CSRF cookie value. */
export function newCsrfCookieValue(): string {
  return randomBytes(32).toString('base64url');
}

/** True for a value that looks like one we issued (43 base64url characters). */
export function isCsrfCookieValue(value: string | undefined): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value);
}

/** The form's CSRF token: binds the cookie value to this one sealed request. */
export function csrfToken(key: Buffer, cookieValue: string, sealedRequest: string): string {
  return createHmac('sha256', key).update(`${cookieValue}.${sealedRequest}`).digest('base64url');
}

/**
 * Checks the form's CSRF token against the cookie, in constant time, under any of `keys` (the current secret's key
 * first, then those of secrets being rotated out, so a page rendered before a rotation can still be submitted).
 */
export function verifyCsrfToken(
  keys: readonly Buffer[],
  cookieValue: string | undefined,
  sealedRequest: string,
  token: string | undefined,
): boolean {
  if (!isCsrfCookieValue(cookieValue) || typeof token !== 'string') return false;
  const given = Buffer.from(token);
  return keys.some((key) => {
    const expected = Buffer.from(csrfToken(key, cookieValue, sealedRequest));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
}

/** One remembered approval: short hashes of the client id and the callback, and when it lapses. */
type Approval = [client: string, callback: string, expiresAt: number];

function shortHash(value: string): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, 22);
}

/** The approvals in a consent cookie (none when it is absent, expired, tampered or sealed with an unknown key). */
export function readApprovals(sealer: Sealer, cookie: string | undefined, now: number): Approval[] {
  if (!cookie) return [];
  const opened = sealer.unseal<{ a?: unknown }>('consent', cookie);
  if (!opened.ok || !Array.isArray(opened.value.a)) return [];
  return (opened.value.a as unknown[]).filter(
    (x): x is Approval =>
      Array.isArray(x) && x.length === 3 && typeof x[0] === 'string' && typeof x[1] === 'string' && typeof x[2] === 'number' && x[2] > now,
  );
}

/** Whether the user approved this client for this callback within the last 30 days. */
export function hasApproval(approvals: readonly Approval[], clientId: string, redirectUri: string): boolean {
  const client = shortHash(clientId);
  const callback = shortHash(consentKeyForRedirect(redirectUri));
  return approvals.some(([c, r]) => c === client && r === callback);
}

/** The consent cookie value after approving a client for a callback (the approval lives 30 days). */
export function withApproval(sealer: Sealer, approvals: readonly Approval[], clientId: string, redirectUri: string, now: number): string {
  const client = shortHash(clientId);
  const callback = shortHash(consentKeyForRedirect(redirectUri));
  const kept = approvals.filter(([c, r]) => !(c === client && r === callback));
  const next: Approval[] = [...kept, [client, callback, now + CONSENT_TTL_MS] as Approval].slice(-MAX_APPROVALS);
  return sealer.seal('consent', { a: next }, CONSENT_TTL_MS);
}

/** Where the browser goes after the forge, as the page names it: "this device" for loopback and app schemes. */
export function destinationLabel(redirectUri: string): string {
  const url = new URL(redirectUri);
  if (isLoopbackRedirect(url)) return 'this device';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `an app on this device (${url.protocol.slice(0, -1)})`;
  return url.host;
}

/** Origins the consent form may lead to, for CSP `form-action` (which Chromium also applies to the redirects). */
export function formActionSources(forgeUrl: string, redirectUri: string): string[] {
  const sources = ["'self'", new URL(forgeUrl).origin];
  const client = new URL(redirectUri);
  sources.push(client.protocol === 'http:' || client.protocol === 'https:' ? client.origin : client.protocol);
  return [...new Set(sources)];
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

export interface ConsentView {
  clientName: string | undefined;
  /**
   * The name was chosen by the client itself at dynamic registration (anyone can register "Claude"), so the page
   * says it is not verified. Metadata-document clients show their publishing host instead.
   */
  nameUnverified?: boolean;
  /** For client id metadata documents: the host that published the client's description. */
  clientPublisher?: string;
  redirectUri: string;
  forgeHost: string;
  scope: string;
  formAction: string;
  sealedRequest: string;
  csrf: string;
  nonce: string;
}

/** Security headers of the consent page. */
export function consentPageHeaders(nonce: string, formAction: readonly string[]): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'none'; form-action ${formAction.join(' ')}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  };
}

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1f2328}
main{max-width:32rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.35rem;margin:0 0 1rem}
p{margin:.75rem 0}
dl{margin:1rem 0;padding:.75rem 1rem;background:#f6f8fa;border-radius:8px}
dt{font-size:.8rem;color:#59636e;text-transform:uppercase;letter-spacing:.03em}
dd{margin:0 0 .6rem;overflow-wrap:anywhere;font-weight:600}
.note{font-size:.9rem;color:#59636e}
.tag{display:inline-block;font-size:.75rem;font-weight:600;padding:0 .4rem;border-radius:4px;background:#fff8c5;color:#6b4f00;border:1px solid #d4a72c;vertical-align:middle}
.actions{display:flex;gap:.75rem;margin-top:1.25rem;flex-wrap:wrap}
button{flex:1 1 8rem;min-height:2.75rem;font-size:1rem;border-radius:8px;border:1px solid #d0d7de;cursor:pointer;padding:.5rem 1rem}
button.approve{background:#1f6feb;border-color:#1f6feb;color:#fff}
button.deny{background:#fff;color:#1f2328}
@media (max-width:36rem){main{margin:0;border-radius:0;min-height:100vh;box-shadow:none}}
@media (prefers-color-scheme:dark){body{background:#0d1117;color:#e6edf3}main{background:#161b22}dl{background:#0d1117}dt,.note{color:#9198a1}button.deny{background:#21262d;color:#e6edf3;border-color:#3d444d}}
`;

/** The consent page (HTML). Every dynamic value is escaped. */
export function renderConsentPage(view: ConsentView): string {
  const name = view.clientName?.trim() ? escapeHtml(view.clientName.trim()) : 'An application';
  const destination = escapeHtml(destinationLabel(view.redirectUri));
  const publisher = view.clientPublisher ? `<dt>Described by</dt><dd>${escapeHtml(view.clientPublisher)}</dd>` : '';
  const unverified =
    view.nameUnverified && view.clientName?.trim() ? ' <span class="tag" data-testid="name-unverified">not verified</span>' : '';
  const unverifiedNote = unverified ? '<span class="note"> — the application chose this name itself; it is not verified</span>' : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Allow access to your forge account?</title>
<style nonce="${view.nonce}">${STYLE}</style>
</head>
<body>
<main>
<h1>Allow access to your forge account?</h1>
<p><strong data-testid="client-name">${name}</strong>${unverified} wants to use the forge MCP server with your account on <strong>${escapeHtml(view.forgeHost)}</strong>.</p>
<dl>
<dt>Application</dt><dd>${name}${unverifiedNote}</dd>
${publisher}<dt>After you sign in, your browser goes to</dt><dd data-testid="destination">${destination}</dd>
<dt>Callback</dt><dd class="note">${escapeHtml(view.redirectUri)}</dd>
<dt>Access requested</dt><dd>${escapeHtml(view.scope)}</dd>
</dl>
<p class="note">Approve only if you started this sign-in yourself and you recognise where your browser will go. The application will be able to act on the forge as you.</p>
<form method="post" action="${escapeHtml(view.formAction)}">
<input type="hidden" name="request" value="${escapeHtml(view.sealedRequest)}">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<div class="actions">
<button type="submit" name="decision" value="deny" class="deny">Deny</button>
<button type="submit" name="decision" value="approve" class="approve">Approve</button>
</div>
</form>
</main>
</body>
</html>`;
}

/** A plain error page for requests that cannot be redirected back to a client (unknown client, bad callback). */
export function renderErrorPage(title: string, message: string, nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
<p role="alert">${escapeHtml(message)}</p>
</main>
</body>
</html>`;
}
