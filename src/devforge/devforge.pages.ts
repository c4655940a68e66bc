/**
 * HTML pages of the dev forge: sign-in, authorize, errors and the skip-consent redirect. Self-contained (no
 * third-party assets), readable on a phone, and served with a strict Content-Security-Policy whose nonce allows
 * only the page's own style and script.
 */
import { randomBytes } from 'node:crypto';

/** Escapes text for HTML element content and double-quoted attribute values. */
function escapeHtml(value: string): string {
  return value.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
}

/** A rendered page: its HTML and the headers it must be served with. */
export interface RenderedPage {
  status: number;
  html: string;
  headers: Record<string, string>;
}

/** What each scope lets an application do, shown on the authorize page. */
const SCOPE_DESCRIPTIONS: Record<string, string> = {
  api: 'Read and write everything you can reach through the API: projects, issues, merge requests and more.',
  read_api: 'Read everything you can reach through the API, without changing anything.',
  read_user: 'Read your profile: username, name and public email.',
  read_repository: 'Read the repositories of your projects.',
  write_repository: 'Read and push to the repositories of your projects.',
  openid: 'Sign you in with OpenID Connect.',
  profile: 'Read your profile through OpenID Connect.',
  email: 'Read your primary email address through OpenID Connect.',
};

const STYLE = `
*,*::before,*::after{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f1e24;background:#f4f4f6}
header{background:#292961;color:#fff;padding:.75rem 1rem;font-weight:600}
header .tag{color:#c8c8f0;font-weight:400;font-size:.875rem}
main{max-width:32rem;margin:2rem auto;padding:0 1rem}
.card{background:#fff;border:1px solid #dcdcde;border-radius:.5rem;padding:1.5rem}
h1{font-size:1.375rem;margin:0 0 1rem}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input[type=text],input[type=password]{width:100%;padding:.6rem;font:inherit;border:1px solid #89888d;border-radius:.25rem}
input:focus,button:focus{outline:3px solid #428fdc;outline-offset:1px}
.check{display:flex;gap:.5rem;align-items:center;font-weight:400}
.actions{display:flex;gap:.75rem;justify-content:flex-end;flex-wrap:wrap;margin-top:1.5rem}
.actions form{margin:0}
button{font:inherit;padding:.6rem 1.2rem;border-radius:.25rem;border:1px solid #89888d;background:#fff;cursor:pointer;min-height:44px}
button.primary{background:#1f75cb;border-color:#1068bf;color:#fff}
button.danger{background:#dd2b0e;border-color:#c91c00;color:#fff}
.full{width:100%;margin-top:1.5rem}
.alert{background:#fdd4cd;border:1px solid #dd2b0e;border-radius:.25rem;padding:.75rem;margin-bottom:1rem}
.muted{color:#626168;font-size:.875rem}
ul.scopes{padding-left:1.25rem}ul.scopes li{margin:.5rem 0}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-word}
`;

/**
 * The Content-Security-Policy of every page. `formActionExtra` adds the redirect URI's scheme to `form-action` on
 * the authorize page: Chrome checks `form-action` against the redirect that follows a form post, so without it the
 * browser would block the way back to the client (GitLab widens `form-action` the same way).
 */
function contentSecurityPolicy(nonce: string, formActionExtra?: string | null): string {
  return [
    `default-src 'none'`,
    `style-src 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    `img-src 'self' data:`,
    ...(formActionExtra === null ? [] : [`form-action ${formActionExtra ? `'self' ${formActionExtra}` : `'self'`}`]),
    `frame-ancestors 'none'`,
    `base-uri 'none'`,
  ].join('; ');
}

function page(opts: {
  status: number;
  title: string;
  body: string;
  /** Extra `form-action` sources; `null` leaves `form-action` out. */
  formActionExtra?: string | null;
  script?: string;
}): RenderedPage {
  const nonce = randomBytes(16).toString('base64');
  const script = opts.script ? `<script nonce="${nonce}">${opts.script}</script>` : '';
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>${escapeHtml(opts.title)} · Dev Forge</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<header>Dev Forge <span class="tag">(GitLab-compatible stand-in)</span></header>
<main>
${opts.body}
</main>
${script}
</body>
</html>
`;
  return {
    status: opts.status,
    html,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': contentSecurityPolicy(nonce, opts.formActionExtra),
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    },
  };
}

function hidden(name: string, value: string | undefined): string {
  return `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value ?? '')}">`;
}

/** The sign-in form (GitLab's ids: `#user_login`, `#user_password`, `[data-testid="sign-in-button"]`). */
export function signInPage(opts: { csrfToken: string; alert?: string | undefined; login?: string }): RenderedPage {
  const alert = opts.alert ? `<div class="alert" role="alert">${escapeHtml(opts.alert)}</div>` : '';
  return page({
    status: 200,
    title: 'Sign in',
    // No `form-action` here: the sign-in post is followed by redirects to /oauth/authorize and, when that request
    // fails (say invalid_scope), on to the client's redirect URI, whose scheme can be anything (cursor://...);
    // Chrome would block that chain under form-action 'self'. The form itself only posts to this site.
    formActionExtra: null,
    body: `<div class="card">
<h1>Sign in</h1>
${alert}
<form id="new_user" action="/users/sign_in" method="post" accept-charset="UTF-8">
${hidden('authenticity_token', opts.csrfToken)}
<label for="user_login">Username or primary email</label>
<input type="text" id="user_login" name="user[login]" autocomplete="username" autocapitalize="off" autocorrect="off" required autofocus value="${escapeHtml(opts.login ?? '')}">
<label for="user_password">Password</label>
<input type="password" id="user_password" name="user[password]" autocomplete="current-password" required>
<label class="check"><input type="checkbox" id="user_remember_me" name="user[remember_me]" value="1"> Remember me</label>
<button type="submit" class="primary full" data-testid="sign-in-button">Sign in</button>
</form>
</div>`,
  });
}

/** The fields an authorize form posts back (Doorkeeper's hidden fields). */
export interface AuthorizeFormFields {
  client_id: string;
  redirect_uri: string;
  state?: string | undefined;
  response_type: string;
  scope: string;
  code_challenge?: string | undefined;
  code_challenge_method?: string | undefined;
}

function describeDestination(redirectUri: string): string {
  try {
    const url = new URL(redirectUri);
    return url.host !== '' ? url.host : url.protocol.replace(/:$/, '');
  } catch {
    return redirectUri;
  }
}

/** The authorize page: application, scopes, who is signed in, and the Deny / Authorize buttons. */
export function authorizePage(opts: {
  applicationName: string;
  username: string;
  scopes: string[];
  fields: AuthorizeFormFields;
  csrfToken: string;
}): RenderedPage {
  const { fields } = opts;
  const hiddenFields = [
    hidden('client_id', fields.client_id),
    hidden('redirect_uri', fields.redirect_uri),
    hidden('state', fields.state),
    hidden('response_type', fields.response_type),
    hidden('scope', fields.scope),
    hidden('code_challenge', fields.code_challenge),
    hidden('code_challenge_method', fields.code_challenge_method),
    hidden('authenticity_token', opts.csrfToken),
  ].join('\n');
  const scopes = opts.scopes
    .map((s) => `<li><strong>${escapeHtml(s)}</strong><br><span class="muted">${escapeHtml(SCOPE_DESCRIPTIONS[s] ?? '')}</span></li>`)
    .join('\n');
  const name = escapeHtml(opts.applicationName);
  let scheme = 'https:';
  try {
    scheme = new URL(fields.redirect_uri).protocol;
  } catch {
    // The redirect URI was validated before rendering; keep the default.
  }
  return page({
    status: 200,
    title: 'Authorization required',
    formActionExtra: scheme,
    body: `<div class="card">
<h1>Authorize ${name} to use your account?</h1>
<p>An application called <strong>${name}</strong> is requesting access to your Dev Forge account
(signed in as <strong>@${escapeHtml(opts.username)}</strong>). Only allow applications you trust.</p>
<p>After your choice the browser goes to <strong>${escapeHtml(describeDestination(fields.redirect_uri))}</strong>.</p>
<p>This application will be able to:</p>
<ul class="scopes">
${scopes}
</ul>
<div class="actions">
<form action="/oauth/authorize" method="post">
<input type="hidden" name="_method" value="delete">
${hiddenFields}
<button type="submit" data-testid="deny-button">Deny</button>
</form>
<form action="/oauth/authorize" method="post">
${hiddenFields}
<button type="submit" class="danger" id="commit-changes" data-testid="authorization-button">Authorize</button>
</form>
</div>
</div>`,
  });
}

/** The authorization error page (never a redirect): status 400 with Doorkeeper's description. */
export function errorPage(description: string, status = 400): RenderedPage {
  return page({
    status,
    title: 'An error has occurred',
    body: `<div class="card">
<h1>An error has occurred</h1>
<pre>${escapeHtml(description)}</pre>
</div>`,
  });
}

/** Rails' page for a request whose authenticity token does not match the session (status 422). */
export function csrfRejectedPage(): RenderedPage {
  return page({
    status: 422,
    title: 'The change you requested was rejected',
    body: `<div class="card">
<h1>The change you requested was rejected</h1>
<p>The form was out of date or did not come from this site. Go back, reload the page and try again.</p>
</div>`,
  });
}

/**
 * GitLab's page when the authorize step is skipped: it is not a 302 but a page that sends the browser on with a
 * script, with a link as fallback. The script reads the link, so no URL is ever embedded in script text.
 */
export function redirectPage(location: string): RenderedPage {
  return page({
    status: 200,
    title: 'Redirecting',
    body: `<div class="card">
<h1>Redirecting</h1>
<p><a id="redirect-link" href="${escapeHtml(location)}">Click here to redirect to ${escapeHtml(describeDestination(location))}</a></p>
</div>`,
    script: `window.location.replace(document.getElementById('redirect-link').href);`,
  });
}

/** A minimal dashboard: who is signed in, and a sign-out button. */
export function homePage(opts: { username?: string | undefined; csrfToken?: string | undefined }): RenderedPage {
  const body = opts.username
    ? `<div class="card"><h1>Welcome, @${escapeHtml(opts.username)}</h1>
<p class="muted">This dev forge serves GitLab's OAuth endpoints and a part of its REST API v4.</p>
<form action="/users/sign_out" method="post">${hidden('authenticity_token', opts.csrfToken)}
<button type="submit">Sign out</button></form></div>`
    : `<div class="card"><h1>Dev Forge</h1><p><a href="/users/sign_in">Sign in</a></p></div>`;
  return page({ status: 200, title: 'Dashboard', body });
}

/** A plain 404 page for unknown HTML routes. */
export function notFoundPage(): RenderedPage {
  return page({
    status: 404,
    title: 'Page not found',
    body: `<div class="card"><h1>Page not found</h1><p>Make sure the address is correct.</p></div>`,
  });
}
