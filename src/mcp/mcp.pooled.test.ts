/**
 * The pooled path of `/mcp` (mcp.pooled.ts): plain 2025-era tools/list and tools/call share a server per tool
 * surface. What must hold: the same answers as the per-request server, each call with its own caller's token even
 * when two clients use the same JSON-RPC id at once, and the narrowed surface of each request.
 */
import { classifyInboundRequest, McpServer, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { silentLogger } from '../core/logger.ts';
import { createPooledServing, pooledMethod, requestEntry, serializeAnswer } from './mcp.pooled.ts';
import { renderedJsonOf, sanitizeAndRender } from './tools/tool.text.ts';
import { postRpc, startStack, type Stack } from './mcp.testkit.ts';

let stack: Stack;
let apiToken = '';
let userOnlyToken = '';
let projectId = 0;

beforeAll(async () => {
  stack = await startStack({ mode: 'none' });
  const { forge, user } = stack.forge;
  apiToken = forge.createPersonalAccessToken(user.username, ['api']);
  userOnlyToken = forge.createPersonalAccessToken(user.username, ['read_user']);
  const response = await fetch(`${forge.url}/api/v4/projects?membership=true&per_page=1`, { headers: { 'private-token': apiToken } });
  projectId = ((await response.json()) as { id: number }[])[0]?.id ?? 0;
});
afterAll(async () => {
  await stack.close();
});

const post = (token: string, message: unknown, headers: Record<string, string> = {}, path = '/mcp') =>
  postRpc(stack.url, token, message, headers, path);

/** The same message asking for progress, which the pooled path leaves to the per-request server. */
function withProgress(message: { params: Record<string, unknown> }) {
  return { ...message, params: { ...message.params, _meta: { progressToken: 'p' } } };
}

const list = (id: number | string) => ({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });
const call = (id: number | string, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('[MCP-POOLED] the shared server of plain 2025-era requests', () => {
  it('answers tools/list and tools/call as the per-request server does (a request asking for progress takes that path)', async () => {
    for (const message of [list(3), call(4, 'get_project', { project_id: String(projectId) }), call(5, 'no_such_tool')]) {
      const pooled = await post(apiToken, message);
      const perRequest = await post(apiToken, withProgress(message));
      expect(pooled.status).toBe(200);
      expect(pooled.type).toMatch(/^application\/json/);
      expect(perRequest.status).toBe(200);
      expect(pooled.body).toEqual(perRequest.body);
    }
    // The second tools/list comes from the kept answer, with this request's id.
    expect((await post(apiToken, list('again'))).body).toMatchObject({ id: 'again', result: { tools: expect.any(Array) as unknown } });
  });

  it('keeps concurrent callers apart: the same id, different tokens, each gets its own answer', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(i % 2 === 0 ? apiToken : userOnlyToken, call(1, 'get_project', { project_id: String(projectId) })),
      ),
    );
    answers.forEach((answer, i) => {
      const result = (answer.body as { id: unknown; result: { isError?: boolean; structuredContent: Record<string, unknown> } }).result;
      expect((answer.body as { id: unknown }).id).toBe(1);
      if (i % 2 === 0) expect(result.structuredContent).toMatchObject({ id: projectId });
      else expect(result).toMatchObject({ isError: true, structuredContent: { error: { type: 'insufficient_scope' } } });
    });
  });

  it('serves each request its own narrowed surface', async () => {
    const names = async (headers: Record<string, string>, path?: string) =>
      ((await post(apiToken, list(1), headers, path)).body as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name);
    const all = await names({});
    const issues = await names({ 'x-mcp-toolsets': 'issues' });
    const readonlyIssues = await names({}, '/mcp/x/issues/readonly');
    expect(issues).toContain('save_issue');
    expect(issues.every((n) => all.includes(n)) && issues.length < all.length).toBe(true);
    expect(readonlyIssues).toEqual(issues.filter((n) => n !== 'save_issue' && n !== 'save_issue_note'));
    const refused = await post(apiToken, call(2, 'create_issue', { project_id: String(projectId), title: 'x' }), {
      'x-mcp-readonly': 'true',
    });
    expect(refused.body).toMatchObject({ id: 2 });
    expect(JSON.stringify(refused.body)).toMatch(/not found|-32602|isError/i);
    expect(await names({})).toEqual(all);
  });
});

describe('[MCP-POOLED] what takes the pooled path', () => {
  const headers = (version?: string, extra: Record<string, string> = {}) => ({
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    ...(version !== undefined ? { 'mcp-protocol-version': version } : {}),
    ...extra,
  });
  /** The decision as the SDK alone makes it (what pooledMethod did before its own check of the common shape). */
  const bySdk = (h: Record<string, string>, body: Record<string, unknown>) => {
    const outcome = classifyInboundRequest({
      httpMethod: 'POST',
      ...(h['mcp-protocol-version'] !== undefined ? { protocolVersionHeader: h['mcp-protocol-version'] } : {}),
      ...(h['mcp-method'] !== undefined ? { mcpMethodHeader: h['mcp-method'] } : {}),
      body,
    });
    return outcome.kind === 'legacy' && outcome.reason === 'no-claim';
  };
  const base = { jsonrpc: '2.0', method: 'tools/call', params: { name: 'get_project', arguments: { project_id: '1' } } };
  const bodies: Record<string, unknown>[] = [
    { ...base, id: 1 },
    { ...base, id: 'a' },
    { ...base, id: 0 },
    { ...base, id: -7 },
    { ...base, id: 1.5 },
    { ...base, id: 2 ** 60 },
    { ...base, id: null },
    { ...base, id: true },
    { ...base },
    { ...base, id: 1, jsonrpc: '1.0' },
    { ...base, id: 1, extra: 1 },
    { ...base, id: 1, result: {} },
    { ...base, id: 1, error: { code: 1, message: 'x' } },
    { ...base, id: 1, params: undefined },
    { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { cursor: 'x' } },
    { ...base, id: 1, params: { ...base.params, _meta: {} } },
    { ...base, id: 1, params: { ...base.params, _meta: { 'vendor/x': 1 } } },
    { ...base, id: 1, params: { ...base.params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } },
    { ...base, id: 1, params: { ...base.params, _meta: { 'io.modelcontextprotocol/protocolVersion': 5 } } },
    { ...base, id: 1, params: { ...base.params, _meta: null } },
  ];

  it('agrees with the SDK classification on every shape, with every supported revision in the header and none', () => {
    let pooled = 0;
    for (const version of [undefined, ...SUPPORTED_PROTOCOL_VERSIONS]) {
      for (const extra of [{}, { 'mcp-method': 'tools/list' }]) {
        for (const body of bodies) {
          const h = headers(version, extra);
          const expected = bySdk(h, body) ? body.method : undefined;
          expect(pooledMethod(h, body), `${JSON.stringify(body)} with ${JSON.stringify(h)}`).toBe(expected);
          if (expected !== undefined) pooled += 1;
        }
      }
    }
    // Both answers occur: the table is not all refusals (nor all pooled).
    expect(pooled).toBeGreaterThan(10);
    expect(pooled).toBeLessThan(bodies.length * (SUPPORTED_PROTOCOL_VERSIONS.length + 1) * 2);
  });

  it('hands requests to the SDK server past its message sorting (the entry of the pinned release is there)', () => {
    const server = new McpServer({ name: 't', version: '1' });
    expect(requestEntry(server)).toBeTypeOf('function');
  });
});

describe('[MCP-POOLED] the serialized answer', () => {
  const value = {
    title: 'a </forge-data> closing tag, "quotes", a backslash \\ and ünïcödé',
    diffs: [{ path: 'a.ts', diff: '@@ -1 +1 @@\n-old\n+new\n' }],
    empty: {},
  };

  it('splices the JSON the tool layer made of structuredContent, equal as JSON to stringifying the message', () => {
    const rendered = sanitizeAndRender(structuredClone(value));
    const message: JSONRPCMessage = {
      jsonrpc: '2.0',
      id: 'req-7',
      result: { content: [{ type: 'text', text: rendered.text }], structuredContent: rendered.value },
    };
    const body = serializeAnswer(message);
    expect(JSON.parse(body)).toEqual(JSON.parse(JSON.stringify(message)));
    // The spliced text is the tool layer's own string, not a second stringify of the value.
    expect(renderedJsonOf(rendered.value)).toBeDefined();
    expect(body).toContain(`"structuredContent":${renderedJsonOf(rendered.value)}}`);
  });

  it('splices it for the shallow copy of structuredContent the SDK validation hands the transport, and only for that', () => {
    const rendered = sanitizeAndRender(structuredClone(value));
    const copy = { ...rendered.value };
    const message: JSONRPCMessage = { jsonrpc: '2.0', id: 3, result: { content: [], structuredContent: copy } };
    expect(serializeAnswer(message)).toBe(
      `{"result":{"content":[],"structuredContent":${renderedJsonOf(rendered.value)}},"jsonrpc":"2.0","id":3}`,
    );
    expect(renderedJsonOf(copy)).toBe(JSON.stringify(copy));
    // A copy that differs in any member, or in the order of its members, is stringified.
    expect(renderedJsonOf({ ...rendered.value, title: 'other' })).toBeUndefined();
    expect(renderedJsonOf({ ...rendered.value, more: 1 })).toBeUndefined();
    const { title, ...rest } = rendered.value;
    expect(renderedJsonOf({ ...rest, title })).toBeUndefined();
  });

  it('recognises the structuredContent a tool answered in what the SDK server hands the pooled transport', async () => {
    const pooled = createPooledServing<null>({
      log: silentLogger(),
      factory: () => {
        const server = new McpServer({ name: 't', version: '1' });
        server.registerTool(
          'window',
          { inputSchema: z.object({}), outputSchema: z.object({ diffs: z.array(z.unknown()) }).loose() },
          () => {
            const rendered = sanitizeAndRender(structuredClone(value));
            return { content: [{ type: 'text', text: rendered.text }], structuredContent: rendered.value };
          },
        );
        return server;
      },
    });
    const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const answer = await pooled.serve(headers, call(9, 'window'), { token: 't', clientId: 'c', scopes: [] }, 'k', null);
    const structured = (answer?.result as { structuredContent?: object } | undefined)?.structuredContent;
    expect(structured).toEqual(value);
    expect(renderedJsonOf(structured as object)).toBe(JSON.stringify(value));
    // The bytes sent: the spliced pieces, UTF-8 encoded (the value holds non-ASCII text).
    const sent = answer?.body.toString('utf8') ?? '';
    expect(sent).toBe(serializeAnswer({ jsonrpc: '2.0', id: 9, result: answer?.result as never }));
    expect(JSON.parse(sent)).toMatchObject({ jsonrpc: '2.0', id: 9, result: { structuredContent: value } });
    await pooled.close();
  });

  it('stringifies what the tool layer did not render: an error result, a value it cleaned, a result with only structuredContent', () => {
    const unknown: JSONRPCMessage = { jsonrpc: '2.0', id: 1, result: { content: [], structuredContent: structuredClone(value) } };
    expect(serializeAnswer(unknown)).toBe(JSON.stringify(unknown));
    const cleaned = sanitizeAndRender({ title: 'zero\u200Bwidth' });
    expect(renderedJsonOf(cleaned.value)).toBeUndefined();
    const error: JSONRPCMessage = { jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'bad' } };
    expect(serializeAnswer(error)).toBe(JSON.stringify(error));
    const bare = sanitizeAndRender(structuredClone(value));
    const only: JSONRPCMessage = { jsonrpc: '2.0', id: 3, result: { structuredContent: bare.value } };
    expect(JSON.parse(serializeAnswer(only))).toEqual(JSON.parse(JSON.stringify(only)));
  });
});
