/**
 * The forge's OAuth endpoints as the MCP server uses them (forge-facts.md "GitLab's OAuth (Doorkeeper)"): code
 * exchange and refresh at `/oauth/token`, `/oauth/revoke`, and `/oauth/token/info` for bearer validation. The
 * application is public, so no client secret is ever sent (spec "Authentication" 4). Failures come back as
 * values with the forge's status and OAuth error code; bodies are never logged whole, so no token reaches the log.
 */
import { z } from 'zod';
import type { Logger } from '../../core/logger.ts';
import type { ForgeTokens } from './oauth.stores.ts';

export type ForgeTokenResult = { ok: true; tokens: ForgeTokens } | { ok: false; status: number; error: string };

export interface ForgeTokenInfo {
  resourceOwnerId: number | string | undefined;
  scopes: string[];
  /** Seconds left, or null for tokens that do not expire. */
  expiresIn: number | null;
  applicationUid: string | undefined;
}

export type TokenInfoResult = { ok: true; info: ForgeTokenInfo } | { ok: false; kind: 'invalid' | 'unavailable'; status: number };

export interface ForgeOAuth {
  exchangeCode(input: { code: string; codeVerifier: string; redirectUri: string }): Promise<ForgeTokenResult>;
  refresh(input: { refreshToken: string; scope?: string }): Promise<ForgeTokenResult>;
  revoke(input: { token: string; tokenTypeHint?: string }): Promise<{ ok: boolean; status: number }>;
  tokenInfo(token: string): Promise<TokenInfoResult>;
}

const tokenSchema = z.object({
  access_token: z.string().min(1),
  token_type: z.string().default('Bearer'),
  // exactOptional: JSON never carries `undefined`, and ForgeTokens has no room for it.
  refresh_token: z.string().exactOptional(),
  expires_in: z.number().exactOptional(),
  scope: z.string().exactOptional(),
  created_at: z.number().exactOptional(),
});

const tokenInfoSchema = z.object({
  resource_owner_id: z.union([z.number(), z.string()]).nullable().optional(),
  scope: z.array(z.string()).optional(),
  scopes: z.array(z.string()).optional(),
  expires_in: z.number().nullable().optional(),
  expires_in_seconds: z.number().nullable().optional(),
  application: z.object({ uid: z.string().nullable().optional() }).nullable().optional(),
});

/** Doorkeeper's OAuth error code from a response body, or a stand-in when the body is not one. */
async function errorCode(response: Response): Promise<string> {
  try {
    const body = (await response.json()) as { error?: unknown };
    return typeof body.error === 'string' ? body.error.slice(0, 64) : `http_${response.status}`;
  } catch {
    return `http_${response.status}`;
  }
}

export function createForgeOAuth(deps: {
  forgeUrl: string;
  appId: string;
  fetch: typeof fetch;
  log: Logger;
  timeoutMs?: number;
}): ForgeOAuth {
  const timeoutMs = deps.timeoutMs ?? 10_000;
  const base = deps.forgeUrl.replace(/\/+$/, '');

  const postForm = async (path: string, form: Record<string, string | undefined>): Promise<Response> => {
    const body = new URLSearchParams();
    for (const [key, value] of Object.entries(form)) if (value !== undefined) body.set(key, value);
    return deps.fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
  };

  const tokenRequest = async (grant: string, form: Record<string, string | undefined>): Promise<ForgeTokenResult> => {
    let response: Response;
    try {
      response = await postForm('/oauth/token', { ...form, client_id: deps.appId });
    } catch (error) {
      deps.log.error({ grant, cause: (error as Error).message }, 'forge token endpoint unreachable');
      return { ok: false, status: 0, error: 'unreachable' };
    }
    if (!response.ok) {
      const error = await errorCode(response);
      deps.log.warn({ grant, forge_status: response.status, forge_error: error }, 'forge refused a token request');
      return { ok: false, status: response.status, error };
    }
    try {
      return { ok: true, tokens: tokenSchema.parse(await response.json()) };
    } catch {
      deps.log.error({ grant, forge_status: response.status }, 'forge token response is not a token');
      return { ok: false, status: 502, error: 'invalid_response' };
    }
  };

  return {
    exchangeCode: ({ code, codeVerifier, redirectUri }) =>
      tokenRequest('authorization_code', {
        grant_type: 'authorization_code',
        code,
        code_verifier: codeVerifier,
        redirect_uri: redirectUri,
      }),

    refresh: ({ refreshToken, scope }) =>
      tokenRequest('refresh_token', { grant_type: 'refresh_token', refresh_token: refreshToken, scope }),

    async revoke({ token, tokenTypeHint }) {
      try {
        const response = await postForm('/oauth/revoke', { client_id: deps.appId, token, token_type_hint: tokenTypeHint });
        if (!response.ok) deps.log.warn({ forge_status: response.status }, 'forge refused a revocation');
        await response.body?.cancel();
        return { ok: response.ok, status: response.status };
      } catch (error) {
        deps.log.error({ cause: (error as Error).message }, 'forge revoke endpoint unreachable');
        return { ok: false, status: 0 };
      }
    },

    async tokenInfo(token) {
      const probe = await getWithToken(deps.fetch, `${base}/oauth/token/info`, token, timeoutMs);
      if (!('response' in probe)) {
        if (probe.status === 0) deps.log.error({ cause: probe.cause }, 'forge token info unreachable');
        else if (probe.kind === 'unavailable') deps.log.warn({ forge_status: probe.status }, 'forge token info failed');
        return { ok: false, kind: probe.kind, status: probe.status };
      }
      const { response } = probe;
      try {
        const body = tokenInfoSchema.parse(await response.json());
        return {
          ok: true,
          info: {
            resourceOwnerId: body.resource_owner_id ?? undefined,
            scopes: body.scope ?? body.scopes ?? [],
            expiresIn: body.expires_in ?? body.expires_in_seconds ?? null,
            applicationUid: body.application?.uid ?? undefined,
          },
        };
      } catch {
        deps.log.error({ forge_status: response.status }, 'forge token info is not in the expected form');
        return { ok: false, kind: 'unavailable', status: 502 };
      }
    },
  };
}

/**
 * `GET url` with `token` as bearer: the response when it is 2xx, otherwise how the token check failed: `invalid`
 * for 401/403 (the forge refused the token), `unavailable` for any other status or, with status 0, no answer
 * (`cause` says why). A failed response's body is discarded.
 */
async function getWithToken(
  fetchFn: typeof fetch,
  url: string,
  token: string,
  timeoutMs: number,
): Promise<{ response: Response } | { kind: 'invalid' | 'unavailable'; status: number; cause?: string }> {
  let response: Response;
  try {
    response = await fetchFn(url, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    return { kind: 'unavailable', status: 0, cause: (error as Error).message };
  }
  if (response.ok) return { response };
  await response.body?.cancel();
  return { kind: response.status === 401 || response.status === 403 ? 'invalid' : 'unavailable', status: response.status };
}

/**
 * Revokes both tokens of a forge token response, best effort: never rejects, and a failure is logged (without the
 * tokens). Used for tokens no client will ever receive (a burnt or expired proxy code).
 */
export async function revokeForgeTokens(forge: Pick<ForgeOAuth, 'revoke'>, tokens: ForgeTokens, log: Logger): Promise<void> {
  try {
    const results = await Promise.all([
      forge.revoke({ token: tokens.access_token, tokenTypeHint: 'access_token' }),
      ...(tokens.refresh_token !== undefined ? [forge.revoke({ token: tokens.refresh_token, tokenTypeHint: 'refresh_token' })] : []),
    ]);
    if (results.some((r) => !r.ok)) log.warn('forge tokens of an unredeemed proxy code could not all be revoked; they lapse on their own');
  } catch (error) {
    log.warn({ cause: (error as Error).message }, 'forge tokens of an unredeemed proxy code could not be revoked');
  }
}

/**
 * Token validation through `GET /api/v4/user`, for `/mcp` without remote OAuth (clients bring their own forge
 * token, possibly a personal access token, which `/oauth/token/info` does not describe).
 */
export function createForgeUserTokenCheck(deps: {
  forgeUrl: string;
  fetch: typeof fetch;
  log: Logger;
  timeoutMs?: number;
}): Pick<ForgeOAuth, 'tokenInfo'> {
  const base = deps.forgeUrl.replace(/\/+$/, '');
  return {
    async tokenInfo(token) {
      const probe = await getWithToken(deps.fetch, `${base}/api/v4/user`, token, deps.timeoutMs ?? 10_000);
      if (!('response' in probe)) {
        if (probe.status === 0) deps.log.error({ cause: probe.cause }, 'forge user endpoint unreachable');
        return { ok: false, kind: probe.kind, status: probe.status };
      }
      const user = (await probe.response.json().catch(() => ({}))) as { id?: number };
      return { ok: true, info: { resourceOwnerId: user.id, scopes: [], expiresIn: null, applicationUid: undefined } };
    },
  };
}
