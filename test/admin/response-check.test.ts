/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call -- response bodies and the document are untyped JSON; the assertions pin their shape */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoute, registerApiRoutes } from '../../src/core/http/api-route.ts';
import { checkResponsesAgainstOpenApi, createResponseChecker, type Exchange } from '../support/openapi-responses.ts';
import { buildTestRestApp, openTestPlatform, type TestPlatform } from '../support/platform.ts';
import { httpClient, openHarness, TEST_CATALOG, type Harness } from './admin-harness.ts';

/**
 * The response check of the test servers (test/support/openapi-responses.ts) must be able to fail: a drifting
 * body, an undocumented status, an undocumented route and an error outside the envelope are each caught.
 */
describe('the OpenAPI response check', () => {
  let h: Harness;
  let check: (exchange: Exchange) => string | undefined;
  beforeAll(async () => {
    h = await openHarness('sqlite', { catalog: TEST_CATALOG });
    check = createResponseChecker((await h.call('GET', '/api/v1/openapi.json')).body);
  });
  afterAll(async () => h.close());

  const json = { 'content-type': 'application/json; charset=utf-8' };

  it('[ADM-API-3] passes the responses the server really sends', async () => {
    const r = await h.call('GET', '/api/v1/admin/models', { token: h.token });
    expect(r.status).toBe(200);
    const exchange: Exchange = {
      method: 'GET',
      path: '/api/v1/admin/models',
      route: '/api/v1/admin/models',
      status: 200,
      headers: json,
      body: r.text,
    };
    expect(check(exchange)).toBeUndefined();
  });

  it('[ADM-API-3] regression: fails a model row whose hub token_counter kept the anchored fields (issue 12 item 4)', async () => {
    const r = await h.call('GET', '/api/v1/admin/models', { token: h.token });
    const models = r.body.models.map((m: { capabilities: object }, i: number) =>
      i === 0
        ? {
            ...m,
            capabilities: {
              ...m.capabilities,
              token_counter: {
                kind: 'hub',
                encoding: 'cl100k_base',
                safety_factor: '1.25',
                tokenizer_id: 'meta-llama/Llama-3.1-8B-Instruct',
              },
            },
          }
        : m,
    );
    const problem = check({
      method: 'GET',
      path: '/agent_api/v1/models',
      route: '/agent_api/v1/models',
      status: 200,
      headers: json,
      body: JSON.stringify({ models }),
    });
    expect(problem).toMatch(
      /^GET \/agent_api\/v1\/models → 200: the body does not match the documented schema: \/models\/0\/capabilities\/token_counter/,
    );
  });

  it('[ADM-API-3] fails an undocumented status, an undocumented route, a missing documented header and an error outside the envelope', () => {
    const envelope = JSON.stringify({ error: { code: 'internal', message: 'x' } });
    const at = (over: Partial<Exchange>): string | undefined =>
      check({
        method: 'GET',
        path: '/api/v1/admin/model_providers/p',
        route: '/api/v1/admin/model_providers/:provider_id',
        status: 200,
        headers: json,
        body: '{}',
        ...over,
      });
    expect(at({ status: 500, body: envelope })).toMatch(
      /status 500 is not documented for GET \/api\/v1\/admin\/model_providers\/\{provider_id\}/,
    );
    expect(at({ status: 404, body: envelope })).toBeUndefined();
    expect(at({ status: 404, body: JSON.stringify({ error: 'not_found' }) })).toMatch(/body does not match/);
    expect(at({ status: 404, body: envelope, headers: { 'content-type': 'text/html' } })).toMatch(
      /content type text\/html is not documented/,
    );
    expect(at({ route: '/api/v1/admin/secret_route', path: '/api/v1/admin/secret_route' })).toMatch(
      /undocumented route GET \/api\/v1\/admin\/secret_route/,
    );
    expect(at({ method: 'PATCH', status: 404, body: envelope })).toMatch(/undocumented route PATCH/);
    // No route matched: only 400/404/405 in the envelope.
    expect(at({ route: undefined, path: '/api/v1/nope', status: 404, body: envelope })).toBeUndefined();
    expect(at({ route: undefined, path: '/api/v1/nope', status: 200, body: '{}' })).toMatch(/no route matched/);
    expect(at({ route: undefined, path: '/api/v1/nope', status: 404, body: 'Not Found' })).toMatch(/not JSON/);
    // Documented headers are checked too.
    const doc = {
      method: 'GET',
      path: '/api/v1/openapi.json',
      route: '/api/v1/openapi.json',
      status: 200,
      body: '{"openapi":"3.1.0","paths":{}}',
    };
    expect(check({ ...doc, headers: { ...json, 'cache-control': 'public, no-cache', etag: '"x"' } })).toBeUndefined();
    expect(check({ ...doc, headers: { ...json, 'cache-control': 'no-store', etag: '"x"' } })).toMatch(/header Cache-Control/);
    expect(check({ ...doc, headers: { ...json, etag: '"x"' } })).toMatch(/header Cache-Control is missing/);
    // Outside the documented prefixes (health, gRPC HTTP mappings) nothing is checked.
    expect(at({ route: '/healthz', path: '/healthz' })).toBeUndefined();
  });

  it('[ADM-API-3] is on the server, so a drifting route or an undocumented one fails the test whatever client calls it', async () => {
    const platform: TestPlatform = await openTestPlatform('sqlite');
    const app = await buildTestRestApp(platform);
    // A documented route whose handler drifts from its response schema, and a route nobody documented.
    registerApiRoutes(
      app,
      [
        defineRoute({
          method: 'GET',
          path: '/api/v1/admin/drift',
          operationId: 'drift',
          summary: 'drifts',
          tag: 'test',
          auth: 'public',
          response: z.object({ count: z.number().int() }),
          errors: [],
          handler: async () => ({ count: 'three' }),
        }),
      ],
      { auth: platform.ctx.auth },
    );
    app.get('/agent_api/v1/undocumented', async () => ({ ok: true }));
    const responses = await checkResponsesAgainstOpenApi(app);
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const address = app.server.address();
      if (!address || typeof address === 'string') throw new Error('no address');
      const base = `http://127.0.0.1:${address.port}`;
      const { call } = httpClient(base, responses);
      await expect(call('GET', '/api/v1/admin/drift')).rejects.toThrow(
        /GET \/api\/v1\/admin\/drift → 200: the body does not match the documented schema: \/count must be integer/,
      );
      await expect(call('GET', '/agent_api/v1/undocumented')).rejects.toThrow(/undocumented route GET \/agent_api\/v1\/undocumented/);
      // Plain fetch, bypassing the harness client, is recorded all the same.
      expect((await fetch(`${base}/api/v1/admin/drift`)).status).toBe(200);
      expect(responses.take()).toEqual([expect.stringMatching(/\/count must be integer/)]);
      // A conforming exchange records nothing.
      expect((await call('GET', '/api/v1/openapi.json')).status).toBe(200);
      expect(responses.take()).toEqual([]);
    } finally {
      await app.close();
      await platform.close();
    }
  });
});
