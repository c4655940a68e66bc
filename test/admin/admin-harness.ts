import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Dialect } from '../../src/core/db/database.ts';
import type { Role } from '../../src/core/identity/identity.model.ts';
import type { ResponseCheck } from '../support/openapi-responses.ts';
import { openTestPlatform, startRestApp, type TestPlatform } from '../support/platform.ts';

/** A response as the tests look at it: status, parsed JSON (when any) and the raw text. */
export interface Reply {
  status: number;
  // Test code reads arbitrary response fields; a strict type per route would add nothing here.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
  headers: Headers;
}

export interface CallOptions {
  token?: string;
  cookie?: string;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent verbatim with content-type application/json. */
  rawBody?: string;
  headers?: Record<string, string>;
}

/**
 * A tiny HTTP client over real sockets (fetch), recording every response text so tests can grep for secrets. With
 * `responses` (the server's OpenAPI check), a call whose response broke the served document throws at once.
 */
export function httpClient(baseUrl: string, responses?: ResponseCheck) {
  const transcript: string[] = [];
  async function call(method: string, path: string, options: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    if (options.cookie !== undefined) headers.cookie = `platform_session=${options.cookie}`;
    let body: string | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const response = await fetch(`${baseUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await response.text();
    const violations = responses?.take() ?? [];
    if (violations.length > 0) throw new Error(`response broke the served OpenAPI document:\n${violations.join('\n')}`);
    transcript.push(
      `${method} ${path} ${response.status} ${[...response.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n')}\n${text}`,
    );
    let parsed: unknown = undefined;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, text, headers: response.headers };
  }
  return { call, transcript };
}

/** Writes a catalog directory from `{file name: YAML or JSON text}`. */
export function writeCatalog(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'platform-catalog-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/**
 * A small deterministic catalog: an API-key provider (with a ref whose upstream id contains "/" and an aliased
 * model_id), an OAuth-lane provider and a no-credential local provider.
 */
export const TEST_CATALOG: Record<string, string> = {
  'definitions.yaml': `
model_definitions:
  chat:
    capabilities:
      workload: text_generation
      input_modalities: [image]
      generation_parameters:
        max_output_tokens: {}
        temperature: { kind: number, minimum: 0, maximum: 2 }
`,
  'alpha.yaml': `
providers:
  alpha:
    display_name: Alpha AI
    base_url: https://alpha.example/v1
    api_format: openai_chat
    credentials: api_key
    models:
      a-1:
        inherit: chat
        pricing: { unit: USD, input_per_million_tokens: "1.00", output_per_million_tokens: "2.00" }
      a-2:
        inherit: chat
      org/a-3:
        inherit: chat
        model_id: org/a-3-2025-01
      emb:
        capabilities: { workload: embeddings }
`,
  'others.json': JSON.stringify({
    providers: {
      beta: {
        display_name: 'Beta',
        base_url: 'https://beta.example/v1',
        api_format: 'anthropic_messages',
        credentials: 'oauth_tokens',
        models: { 'b-1': {} },
      },
      local: {
        display_name: 'Local',
        base_url: 'http://127.0.0.1:9/v1',
        api_format: 'openai_chat',
        credentials: 'none',
        models: { 'l-1': {} },
      },
    },
  }),
};

export interface Harness {
  platform: TestPlatform;
  url: string;
  call: ReturnType<typeof httpClient>['call'];
  transcript: string[];
  /** The bootstrapped owner's platform token. */
  token: string;
  accountId: string;
  close(): Promise<void>;
}

/** A test platform with the REST app on 127.0.0.1:0, using `catalog` files (default: the repository catalog). */
export async function openHarness(
  dialect: Dialect,
  options: { catalog?: Record<string, string> | string; env?: Record<string, string>; fetch?: typeof fetch } = {},
): Promise<Harness> {
  const env: Record<string, string> = { ...options.env };
  if (options.catalog !== undefined)
    env.PLATFORM_CATALOG_DIR = typeof options.catalog === 'string' ? options.catalog : writeCatalog(options.catalog);
  const platform = await openTestPlatform(dialect, { env, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const server = await startRestApp(platform);
  const { call, transcript } = httpClient(server.url, server.responses);
  return {
    platform,
    url: server.url,
    call,
    transcript,
    token: platform.owner.platform_token,
    accountId: platform.owner.account_id,
    async close() {
      try {
        await server.close();
      } finally {
        await platform.close();
      }
    },
  };
}

/** Adds a Human of `role` to the harness Account with a session and one token of each plane. */
export async function addHuman(harness: Harness, role: Role) {
  const identity = harness.platform.ctx.identity;
  const password = 'correct horse battery staple';
  const human = await identity.addHuman({
    accountId: harness.accountId,
    email: `${role}-${Math.random().toString(36).slice(2)}@example.test`,
    role,
    password,
  });
  const session = await identity.signIn(human.email, password);
  const platformToken = await identity.createToken({ humanId: human.human_id, plane: 'platform', capabilities: ['CAP_PLATFORM_OSV_READ'] });
  const memberToken = await identity.createToken({ humanId: human.human_id, plane: 'member' });
  const executorToken = await identity.createToken({ humanId: human.human_id, plane: 'executor' });
  return {
    humanId: human.human_id,
    session: session.token,
    sessionId: session.id,
    platform: platformToken.token,
    platformId: platformToken.id,
    member: memberToken.token,
    executor: executorToken.token,
  };
}

/** Provider paths. */
export const P = (provider: string, suffix = '') => `/api/v1/admin/model_providers/${provider}${suffix}`;
