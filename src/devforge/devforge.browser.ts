/**
 * A minimal browser made of `fetch` and a cookie jar, able to walk the dev forge's sign-in and authorize pages.
 * For tests and benchmarks that need a real authorization code without a headless browser (the forge's own pages
 * are simple, known HTML; this is not a general HTML client).
 */

/** A cookie-keeping HTTP client with helpers for the dev forge's pages. */
export interface ForgeBrowser {
  /** A request with the jar's cookies for the URL's host; redirects are not followed. */
  request(url: string, init?: { method?: string; form?: Record<string, string>; headers?: Record<string, string> }): Promise<Response>;
  /**
   * Walks an authorize URL like a user would: signs in when sent to the sign-in page, then presses Authorize (or
   * Deny) on the authorize page. Resolves with the first location outside the forge (the client's redirect URI
   * with `code`/`error`), or rejects with the status and text of the page where the walk stopped.
   */
  authorize(authorizeUrl: string, opts: { username: string; password: string; decision?: 'authorize' | 'deny' }): Promise<string>;
  /** Cookies currently held for a host (`name → value`). */
  cookiesFor(host: string): Map<string, string>;
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

function unescapeHtml(value: string): string {
  return value.replace(/&(amp|lt|gt|quot|#39);/g, (m) => ENTITIES[m] ?? m);
}

/** Hidden inputs of each `<form>` of a page, with the form's markup to tell them apart. */
function forms(html: string): { markup: string; fields: Record<string, string> }[] {
  const found: { markup: string; fields: Record<string, string> }[] = [];
  for (const match of html.matchAll(/<form\b[\s\S]*?<\/form>/g)) {
    const fields: Record<string, string> = {};
    for (const input of match[0].matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) {
      fields[unescapeHtml(input[1] ?? '')] = unescapeHtml(input[2] ?? '');
    }
    found.push({ markup: match[0], fields });
  }
  return found;
}

/** Creates an empty browser. */
export function createForgeBrowser(): ForgeBrowser {
  const jar = new Map<string, Map<string, string>>();

  const cookiesFor = (host: string): Map<string, string> => {
    let cookies = jar.get(host);
    if (!cookies) {
      cookies = new Map();
      jar.set(host, cookies);
    }
    return cookies;
  };

  async function request(
    url: string,
    init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const target = new URL(url);
    const cookies = cookiesFor(target.host);
    const headers: Record<string, string> = { ...init.headers };
    if (cookies.size > 0) headers.cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const response = await fetch(target, {
      method: init.method ?? (body ? 'POST' : 'GET'),
      headers,
      ...(body !== undefined ? { body } : {}),
      redirect: 'manual',
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair?.indexOf('=') ?? -1;
      if (!pair || eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (expired) cookies.delete(name);
      else cookies.set(name, pair.slice(eq + 1).trim());
    }
    return response;
  }

  async function authorize(
    authorizeUrl: string,
    opts: { username: string; password: string; decision?: 'authorize' | 'deny' },
  ): Promise<string> {
    const forgeOrigin = new URL(authorizeUrl).origin;
    let response = await request(authorizeUrl);
    let current = authorizeUrl;
    for (let step = 0; step < 12; step += 1) {
      if (response.status >= 300 && response.status < 400) {
        const location = new URL(response.headers.get('location') ?? '', current).href;
        await response.body?.cancel();
        if (new URL(location).origin !== forgeOrigin) return location;
        current = location;
        response = await request(location);
        continue;
      }
      const html = await response.text();
      if (response.status === 200 && html.includes('role="alert"') && html.includes('Invalid login or password')) {
        throw new Error('dev forge sign-in refused');
      }
      if (response.status === 200 && html.includes('id="user_login"')) {
        const form = forms(html).find((f) => f.markup.includes('action="/users/sign_in"'));
        response = await request(`${forgeOrigin}/users/sign_in`, {
          form: { ...form?.fields, 'user[login]': opts.username, 'user[password]': opts.password },
        });
        current = `${forgeOrigin}/users/sign_in`;
        continue;
      }
      if (response.status === 200 && html.includes('data-testid="authorization-button"')) {
        const testId = opts.decision === 'deny' ? 'deny-button' : 'authorization-button';
        const form = forms(html).find((f) => f.markup.includes(`data-testid="${testId}"`));
        if (!form) throw new Error('authorize page without the expected form');
        response = await request(`${forgeOrigin}/oauth/authorize`, { form: form.fields });
        current = `${forgeOrigin}/oauth/authorize`;
        continue;
      }
      const link = /<a id="redirect-link" href="([^"]*)"/.exec(html);
      if (response.status === 200 && link?.[1]) return unescapeHtml(link[1]);
      throw new Error(`dev forge authorize walk stopped at ${current} with status ${response.status}: ${html.slice(0, 300)}`);
    }
    throw new Error('dev forge authorize walk did not finish');
  }

  return { request, authorize, cookiesFor };
}
