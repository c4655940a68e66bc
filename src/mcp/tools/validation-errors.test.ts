/**
 * Arguments a tool's input schema refuses are a tool error like any other (issue 17 item 3): `isError` with
 * `structuredContent.error.type` `validation`, on the pooled and the per-request path of `/mcp` and on the server
 * stdio serves, the message naming the field but not the value. And the dev forge's offset paging stops counting
 * above 10,000 records as GitLab does, so list tools answer without a `total` rather than a wrong one.
 */
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paginate } from '../../devforge/devforge.api.routes.ts';
import { captureLogger, postRpc, startTokenStack, type Stack } from '../mcp.testkit.ts';
import { createForgeApi } from './forge.client.ts';
import { pageResult } from './forge.paging.ts';
import { createForgeMcpServer } from './forge.tools.ts';

interface ToolResult {
  isError?: boolean;
  content?: { type: string; text?: string }[];
  structuredContent?: { error?: { type?: string; status?: number; message?: string } };
}

/** A value no message may repeat. */
const SECRET_VALUE = 'value-the-client-sent-7f3a';

let stack: Stack;
let pat = '';

beforeAll(async () => {
  ({ stack, pat } = await startTokenStack());
});
afterAll(async () => {
  await stack.close();
});

function expectValidationError(result: ToolResult, field: string): void {
  expect(result.isError).toBe(true);
  const error = result.structuredContent?.error;
  expect(error).toMatchObject({ type: 'validation', status: 0 });
  expect(error?.message).toContain(field);
  expect(JSON.stringify(result)).not.toContain(SECRET_VALUE);
  expect(result.content?.[0]?.text).toContain('validation');
}

describe('[TOOL-ERRORS-VALIDATION] arguments the input schema refuses', () => {
  it('answer isError with structuredContent.error.type validation through the v2 SDK client over Streamable HTTP', async () => {
    const client = new V2Client({ name: 'validation-errors', version: '1' });
    await client.connect(new V2Transport(new URL(`${stack.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${pat}` } } }));
    try {
      const result = (await client.callTool({
        name: 'list_issues',
        arguments: { project_id: `${stack.forge.user.username}/hello-forge`, per_page: SECRET_VALUE },
      })) as ToolResult;
      expectValidationError(result, 'per_page');
    } finally {
      await client.close();
    }
  });

  it('answer the same on the pooled and the per-request path', async () => {
    const message = (meta: Record<string, unknown>) => ({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'get_project', arguments: { project_id: { nested: SECRET_VALUE } }, ...meta },
    });
    const pooled = await postRpc(stack.url, pat, message({}));
    // Asking for progress sends a request to the per-request server (mcp.pooled.ts).
    const perRequest = await postRpc(stack.url, pat, message({ _meta: { progressToken: 'p' } }));
    for (const answer of [pooled, perRequest]) {
      expect(answer.status).toBe(200);
      expectValidationError((answer.body as { result: ToolResult }).result, 'project_id');
    }
  });

  it('answer the same from the server stdio serves', async () => {
    const server = createForgeMcpServer({ forgeUrl: stack.forge.forge.url, fetch, log: captureLogger().logger, getToken: async () => pat });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new V2Client({ name: 'validation-errors-stdio', version: '1' });
    await client.connect(clientSide);
    try {
      expectValidationError((await client.callTool({ name: 'get_project', arguments: {} })) as ToolResult, 'project_id');
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('[TOOL-PAGING-UNCOUNTED] offset paging above 10,000 records', () => {
  let app: FastifyInstance;
  let url = '';

  beforeAll(async () => {
    app = Fastify();
    // The dev forge's paginate over a collection of a given size, served at a path no keyset list matches.
    app.get<{ Params: { size: string } }>('/api/v4/sized/:size', (request, reply) =>
      paginate(
        request,
        reply,
        Array.from({ length: Number(request.params.size) }, (_, i) => ({ id: i + 1 })),
      ),
    );
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app.close();
  });

  it('omit x-total, x-total-pages and rel=last but keep x-next-page; list answers then have no total', async () => {
    const over = await fetch(`${url}/api/v4/sized/10001?page=2&per_page=100`);
    expect(over.headers.get('x-total')).toBeNull();
    expect(over.headers.get('x-total-pages')).toBeNull();
    expect(over.headers.get('link')).not.toContain('rel="last"');
    expect(over.headers.get('link')).toContain('rel="next"');
    expect(over.headers.get('x-next-page')).toBe('3');
    expect(over.headers.get('x-prev-page')).toBe('1');

    const at = await fetch(`${url}/api/v4/sized/10000?per_page=100`);
    expect(at.headers.get('x-total')).toBe('10000');
    expect(at.headers.get('x-total-pages')).toBe('100');
    expect(at.headers.get('link')).toContain('rel="last"');

    const api = createForgeApi({ forgeUrl: url, fetch });
    const uncounted = pageResult(await api.page<{ id: number }>('/sized/10001', 'token', { page: 1, per_page: 20 }), (item) => item);
    expect(uncounted).not.toHaveProperty('total');
    expect(uncounted).toMatchObject({ has_more: true, next_cursor: expect.any(String) as unknown });
    const counted = pageResult(await api.page<{ id: number }>('/sized/10000', 'token', { page: 1, per_page: 20 }), (item) => item);
    expect(counted.total).toBe(10_000);
  });
});
