/**
 * Test fixtures for the dev forge's own tests: a forge on 127.0.0.1:0 with a fake clock, two users and three
 * applications (public, confidential, trusted), and helpers to obtain codes and tokens through the real pages.
 */
import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { startDevForge } from './devforge.app.ts';
import type { StartedDevForge } from './devforge.app.ts';
import { createForgeBrowser } from './devforge.browser.ts';
import type { DevForgeApplication, DevForgeUser } from './devforge.types.ts';

/** Registered callback of the test applications. */
export const REDIRECT_URI = 'https://client.example/oauth/callback';
/** A loopback callback registered on the public application (its port may vary). */
export const LOOPBACK_REDIRECT_URI = 'http://127.0.0.1:33418/callback';

/** A forge started for one test file, with its fake clock. */
export interface ForgeFixture {
  forge: StartedDevForge;
  alice: DevForgeUser;
  bob: DevForgeUser;
  publicApp: DevForgeApplication;
  confidentialApp: DevForgeApplication;
  trustedApp: DevForgeApplication;
  /** Moves the fake clock forward. */
  advance(ms: number): void;
  now(): number;
}

/** Starts a forge with a fake clock starting at 2025-01-01T00:00:00Z. */
export async function startFixture(): Promise<ForgeFixture> {
  let now = Date.UTC(2025, 0, 1);
  const alice: DevForgeUser = {
    id: 1,
    username: 'alice',
    name: 'Alice Example',
    email: 'alice@example.test',
    password: 'alice-password-1',
  };
  const bob: DevForgeUser = { id: 2, username: 'bob', name: 'Bob Example', email: 'bob@example.test', password: 'bob-password-2' };
  const publicApp: DevForgeApplication = {
    uid: randomBytes(32).toString('hex'),
    name: 'Public <b>MCP</b> client',
    redirectUris: [REDIRECT_URI, LOOPBACK_REDIRECT_URI, 'http://[::1]:8000/cb', 'http://localhost:6274/oauth/callback'],
    confidential: false,
    scopes: ['api', 'read_api', 'read_user'],
  };
  const confidentialApp: DevForgeApplication = {
    uid: randomBytes(32).toString('hex'),
    name: 'Confidential client',
    redirectUris: [REDIRECT_URI],
    confidential: true,
    secret: `gloas-${randomBytes(32).toString('hex')}`,
    scopes: ['api', 'read_user'],
  };
  const trustedApp: DevForgeApplication = {
    uid: randomBytes(32).toString('hex'),
    name: 'Trusted client',
    redirectUris: [REDIRECT_URI],
    confidential: false,
    trusted: true,
    scopes: ['api'],
  };
  const forge = await startDevForge({
    users: [alice, bob],
    applications: [publicApp, confidentialApp, trustedApp],
    clock: () => now,
  });
  return {
    forge,
    alice,
    bob,
    publicApp,
    confidentialApp,
    trustedApp,
    advance(ms) {
      now += ms;
    },
    now: () => now,
  };
}

/** A PKCE pair with an S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** An `/oauth/authorize` URL of the forge. Parameters set to undefined are left out. */
export function authorizeUrl(forgeUrl: string, params: Record<string, string | undefined>): string {
  const url = new URL('/oauth/authorize', forgeUrl);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

/** Runs sign-in and Authorize through the pages and returns the code from the redirect. */
export async function obtainCode(
  fx: ForgeFixture,
  opts: {
    app?: DevForgeApplication;
    user?: DevForgeUser | undefined;
    redirectUri?: string;
    scope?: string | undefined;
    challenge?: string;
    method?: string;
    state?: string;
  } = {},
): Promise<string> {
  const app = opts.app ?? fx.publicApp;
  const user = opts.user ?? fx.alice;
  const location = await createForgeBrowser().authorize(
    authorizeUrl(fx.forge.url, {
      client_id: app.uid,
      redirect_uri: opts.redirectUri ?? REDIRECT_URI,
      response_type: 'code',
      state: opts.state ?? 'state-1',
      scope: opts.scope ?? 'api read_user',
      code_challenge: opts.challenge,
      code_challenge_method: opts.challenge ? (opts.method ?? 'S256') : undefined,
    }),
    { username: user.username, password: user.password },
  );
  const code = new URL(location).searchParams.get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return code;
}

/** POSTs a form to the token endpoint. */
export function postToken(fx: ForgeFixture, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${fx.forge.url}/oauth/token`, { method: 'POST', headers, body: new URLSearchParams(form) });
}

/** The token response of the full code flow with PKCE S256. */
export interface TokenBody {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
  scope: string;
  created_at: number;
}

/** Obtains a token pair through the pages and the token endpoint (public app, PKCE S256). */
export async function obtainTokens(fx: ForgeFixture, opts: { user?: DevForgeUser; scope?: string } = {}): Promise<TokenBody> {
  const { verifier, challenge } = pkcePair();
  const code = await obtainCode(fx, { user: opts.user, scope: opts.scope, challenge });
  const response = await postToken(fx, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    client_id: fx.publicApp.uid,
    code_verifier: verifier,
  });
  if (response.status !== 200) throw new Error(`token exchange failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as TokenBody;
}

/** An answer of the forge's REST API: JSON parsed, text/plain (raw files, job logs) kept as text, empty as null. */
export interface ApiAnswer<Body> {
  status: number;
  headers: Headers;
  body: Body;
}

/** A `/api/v4` caller on `forgeUrl` with `token` as the default bearer (`init.token` overrides it per call). */
export function apiCaller<Body = Record<string, unknown> & unknown[]>(forgeUrl: () => string, token: () => string) {
  return async (path: string, init: { token?: string; method?: string; body?: unknown } = {}): Promise<ApiAnswer<Body>> => {
    const response = await fetch(`${forgeUrl()}/api/v4${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${init.token ?? token()}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
      ...(init.body ? { body: JSON.stringify(init.body) } : {}),
    });
    const text = await response.text();
    let body: unknown = text === '' ? null : text;
    try {
      body = JSON.parse(text);
    } catch {
      // a text/plain answer
    }
    return { status: response.status, headers: response.headers, body: body as Body };
  };
}

/** The JSON kinds GitLab's API documentation gives its fields. */
export type Kind = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'null';
const kindOf = (v: unknown): Kind => (v === null ? 'null' : Array.isArray(v) ? 'array' : (typeof v as Kind));

/** Every documented field is there with one of the documented kinds. */
export function expectShape(value: unknown, shape: Record<string, Kind | Kind[]>, what: string): void {
  const object = value as Record<string, unknown>;
  for (const [field, kinds] of Object.entries(shape)) {
    expect(object, `${what}.${field}`).toHaveProperty(field);
    expect([kinds].flat(), `${what}.${field} is ${kindOf(object[field])}`).toContain(kindOf(object[field]));
  }
}

/** The owner of the two-user forge's projects. */
export const RITA: DevForgeUser = { id: 1, username: 'rita', name: 'Rita Repo', email: 'rita@example.test', password: 'pw-rita-123456' };
/** A second user: a member of the demo group's projects, of none of rita's. */
export const OTTO: DevForgeUser = { id: 2, username: 'otto', name: 'Otto Other', email: 'otto@example.test', password: 'pw-otto-123456' };

/** A forge with two users ({@link RITA}, {@link OTTO}) and their personal access tokens. */
export interface TwoUserForge {
  forge: StartedDevForge;
  /** Rita's `api` token. */
  pat: string;
  /** Rita's `read_api` token. */
  readOnly: string;
  /** Otto's `api` token. */
  otto: string;
}

/** Starts a forge (in memory, no applications) with rita and otto, each with their seeded projects. */
export async function startTwoUserForge(): Promise<TwoUserForge> {
  const forge = await startDevForge({ users: [RITA, OTTO], applications: [] });
  return {
    forge,
    pat: forge.createPersonalAccessToken(RITA.username, ['api']),
    readOnly: forge.createPersonalAccessToken(RITA.username, ['read_api']),
    otto: forge.createPersonalAccessToken(OTTO.username, ['api']),
  };
}
