/**
 * `/mcp` on the wire (issue 17 item 1): both protocol eras on one stateless endpoint, the 2026-07-28 header
 * checks and their error answers, cache fields, 405 for GET/DELETE, JSON answers and the per-request SSE stream
 * of a tool call that asked for progress. Raw HTTP where the wire shape is the point, the SDK clients where the
 * client's view is.
 */
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTokenStack, type Stack } from './mcp.testkit.ts';

const MODERN = '2026-07-28';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'wire-test', version: '1' },
};

let stack: Stack;
let pat = '';

beforeAll(async () => {
  ({ stack, pat } = await startTokenStack());
});
afterAll(async () => {
  await stack.close();
});

/** POSTs one JSON-RPC message; `headers` come on top of content type, accept and the bearer. */
async function post(message: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${stack.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${pat}`,
      ...headers,
    },
    body: JSON.stringify(message),
  });
}

/** A 2026-07-28 request with its envelope and the standard headers (`name` adds Mcp-Name). */
function modern(method: string, params: Record<string, unknown> = {}, name?: string) {
  const message = { jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: { ...envelope, ...((params._meta as object) ?? {}) } } };
  const headers: Record<string, string> = { 'mcp-protocol-version': MODERN, 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) };
  return { message, headers };
}

/** The JSON-RPC messages of an SSE body. */
function sseMessages(text: string): { method?: string; result?: unknown; params?: Record<string, unknown> }[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)) as { method?: string });
}

describe('the 2026-07-28 revision', () => {
  it('[MCP-DISCOVER] answers server/discover with the supported versions, resultType and cache fields, without initialize', async () => {
    const { message, headers } = modern('server/discover');
    const response = await post(message, headers);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    const body = (await response.json()) as { result: Record<string, unknown> };
    expect(body.result).toMatchObject({
      supportedVersions: expect.arrayContaining([MODERN]) as unknown,
      capabilities: { tools: expect.any(Object) as unknown },
      resultType: 'complete',
      ttlMs: expect.any(Number) as unknown,
      cacheScope: 'private',
    });
  });

  it('[MCP-CACHE] tools/list carries resultType, ttlMs and cacheScope; a tool call carries resultType', async () => {
    const list = modern('tools/list');
    const listed = (await (await post(list.message, list.headers)).json()) as { result: Record<string, unknown> };
    expect(listed.result).toMatchObject({ resultType: 'complete', ttlMs: 300_000, cacheScope: 'private' });
    expect((listed.result.tools as unknown[]).length).toBeGreaterThan(0);
    const call = modern('tools/call', { name: 'get_current_user', arguments: {} }, 'get_current_user');
    const called = (await (await post(call.message, call.headers)).json()) as { result: Record<string, unknown> };
    expect(called.result).toMatchObject({ resultType: 'complete' });
    expect(called.result.isError).not.toBe(true);
  });

  it('[MCP-HEADERS] refuses a missing or disagreeing Mcp-Method / Mcp-Name (400, -32020), an unknown version (400, -32022) and an unknown method (404, -32601)', async () => {
    const before = stack.forge.forge.counters.api;
    const list = modern('tools/list');
    const noMethod = await post(list.message, { 'mcp-protocol-version': MODERN });
    expect(noMethod.status).toBe(400);
    expect(((await noMethod.json()) as { error: { code: number } }).error.code).toBe(-32020);

    const wrongMethod = await post(list.message, { ...list.headers, 'mcp-method': 'prompts/list' });
    expect(wrongMethod.status).toBe(400);
    expect(((await wrongMethod.json()) as { error: { code: number } }).error.code).toBe(-32020);

    const call = modern('tools/call', { name: 'get_current_user', arguments: {} }, 'get_project');
    const wrongName = await post(call.message, call.headers);
    expect(wrongName.status).toBe(400);
    expect(((await wrongName.json()) as { error: { code: number } }).error.code).toBe(-32020);
    const { 'mcp-name': _dropped, ...withoutName } = modern('tools/call', { name: 'get_current_user', arguments: {} }, 'x').headers;
    const noName = await post(call.message, withoutName);
    expect(noName.status).toBe(400);

    const future = {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/list',
      params: { _meta: { ...envelope, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
    };
    const unsupported = await post(future, { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' });
    expect(unsupported.status).toBe(400);
    const unsupportedBody = (await unsupported.json()) as { error: { code: number; data: { supported: string[]; requested: string } } };
    expect(unsupportedBody.error.code).toBe(-32022);
    expect(unsupportedBody.error.data).toMatchObject({ supported: expect.arrayContaining([MODERN]) as unknown, requested: '2099-01-01' });

    const unknown = modern('nothing/here');
    const missing = await post(unknown.message, unknown.headers);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: number } }).error.code).toBe(-32601);
    // None of the refused requests reached the forge.
    expect(stack.forge.forge.counters.api).toBe(before);
  });

  it('[MCP-SSE-PROGRESS] answers JSON, and streams SSE with progress only for a call that asked for it', async () => {
    const plain = modern('tools/call', { name: 'get_current_user', arguments: {} }, 'get_current_user');
    const json = await post(plain.message, plain.headers);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    const asked = modern('tools/call', { name: 'get_current_user', arguments: {}, _meta: { progressToken: 'p1' } }, 'get_current_user');
    const streamed = await post(asked.message, asked.headers);
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const messages = sseMessages(await streamed.text());
    expect(messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params?.progress)).toEqual([0, 1]);
    expect(messages.at(-1)?.result).toMatchObject({ resultType: 'complete' });
  });
});

describe('the 2025 revisions on the same endpoint', () => {
  it.each(['2025-06-18', '2025-11-25'])(
    '[MCP-ERAS] initialize %s is answered as JSON with no session; later requests need none',
    async (version) => {
      const init = await post({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'legacy', version: '1' } },
      });
      expect(init.status).toBe(200);
      expect(init.headers.get('content-type')).toMatch(/^application\/json/);
      expect(init.headers.get('mcp-session-id')).toBeNull();
      expect(((await init.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(version);
      const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { 'mcp-protocol-version': version });
      expect(list.status).toBe(200);
      const listed = (await list.json()) as { result: Record<string, unknown> };
      expect((listed.result.tools as unknown[]).length).toBeGreaterThan(0);
      // 2025-era answers never carry the 2026 fields.
      expect(listed.result.ttlMs).toBeUndefined();
      expect(listed.result.resultType).toBeUndefined();
    },
  );

  it('[MCP-SSE-PROGRESS] a 2025 tool call that asked for progress gets an SSE stream; one that did not gets JSON', async () => {
    const call = { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_current_user', arguments: {} } };
    const json = await post(call, { 'mcp-protocol-version': '2025-11-25' });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    const streamed = await post(
      { ...call, params: { ...call.params, _meta: { progressToken: 9 } } },
      { 'mcp-protocol-version': '2025-11-25' },
    );
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const messages = sseMessages(await streamed.text());
    expect(messages.filter((m) => m.method === 'notifications/progress')).toHaveLength(2);
  });

  it('[MCP-405] GET and DELETE on /mcp answer 405 with Allow: POST, with or without a session id', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${stack.url}/mcp`, {
        method,
        headers: { authorization: `Bearer ${pat}`, accept: 'text/event-stream', 'mcp-session-id': 'abc' },
      });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
  });
});

describe('the SDK clients see progress on either era', () => {
  it('[MCP-SSE-PROGRESS] [MCP-ERAS] v1 and v2 (both eras) clients receive the progress of a tool call', async () => {
    const url = new URL(`${stack.url}/mcp`);
    const requestInit = { headers: { authorization: `Bearer ${pat}` } };
    const seen: Record<string, number[]> = {};
    const v1 = new Client({ name: 'v1', version: '1' });
    await v1.connect(new StreamableHTTPClientTransport(url, { requestInit }));
    await v1.callTool({ name: 'get_current_user', arguments: {} }, undefined, {
      onprogress: (p) => (seen.v1 ??= []).push(p.progress),
    });
    await v1.close();
    for (const kind of ['legacy', 'modern'] as const) {
      const v2 = new V2Client({ name: 'v2', version: '1' }, kind === 'modern' ? { versionNegotiation: { mode: { pin: MODERN } } } : {});
      await v2.connect(new V2Transport(url, { requestInit }));
      expect(v2.getProtocolEra()).toBe(kind);
      await v2.callTool({ name: 'get_current_user', arguments: {} }, { onprogress: (p) => (seen[kind] ??= []).push(p.progress) });
      await v2.close();
    }
    expect(seen).toEqual({ v1: [0, 1], legacy: [0, 1], modern: [0, 1] });
  });
});

describe('the answer and its log line', () => {
  it('[MCP-JSON] a JSON answer is written whole with its length, and the request logs one completion line', async () => {
    const before = stack.logs.lines.length;
    const response = await post({ jsonrpc: '2.0', id: 5, method: 'tools/list', params: {} }, { 'mcp-protocol-version': '2025-11-25' });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect((JSON.parse(text) as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const completed = stack.logs.lines.slice(before).filter((line) => line.includes('"request completed"'));
    expect(completed).toHaveLength(1);
    expect(completed[0]).toContain('"status":200');
  });
});
