/**
 * The tool matrix (issue 18, tests that must exist): every entry of tool-matrix.samples.ts — each registered tool,
 * each `include`/`method`/`scope`/`action` branch, a paging entry per cursor, the confirmation flow of the tools
 * that ask first — called through four clients: the v2 and the v1 SDK client over Streamable HTTP, and the v2 and
 * the v1 SDK client over stdio against the real CLI (`node bin/platform.js mcp --stdio`, one process each). Each
 * answer's structuredContent is checked against the outputSchema that client listed (ajv), besides the check the
 * SDK clients make themselves, and carries its text rendering. One HTTP server and one client per run for the
 * whole file, calls in sequence; every entry runs in all four (writes too: each run writes to things of its own,
 * made by the entry's `prepare`). Confirmations take the token path: none of these clients declares elicitation.
 *
 * Aliases (a tool's other names: callable, not listed) are called through every client too, each beside its tool
 * with the same arguments, and must answer like it: valid against the tool's outputSchema, the same value for a
 * read, the same shape for a write (checked at the forge). The table must have an entry for every alias.
 *
 * Read-only (`X-MCP-Readonly` on HTTP, `FORGE_READ_ONLY` on stdio): every tool whose annotations say it writes is
 * absent from tools/list and refused when called, and so is each of its aliases, with nothing reaching the forge;
 * the set comes from the listed annotations, not from a hand-written list.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as V2Client, StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startStack, type Stack } from '../../src/mcp/mcp.testkit.ts';
import { toolsetNames, toolsetTools } from '../../src/mcp/tools/toolsets.ts';
import { repoRoot } from '../support/shared.ts';
import { ALIASES, BRANCH_FIELDS, SAMPLES, type AliasSample, type ForgeRest, type Sample } from './tool-matrix.samples.ts';

type Json = Record<string, unknown>;

interface ListedTool {
  name: string;
  outputSchema?: unknown;
  annotations?: { readOnlyHint?: boolean };
}

interface ToolResult {
  isError?: boolean;
  structuredContent?: unknown;
  content?: { type: string; text?: string }[];
}

/** One connected client: what it listed, and calls. */
interface Session {
  tools: ListedTool[];
  call(name: string, args: Json): Promise<ToolResult>;
  close(): Promise<void>;
}

const RUNS = ['v2-http', 'v1-http', 'v2-stdio', 'v1-stdio'] as const;
type Run = (typeof RUNS)[number];

const PLATFORM = join(repoRoot, 'bin', 'platform.js');
const ajv = new Ajv2020({ strict: false, allErrors: true });

let stack: Stack;
let pat = '';
let home = '';
let rest: ForgeRest;
const sessions = new Map<Run, Session>();
const validators = new Map<Run, Map<string, ValidateFunction>>();

async function httpSession(era: 'v1' | 'v2', headers: Record<string, string> = {}): Promise<Session> {
  const url = new URL(`${stack.url}/mcp`);
  const requestInit = { headers: { authorization: `Bearer ${pat}`, ...headers } };
  const client = era === 'v1' ? new V1Client({ name: 'matrix-v1', version: '1' }) : new V2Client({ name: 'matrix-v2', version: '1' });
  if (client instanceof V1Client) await client.connect(new V1HttpTransport(url, { requestInit }));
  else await client.connect(new V2HttpTransport(url, { requestInit }));
  // Listing first also makes both SDK clients validate structured results against each outputSchema.
  const tools = (await client.listTools()).tools as ListedTool[];
  return {
    tools,
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
    close: () => client.close(),
  };
}

/** The real CLI over stdio, with the matrix's forge and token and every toolset. */
async function stdioSession(era: 'v1' | 'v2', extraEnv: Record<string, string> = {}): Promise<Session> {
  const options = {
    command: process.execPath,
    args: [PLATFORM, 'mcp', '--stdio'],
    cwd: home,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      LOG_LEVEL: 'warn',
      FORGE_URL: stack.forge.forge.url,
      FORGE_PERSONAL_ACCESS_TOKEN: pat,
      FORGE_TOOLSETS: 'all',
      ...extraEnv,
    },
    stderr: 'pipe' as const,
  };
  const client =
    era === 'v1' ? new V1Client({ name: 'matrix-stdio-v1', version: '1' }) : new V2Client({ name: 'matrix-stdio-v2', version: '1' });
  if (client instanceof V1Client) await client.connect(new V1StdioTransport(options));
  else await client.connect(new StdioClientTransport(options));
  const tools = (await client.listTools()).tools as ListedTool[];
  return {
    tools,
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
    close: () => client.close(),
  };
}

beforeAll(async () => {
  // A second user, so that the demo group's project has members past page one (GitLab's API creates no users).
  const otto = { id: 2, username: 'otto', name: 'Otto Other', email: 'otto@example.test', password: 'pw-otto-matrix-1' };
  stack = await startStack({
    mode: 'none',
    toolSurface: { toolsets: toolsetNames(), denied: [], readOnly: false },
    otherForgeUsers: [otto],
  });
  pat = stack.forge.forge.createPersonalAccessToken(stack.forge.user.username, ['api']);
  home = await mkdtemp(join(tmpdir(), 'tool-matrix-'));
  const api = `${stack.forge.forge.url}/api/v4`;
  rest = {
    async request(method, path, body) {
      const response = await fetch(`${api}${path}`, {
        method,
        headers: { authorization: `Bearer ${pat}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${path}: ${String(response.status)} ${text}`);
      return (text ? JSON.parse(text) : {}) as Json & Json[];
    },
  };
  sessions.set('v2-http', await httpSession('v2'));
  sessions.set('v1-http', await httpSession('v1'));
  sessions.set('v2-stdio', await stdioSession('v2'));
  sessions.set('v1-stdio', await stdioSession('v1'));
  for (const [run, session] of sessions) {
    validators.set(run, new Map(session.tools.map((t) => [t.name, ajv.compile(t.outputSchema ?? {})])));
  }
});

afterAll(async () => {
  await Promise.all([...sessions.values()].map((s) => s.close()));
  await stack?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

/** Every enum value of a branch field (`include`, `method`, …) anywhere in a JSON Schema, by field. */
function branchValues(schema: unknown, found = new Map<string, Set<string>>()): Map<string, Set<string>> {
  if (Array.isArray(schema)) {
    for (const item of schema) branchValues(item, found);
  } else if (schema !== null && typeof schema === 'object') {
    const properties = (schema as { properties?: Record<string, Json> }).properties ?? {};
    for (const [field, property] of Object.entries(properties)) {
      if (!(BRANCH_FIELDS as readonly string[]).includes(field)) continue;
      const values = (property.enum ?? (property.items as Json | undefined)?.enum) as string[] | undefined;
      for (const value of values ?? []) found.set(field, (found.get(field) ?? new Set()).add(value));
    }
    for (const value of Object.values(schema)) branchValues(value, found);
  }
  return found;
}

/** Every value of a branch field anywhere in a call's arguments. */
function usedValues(args: unknown, found = new Map<string, Set<string>>()): Map<string, Set<string>> {
  if (Array.isArray(args)) {
    for (const item of args) usedValues(item, found);
  } else if (args !== null && typeof args === 'object') {
    for (const [field, value] of Object.entries(args)) {
      if ((BRANCH_FIELDS as readonly string[]).includes(field))
        for (const v of [value].flat()) if (typeof v === 'string') found.set(field, (found.get(field) ?? new Set()).add(v));
      usedValues(value, found);
    }
  }
  return found;
}

describe('[TOOL-MATRIX] the table covers the registry', () => {
  const declared = toolsetTools();

  it('has an entry for every registered tool, and none for a tool that does not exist', () => {
    const names = declared.map((t) => t.name);
    expect(names.filter((name) => !SAMPLES[name]?.length)).toEqual([]);
    expect(Object.keys(SAMPLES).filter((name) => !names.includes(name))).toEqual([]);
  });

  it('has an entry for every include, method, scope and action value of each tool', () => {
    const missing: string[] = [];
    for (const tool of declared) {
      const used = usedValues((SAMPLES[tool.name] ?? []).map((s) => s.args));
      for (const [field, values] of branchValues(z.toJSONSchema(tool.input)))
        for (const value of values) if (!used.get(field)?.has(value)) missing.push(`${tool.name} ${field}=${value}`);
    }
    expect(missing).toEqual([]);
  });

  it('has an entry for every alias, naming its tool, and none for a name that is not an alias', () => {
    const aliases = new Map(declared.flatMap((t) => (t.aliases ?? []).map((alias) => [alias, t.name] as const)));
    expect(aliases.size).toBeGreaterThan(0);
    expect([...aliases].filter(([alias, target]) => ALIASES[alias]?.target !== target)).toEqual([]);
    expect(Object.keys(ALIASES).filter((alias) => !aliases.has(alias))).toEqual([]);
  });

  it('has a paging entry for every tool that takes a cursor, and a confirmation entry for every tool that asks first', () => {
    const missing: string[] = [];
    for (const tool of declared) {
      const samples = SAMPLES[tool.name] ?? [];
      const cursors = Object.keys(tool.input.shape).filter((field) => field === 'cursor' || field.endsWith('_cursor'));
      for (const cursor of cursors)
        if (!samples.some((s) => s.page?.cursorArg === cursor)) missing.push(`${tool.name} paging by ${cursor}`);
      if (tool.confirms === true && !samples.some((s) => s.confirm)) missing.push(`${tool.name} confirmation`);
    }
    expect(missing).toEqual([]);
  });
});

/** Checks one answer: success, structuredContent valid against the listed outputSchema, a text rendering. */
function checked(run: Run, name: string, result: ToolResult): Json {
  const what = `${run} ${name}: ${JSON.stringify(result.structuredContent ?? result.content).slice(0, 400)}`;
  expect(result.isError, what).toBeFalsy();
  expect(result.structuredContent, what).toBeTypeOf('object');
  const validate = validators.get(run)?.get(name);
  expect(validate, `${run} listed ${name}`).toBeDefined();
  expect(validate?.(result.structuredContent), `${what}: ${ajv.errorsText(validate?.errors)}`).toBe(true);
  const text = result.content?.find((c) => c.type === 'text')?.text ?? '';
  // A confirmation question is the server's own text; every forge value comes marked as untrusted data.
  if ('confirmation_required' in (result.structuredContent as Json)) expect(text).toContain('confirmation_token');
  else expect(text, `${run} ${name} has a text rendering`).toContain('<forge-data untrusted="true">');
  return result.structuredContent as Json;
}

/** What identifies a list item, to see that page two repeats nothing of page one. */
function itemKey(item: unknown): string {
  const o = item as Json;
  const key = o.id ?? o.iid ?? o.path ?? o.new_path ?? o.name ?? o.sha;
  return typeof key === 'string' || typeof key === 'number' ? String(key) : JSON.stringify(item);
}

async function runSample(run: Run, name: string, sample: Sample): Promise<void> {
  const session = sessions.get(run);
  if (!session) throw new Error(`no ${run} session`);
  const args = { ...sample.args, ...(sample.prepare ? await sample.prepare({ run, rest }) : {}) };
  let value = checked(run, name, await session.call(name, args));
  if (sample.confirm) {
    const question = value.confirmation_required as { token?: string; summary?: string } | undefined;
    expect(question?.token, `${run} ${name} asks first`).toBeTypeOf('string');
    expect(question?.summary).toBeTypeOf('string');
    value = checked(run, name, await session.call(name, { ...args, confirmation_token: question?.token }));
    expect(value).not.toHaveProperty('confirmation_required');
  }
  if (sample.expect) expect(value).toMatchObject(sample.expect);
  if (Array.isArray(value.items) && sample.empty === undefined)
    expect(value.items.length, `${run} ${name} finds something`).toBeGreaterThan(0);
  await sample.verify?.({ run, rest }, args);
  // A branch answers as itself: each include is in the value, a review says which method ran.
  for (const include of [args.include].flat()) if (typeof include === 'string') expect(value, `${run} ${name}`).toHaveProperty(include);
  if (typeof args.method === 'string') expect(value.method, `${run} ${name}`).toBe(args.method);
  if (sample.page) {
    const { items, next, cursorArg } = sample.page;
    const first = at(value, items) as unknown[];
    expect(first.length, `${run} ${name} page one`).toBeGreaterThan(0);
    expect(at(value, next), `${run} ${name} has a page two`).toBeTypeOf('string');
    const second = checked(run, name, await session.call(name, { ...args, [cursorArg]: at(value, next) }));
    const more = at(second, items) as unknown[];
    expect(more.length, `${run} ${name} page two`).toBeGreaterThan(0);
    const seen = new Set(first.map(itemKey));
    expect(more.map(itemKey).filter((key) => seen.has(key))).toEqual([]);
  }
}

/** The field at a dotted path (`notes.items`: an included list's page). */
function at(value: Record<string, unknown>, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((v, key) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined), value);
}

/** A value's shape: the fields of its objects (at every depth) with the JSON kind of each. */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? [] : [shapeOf(value[0])];
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, shapeOf(v)]),
    );
  return value === null ? 'null' : typeof value;
}

async function runAlias(run: Run, alias: string, sample: AliasSample): Promise<void> {
  const session = sessions.get(run);
  if (!session) throw new Error(`no ${run} session`);
  expect(session.tools.map((t) => t.name)).not.toContain(alias);
  // Validated against the target's listed outputSchema: an alias is registered with its tool's schemas.
  const viaAlias = checked(run, sample.target, await session.call(alias, sample.args));
  const viaTarget = checked(run, sample.target, await session.call(sample.target, { ...sample.args, ...sample.targetArgs }));
  if (sample.expect) {
    expect(viaAlias, `${run} ${alias}`).toMatchObject(sample.expect);
    expect(viaTarget, `${run} ${sample.target}`).toMatchObject(sample.expect);
  }
  if (sample.same === 'value') expect(viaAlias, `${run} ${alias}`).toEqual(viaTarget);
  else expect(shapeOf(viaAlias), `${run} ${alias}`).toEqual(shapeOf(viaTarget));
  await sample.verify?.({ run, rest }, viaAlias);
}

for (const run of RUNS) {
  describe(`[TOOL-MATRIX] every alias through ${run}`, () => {
    for (const [alias, sample] of Object.entries(ALIASES)) {
      it(`${alias}: answers like ${sample.target}`, async () => {
        await runAlias(run, alias, sample);
      });
    }
  });
}

for (const run of RUNS) {
  describe(`[TOOL-MATRIX] [TOOL-PAGING] [TOOL-CONFIRM] every tool through ${run}`, () => {
    for (const [name, samples] of Object.entries(SAMPLES)) {
      for (const sample of samples) {
        it(`${name}: ${sample.label}`, async () => {
          await runSample(run, name, sample);
        });
      }
    }
  });
}

describe('[TOOL-READONLY] read-only refuses every write', () => {
  /** Why the call was refused, or undefined when it was not. */
  const refusal = async (session: Session, name: string, args: Json): Promise<string | undefined> => {
    try {
      const result = await session.call(name, args);
      return result.isError === true ? JSON.stringify(result.content) : undefined;
    } catch (error) {
      // An unregistered tool is a JSON-RPC error, which the SDK clients throw.
      return (error as Error).message;
    }
  };

  for (const mode of ['X-MCP-Readonly over HTTP (v1 client)', 'FORGE_READ_ONLY over stdio (v2 client)'] as const) {
    it(`${mode}: no write tool is listed, each is refused, nothing reaches the forge`, async () => {
      const full = sessions.get('v2-http');
      if (!full) throw new Error('no v2-http session');
      const writes = full.tools.filter((t) => t.annotations?.readOnlyHint !== true).map((t) => t.name);
      const reads = full.tools.filter((t) => t.annotations?.readOnlyHint === true).map((t) => t.name);
      expect(writes.length).toBeGreaterThan(0);
      const session = mode.startsWith('X-MCP')
        ? await httpSession('v1', { 'x-mcp-readonly': 'true' })
        : await stdioSession('v2', { FORGE_READ_ONLY: 'true' });
      try {
        const listed = session.tools.map((t) => t.name);
        expect(listed.filter((name) => writes.includes(name))).toEqual([]);
        expect(listed).toEqual(reads);
        const before = stack.forge.forge.counters.api;
        // An alias goes with its tool: a write tool's aliases are refused too.
        const writeAliases = toolsetTools()
          .filter((t) => writes.includes(t.name))
          .flatMap((t) => t.aliases ?? []);
        expect(writeAliases.length).toBeGreaterThan(0);
        const answers: Record<string, string | undefined> = {};
        for (const name of writes) answers[name] = await refusal(session, name, SAMPLES[name]?.[0]?.args ?? {});
        for (const name of writeAliases) answers[name] = await refusal(session, name, ALIASES[name]?.args ?? {});
        // Refused as a tool this server does not have, not for some other reason (bad arguments, the forge).
        for (const name of [...writes, ...writeAliases])
          expect(answers[name], name).toMatch(new RegExp(`${name}.*not found|not found.*${name}`, 'i'));
        expect(stack.forge.forge.counters.api).toBe(before);
      } finally {
        await session.close();
      }
    });
  }
});
