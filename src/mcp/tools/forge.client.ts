/**
 * The forge REST API (`{FORGE_URL}/api/v4`) as the MCP tools call it, with the user's own token. Errors are typed
 * by kind so tools can answer generically; the response body of a failure is never passed on.
 */

export type ForgeApiErrorKind = 'unauthorized' | 'forbidden' | 'not_found' | 'invalid' | 'unavailable';

export class ForgeApiError extends Error {
  readonly kind: ForgeApiErrorKind;
  readonly status: number;

  constructor(kind: ForgeApiErrorKind, status: number, message: string) {
    super(message);
    this.name = 'ForgeApiError';
    this.kind = kind;
    this.status = status;
  }
}

export type QueryValue = string | number | boolean | undefined;

export interface ForgeApi {
  get<T>(path: string, token: string, query?: Record<string, QueryValue>): Promise<T>;
  post<T>(path: string, token: string, body: Record<string, unknown>): Promise<T>;
}

function kindOf(status: number): ForgeApiErrorKind {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 400 || status === 409 || status === 422) return 'invalid';
  return 'unavailable';
}

/** A REST client for `{forgeUrl}/api/v4`; `fetch` is injected so tests and the benchmark can count calls. */
export function createForgeApi(deps: { forgeUrl: string; fetch: typeof fetch; timeoutMs?: number }): ForgeApi {
  const base = `${deps.forgeUrl.replace(/\/+$/, '')}/api/v4`;
  const timeoutMs = deps.timeoutMs ?? 15_000;

  const call = async <T>(
    method: string,
    path: string,
    token: string,
    query?: Record<string, QueryValue>,
    body?: Record<string, unknown>,
  ): Promise<T> => {
    const url = new URL(`${base}${path}`);
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(key, String(value));
    let response: Response;
    try {
      response = await deps.fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new ForgeApiError('unavailable', 0, `forge unreachable: ${(error as Error).message}`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new ForgeApiError(kindOf(response.status), response.status, `forge answered ${response.status} to ${method} ${path}`);
    }
    try {
      return (await response.json()) as T;
    } catch {
      throw new ForgeApiError('unavailable', response.status, `forge answered ${method} ${path} with a body that is not JSON`);
    }
  };

  return {
    get: (path, token, query) => call('GET', path, token, query),
    post: (path, token, body) => call('POST', path, token, undefined, body),
  };
}

/** A project id as the REST API takes it in a path: a number, or a URL-encoded `namespace/path`. */
export function projectPathId(id: string | number): string {
  return encodeURIComponent(String(id));
}
