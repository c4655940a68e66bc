/**
 * The forge REST API (`{FORGE_URL}/api/v4`) as the MCP tools call it, with the user's own token. Every failure is
 * mapped here, once, to one {@link ForgeApiError} whose `type` is the tool contract's error type (tool.contract.ts):
 *
 * | forge answer | type |
 * | --- | --- |
 * | 400, 422 | `validation` (the forge's message kept: it says which argument) |
 * | 401 | `forbidden` with status 401 and a message saying to sign in again (the token was revoked or expired); on `/mcp` the request itself is answered HTTP 401 `invalid_token` instead (mcp.routes.ts), so the client re-authenticates |
 * | 403 `{"error":"insufficient_scope","scope":…}` | `insufficient_scope` with `required_scope` |
 * | other 403 | `forbidden` |
 * | 404 | `not_found` (GitLab's answer for missing and for invisible alike) |
 * | 405, 409, 412 | `conflict` |
 * | 429 `text/plain` with `Retry-After`/`RateLimit-Reset` (Rack::Attack) | `rate_limited` with the wait |
 * | 429 JSON `{"message":{"error":…}}` (application limit, no headers) | `rate_limited`, 60 s (GitLab's application limits count per minute) |
 * | 5xx, unreachable, a body that is not JSON, an HTML page (a proxy or a sign-in page) | `upstream` |
 * | no answer within `timeoutMs` (`FORGE_TIMEOUT_MS`) | `timeout` |
 *
 * Bodies of failures never reach the client except the validation message, which is the forge's own text about
 * the request; everything else goes to the server log.
 */

export type ForgeErrorType =
  'not_found' | 'forbidden' | 'insufficient_scope' | 'validation' | 'conflict' | 'rate_limited' | 'upstream' | 'timeout';

export class ForgeApiError extends Error {
  readonly type: ForgeErrorType;
  /** The forge's HTTP status; 0 when there was no answer. */
  readonly status: number;
  /** What the client may be told (generic, or the forge's validation message). */
  readonly publicMessage: string;
  readonly retryAfterSeconds: number | undefined;
  readonly requiredScope: string | undefined;

  constructor(
    type: ForgeErrorType,
    status: number,
    detail: string,
    extra: { publicMessage?: string; retryAfterSeconds?: number; requiredScope?: string } = {},
  ) {
    super(detail);
    this.name = 'ForgeApiError';
    this.type = type;
    this.status = status;
    this.publicMessage = extra.publicMessage ?? GENERIC_MESSAGES[type];
    this.retryAfterSeconds = extra.retryAfterSeconds;
    this.requiredScope = extra.requiredScope;
  }
}

/** The generic texts per type (issue 3 item 10: details only in the log). */
const GENERIC_MESSAGES: Record<ForgeErrorType, string> = {
  not_found: 'Not found on the forge, or not visible to the signed-in user.',
  forbidden: 'The forge refused this operation for the signed-in user.',
  insufficient_scope: 'The access token lacks the scope this operation needs; sign in again with that scope.',
  validation: 'The forge rejected the request as invalid.',
  conflict: 'The forge reported a conflict with the current state.',
  rate_limited: 'The forge is rate limiting these requests; retry after the wait.',
  upstream: 'The forge could not be reached or answered unexpectedly. Try again later.',
  timeout: 'The forge did not answer in time. Try again later.',
};

export type QueryValue = string | number | boolean | undefined;

/** One page of a list: offset-paginated (GitLab's `x-next-page`, `x-total`) or keyset-paginated (`Link` rel=next). */
export interface ForgePage<T> {
  items: T[];
  /** The next page number, or undefined on the last page (offset lists). */
  nextPage: number | undefined;
  /** The next page's keyset position (`id_after=…`, `id_before=…` or `cursor=…`), on keyset lists with more to come. */
  nextKeyset?: string;
  /** `x-total`, absent above 10,000 records and on keyset lists. */
  total: number | undefined;
}

/**
 * Lists GitLab pages by keyset (forge-facts.md 2.1: `pagination=keyset` with a required `order_by` and `sort`; only
 * `Link` rel=next is answered), which stays fast and consistent deep into a large list where offset paging slows
 * down and is capped. `/projects` supports it on `order_by=id` in every GitLab the tools target; project issues only
 * from 18.3, so issues keep offset paging. A forge that ignores the parameter answers offset headers, which are
 * followed instead.
 */
const KEYSET_LISTS: readonly { path: RegExp; orderBy: string; sort: 'asc' | 'desc' }[] = [
  { path: /^\/projects$/, orderBy: 'id', sort: 'desc' },
];

/** A keyset position as a cursor carries it: one of GitLab's position parameters and its value. */
const KEYSET_POSITION = /^(id_after|id_before|cursor)=([A-Za-z0-9_.~%-]{1,500})$/;

/** The keyset position of the `Link` header's rel=next URL, if it has one. */
function nextKeysetOf(link: string | null): string | undefined {
  if (!link) return undefined;
  for (const part of link.split(',')) {
    const match = /<([^>]*)>\s*;\s*rel="?next"?/i.exec(part);
    if (!match?.[1]) continue;
    let url: URL;
    try {
      url = new URL(match[1]);
    } catch {
      return undefined;
    }
    // "Use only the given link": its position parameter is taken as it is; the path and filters stay ours.
    for (const name of ['cursor', 'id_after', 'id_before']) {
      const value = url.searchParams.get(name);
      if (value !== null) {
        const position = `${name}=${encodeURIComponent(value)}`;
        return KEYSET_POSITION.test(position) ? position : undefined;
      }
    }
  }
  return undefined;
}

export interface ForgeApi {
  get<T>(path: string, token: string, query?: Record<string, QueryValue>): Promise<T>;
  /**
   * One page of a list. `query.page` is what `decodeCursor` (forge.paging.ts) gives: a page number, or a keyset
   * position string from an earlier `nextKeyset`. Lists GitLab pages by keyset are asked for with keyset paging.
   */
  page<T>(path: string, token: string, query: Record<string, QueryValue>): Promise<ForgePage<T>>;
  post<T>(path: string, token: string, body: Record<string, unknown>): Promise<T>;
  put<T>(path: string, token: string, body: Record<string, unknown>): Promise<T>;
  /** A write whose answer has no body to read (204, or a body the caller does not need). */
  send(method: 'POST' | 'PUT' | 'DELETE', path: string, token: string, body?: Record<string, unknown>): Promise<number>;
  /** A text answer (a raw file, a job log), whole. */
  text(path: string, token: string, query?: Record<string, QueryValue>): Promise<string>;
}

/**
 * A forge answer as the client reads it: status, headers by name, and the body as text. Plain data rather than a
 * WHATWG `Response`: building a `Response` with its `Headers` and body stream, and reading it back, was measured
 * at about 25 µs of the 90–105 µs a `get_project` call spent in the server past HTTP (forge.http.ts answers this
 * directly from undici's request API).
 */
export interface ForgeAnswer {
  readonly status: number;
  /** A header's value (`name` in lower case), or null; repeated headers joined with `, `. */
  header(name: string): string | null;
  /** The whole body; rejects when it broke off or did not arrive in time. */
  text(): Promise<string>;
  /** Drops the body unread. */
  discard(): Promise<void>;
}

/** What the client needs of an HTTP request: an answer for a method, URL, headers and an optional JSON body. */
export type ForgeSend = (
  url: URL,
  init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal },
) => Promise<ForgeAnswer>;

/** A `ForgeSend` over a `fetch` (tests and the dev forge inject one); redirects are never followed. */
export function sendWithFetch(fetchFn: typeof fetch): ForgeSend {
  return async (url, init) => {
    const response = await fetchFn(url, { ...init, redirect: 'manual' });
    return {
      status: response.status,
      header: (name) => response.headers.get(name),
      text: () => response.text(),
      discard: async () => {
        await response.body?.cancel();
      },
    };
  };
}

/** The wait a 429 asks for: `Retry-After` (seconds or a date), else `RateLimit-Reset` (unix seconds), else 60 s. */
function retryAfterOf(response: ForgeAnswer, nowMs: number): number {
  const retryAfter = response.header('retry-after');
  if (retryAfter !== null) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.max(1, Math.ceil(seconds));
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(1, Math.ceil((date - nowMs) / 1000));
  }
  const reset = Number(response.header('ratelimit-reset'));
  if (Number.isFinite(reset) && reset > 0) return Math.max(1, Math.ceil(reset - nowMs / 1000));
  return 60;
}

/** The forge's own text about a refused request (`{"message": …}` or Grape's `{"error": …}`), flattened and cut. */
function validationMessage(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { message, error } = body as { message?: unknown; error?: unknown };
  const value = message ?? error;
  if (value === undefined) return undefined;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.slice(0, 500);
}

async function bodyOf(response: ForgeAnswer): Promise<{ json: unknown; text: string }> {
  const text = await response.text().catch(() => '');
  try {
    return { json: JSON.parse(text) as unknown, text };
  } catch {
    return { json: undefined, text };
  }
}

function isHtml(response: ForgeAnswer): boolean {
  return /^\s*text\/html/i.test(response.header('content-type') ?? '');
}

/** Maps a failed answer to its error (the table above). */
async function errorOf(response: ForgeAnswer, what: string, nowMs: number): Promise<ForgeApiError> {
  const { status } = response;
  if (isHtml(response)) {
    await response.discard();
    return new ForgeApiError('upstream', status, `forge answered ${status} with an HTML page to ${what}`, {
      publicMessage: 'The forge answered with an HTML page instead of its API (a proxy or a sign-in page?). Check FORGE_URL.',
    });
  }
  const { json } = await bodyOf(response);
  const detail = `forge answered ${status} to ${what}`;
  if (status === 429) return new ForgeApiError('rate_limited', status, detail, { retryAfterSeconds: retryAfterOf(response, nowMs) });
  if (status === 400 || status === 422) {
    const message = validationMessage(json);
    return new ForgeApiError('validation', status, detail, message ? { publicMessage: `The forge rejected the request: ${message}` } : {});
  }
  if (status === 401)
    return new ForgeApiError('forbidden', status, detail, {
      publicMessage: 'The forge no longer accepts the access token (revoked or expired). Sign in again.',
    });
  if (status === 403) {
    const body = json as { error?: unknown; scope?: unknown } | undefined;
    if (body?.error === 'insufficient_scope')
      return new ForgeApiError('insufficient_scope', status, detail, typeof body.scope === 'string' ? { requiredScope: body.scope } : {});
    return new ForgeApiError('forbidden', status, detail);
  }
  if (status === 404) return new ForgeApiError('not_found', status, detail);
  if (status === 405 || status === 409 || status === 412) return new ForgeApiError('conflict', status, detail);
  return new ForgeApiError('upstream', status, detail);
}

function intHeader(response: ForgeAnswer, name: string): number | undefined {
  const raw = response.header(name);
  if (raw === null || raw.trim() === '') return undefined;
  const value = Number(raw);
  return Number.isInteger(value) && value >= 0 ? value : undefined;
}

/**
 * A REST client for `{forgeUrl}/api/v4`. `forgeUrl` may carry a path prefix (a self-hosted forge under
 * `https://example.com/gitlab`). `fetch` is injected so tests and the benchmark can count calls.
 */
export function createForgeApi(deps: {
  forgeUrl: string;
  fetch: typeof fetch;
  /** The production transport (forge.http.ts: undici's request API on the keep-alive pool); default: `fetch`. */
  send?: ForgeSend | undefined;
  timeoutMs?: number;
  now?: () => number;
}): ForgeApi {
  const base = `${deps.forgeUrl.replace(/\/+$/, '')}/api/v4`;
  const timeoutMs = deps.timeoutMs ?? 15_000;
  const now = deps.now ?? Date.now;
  const transport = deps.send ?? sendWithFetch(deps.fetch);

  const send = async (
    method: string,
    path: string,
    token: string,
    query: Record<string, QueryValue> | undefined,
    body: Record<string, unknown> | undefined,
    signal: AbortSignal,
  ): Promise<ForgeAnswer> => {
    const url = new URL(`${base}${path}`);
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(key, String(value));
    const what = `${method} ${path}`;
    let response: ForgeAnswer;
    try {
      response = await transport(url, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal,
      });
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError')
        throw new ForgeApiError('timeout', 0, `forge did not answer ${what} within ${timeoutMs} ms`);
      throw new ForgeApiError('upstream', 0, `forge unreachable for ${what}: ${(error as Error).message}`);
    }
    if (response.status < 200 || response.status > 299) throw await errorOf(response, what, now());
    if (isHtml(response)) throw await errorOf(response, what, now());
    return response;
  };

  /**
   * One forge request within the deadline (`FORGE_TIMEOUT_MS`): `read` takes the answer, its body included, before
   * the timer is cleared. A cleared timer is gone at once, where `AbortSignal.timeout` kept every call's signal and
   * timer alive for the whole deadline (15 s of calls, tens of thousands under load, for the GC to walk).
   */
  const exchange = async <R>(
    method: string,
    path: string,
    token: string,
    query: Record<string, QueryValue> | undefined,
    body: Record<string, unknown> | undefined,
    read: (response: ForgeAnswer) => Promise<R>,
  ): Promise<R> => {
    const controller = new AbortController();
    // The reason `AbortSignal.timeout` gives, so the transports fail as they did with it.
    const timer = setTimeout(() => controller.abort(new DOMException('The forge request timed out.', 'TimeoutError')), timeoutMs);
    timer.unref();
    try {
      return await read(await send(method, path, token, query, body, controller.signal));
    } finally {
      clearTimeout(timer);
    }
  };

  const json = async <T>(response: ForgeAnswer, what: string): Promise<T> => {
    try {
      return JSON.parse(await response.text()) as T;
    } catch (error) {
      if ((error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError')
        throw new ForgeApiError('timeout', response.status, `forge body of ${what} did not arrive within ${timeoutMs} ms`);
      throw new ForgeApiError('upstream', response.status, `forge answered ${what} with a body that is not JSON`);
    }
  };

  return {
    get: (path, token, query) => exchange('GET', path, token, query, undefined, (response) => json(response, `GET ${path}`)),
    post: (path, token, body) => exchange('POST', path, token, undefined, body, (response) => json(response, `POST ${path}`)),
    put: (path, token, body) => exchange('PUT', path, token, undefined, body, (response) => json(response, `PUT ${path}`)),
    send: (method, path, token, body) =>
      exchange(method, path, token, undefined, body, async (response) => {
        await response.discard();
        return response.status;
      }),
    text: (path, token, query) =>
      exchange('GET', path, token, query, undefined, async (response) => {
        try {
          return await response.text();
        } catch (error) {
          if ((error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError')
            throw new ForgeApiError('timeout', response.status, `forge body of GET ${path} did not arrive within ${timeoutMs} ms`);
          throw new ForgeApiError('upstream', response.status, `forge body of GET ${path} broke off`);
        }
      }),
    async page<T>(path: string, token: string, query: Record<string, QueryValue>) {
      const { page, ...filters } = query;
      const keyset = KEYSET_LISTS.find((list) => list.path.test(path));
      let sent: Record<string, QueryValue> = query;
      if (typeof page === 'string') {
        // A keyset position is only ever handed out for a keyset list; anything else is not a cursor of ours.
        const position = KEYSET_POSITION.exec(page);
        if (!keyset || !position?.[1] || !position[2])
          throw new ForgeApiError('validation', 0, `keyset position for ${path}`, {
            publicMessage: 'cursor is not a next_cursor of this list; omit it to start from the first page',
          });
        sent = {
          ...filters,
          pagination: 'keyset',
          order_by: keyset.orderBy,
          sort: keyset.sort,
          [position[1]]: decodeURIComponent(position[2]),
        };
      } else if (keyset && (page === undefined || page === 1)) {
        sent = { ...filters, pagination: 'keyset', order_by: keyset.orderBy, sort: keyset.sort };
      }
      return exchange('GET', path, token, sent, undefined, async (response) => {
        const items = await json<unknown>(response, `GET ${path}`);
        if (!Array.isArray(items))
          throw new ForgeApiError('upstream', response.status, `forge answered GET ${path} with a body that is not a list`);
        const nextKeyset = nextKeysetOf(response.header('link'));
        // Keyset answers carry only the Link; a forge that ignored `pagination=keyset` answers offset headers.
        const nextPage = nextKeyset === undefined ? intHeader(response, 'x-next-page') : undefined;
        return {
          items: items as T[],
          nextPage,
          ...(nextKeyset !== undefined ? { nextKeyset } : {}),
          total: intHeader(response, 'x-total'),
        };
      });
    },
  };
}
