/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-argument -- the OpenAPI document is untyped JSON; the assertions pin its shape */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { laneCommandSchema, modelDefinitionCommandSchema } from '../../src/admin/admin.schemas.ts';
import { openHarness, TEST_CATALOG, type Harness } from './admin-harness.ts';

const EXPECTED = [
  'get /api/v1/admin/models',
  'get /api/v1/admin/model_providers',
  'get /api/v1/admin/model_providers/{provider_id}',
  'put /api/v1/admin/model_providers/{provider_id}/lane',
  'put /api/v1/admin/model_providers/{provider_id}/model_visibility',
  'put /api/v1/admin/model_providers/{provider_id}/model_availability',
  'put /api/v1/admin/model_providers/{provider_id}/api_key',
  'delete /api/v1/admin/model_providers/{provider_id}/api_key',
  'put /api/v1/admin/model_providers/{provider_id}/definition',
  'delete /api/v1/admin/model_providers/{provider_id}/definition',
  'put /api/v1/admin/model_providers/{provider_id}/model_definition',
  'delete /api/v1/admin/model_providers/{provider_id}/model_definition',
  'post /api/v1/admin/model_providers/{provider_id}/model_definition/reset',
  'post /api/v1/admin/model_providers/{provider_id}/model_discovery',
  'post /api/v1/admin/model_providers/{provider_id}/model_test',
  'get /api/v1/admin/account/cost_unit',
  'put /api/v1/admin/account/cost_unit',
  'get /api/v1/admin/usage',
  'get /agent_api/v1/models',
  'get /agent_api/v1/model_providers',
  'post /agent_api/v1/chat/completions',
  'post /agent_api/v1/embeddings',
  'post /agent_api/v1/inference_requests',
  'post /api/v1/sessions',
  'get /api/v1/sessions/current',
  'delete /api/v1/sessions/current',
  'get /api/v1/openapi.json',
];

describe('the OpenAPI document', () => {
  let h: Harness;
  // Parsed once: the document as served.
  let doc: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- untyped JSON document
  beforeAll(async () => {
    h = await openHarness('sqlite', { catalog: TEST_CATALOG });
    const r = await h.call('GET', '/api/v1/openapi.json');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    doc = r.body;
  });
  afterAll(async () => h.close());

  it('[ADM-API-1] [ADM-API-4] is OpenAPI 3.1 and describes every admin, member and session route', () => {
    expect(doc.openapi).toBe('3.1.0');
    const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method} ${path}`),
    );
    expect(operations.sort()).toEqual([...EXPECTED].sort());
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, typeof doc>>)) {
      for (const [method, op] of Object.entries(item)) {
        expect(op.responses['200'], `${method} ${path}`).toBeDefined();
        if (op.security.length === 0) continue; // public: sign-in and this document
        // The OpenAI-compatible routes answer OpenAI's error shape; the member model list either (its OpenAI variant);
        // every other route the platform envelope.
        const openAi = /^\/agent_api\/v1\/(chat\/completions|embeddings)$/.test(path);
        const schema = op.responses['401'].content['application/json'].schema;
        if (path === '/agent_api/v1/models')
          expect(schema.anyOf.map((s: { $ref: string }) => s.$ref)).toEqual([
            '#/components/schemas/Error',
            '#/components/schemas/OpenAiError',
          ]);
        else expect(schema.$ref).toBe(`#/components/schemas/${openAi ? 'OpenAiError' : 'Error'}`);
        if (path.includes('{provider_id}'))
          expect(op.parameters).toContainEqual(expect.objectContaining({ name: 'provider_id', in: 'path', required: true }));
        if (method !== 'get' && path.startsWith('/api/v1/admin')) expect(op.security).toEqual([{ bearer: [] }]);
      }
    }
    const models = doc.paths['/api/v1/admin/models'].get;
    expect(models.parameters.map((p: { name: string }) => p.name)).toEqual(['workload', 'available']);
    expect(models.responses['503']).toBeDefined();
    expect(doc.paths['/api/v1/admin/model_providers/{provider_id}/model_visibility'].put.responses['409']).toBeDefined();
  });

  it('[ADM-API-2] regression: declares 401 everywhere, 403 on admin routes, 413/415/400 on routes with a body, and stale_object rather than conflict on versioned commands', () => {
    const codesOf = (op: { responses: Record<string, { description?: string } | undefined> }, status: string): string =>
      op.responses[status]?.description ?? '';
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, typeof doc>>)) {
      for (const [method, op] of Object.entries(item)) {
        const where = `${method} ${path}`;
        // Sign-in is public but answers 401 for a wrong password; only this document never needs a credential.
        if (path !== '/api/v1/openapi.json') expect(codesOf(op, '401'), where).toMatch(/unauthorized/);
        if (path.startsWith('/api/v1/admin')) expect(codesOf(op, '403'), where).toMatch(/administrator_required/);
        if (op.requestBody) {
          expect(codesOf(op, '400'), where).toMatch(/parameter_invalid/);
          expect(codesOf(op, '413'), where).toMatch(/payload_too_large/);
          expect(codesOf(op, '415'), where).toMatch(/unsupported_media_type/);
        }
      }
    }
    const versioned = [
      'put lane',
      'put model_visibility',
      'put model_availability',
      'put api_key',
      'put definition',
      'delete definition',
      'put model_definition',
      'delete model_definition',
      'post model_definition/reset',
      'post model_discovery',
      'post model_test',
    ];
    for (const entry of versioned) {
      const [method = '', suffix = ''] = entry.split(' ');
      const op = doc.paths[`/api/v1/admin/model_providers/{provider_id}/${suffix}`][method];
      expect(codesOf(op, '409'), suffix).toMatch(/stale_object/);
      expect(codesOf(op, '409'), suffix).not.toMatch(/\bconflict\b/);
      // An unknown (also a too-long) provider id is 404 not_found, not a malformed parameter.
      expect(codesOf(op, '404'), suffix).toMatch(/not_found/);
      const param = op.parameters.find((p: { name: string }) => p.name === 'provider_id');
      expect(param.schema.maxLength).toBeUndefined();
    }
  });

  it('[ADM-API-1] [ADM-MDEF-5] uses the very schemas the routes validate with', async () => {
    const lane = doc.paths['/api/v1/admin/model_providers/{provider_id}/lane'].put.requestBody.content['application/json'].schema;
    const fromZod = z.toJSONSchema(z.strictObject({ command: laneCommandSchema }), { target: 'draft-2020-12', io: 'input' }) as Record<
      string,
      unknown
    >;
    delete fromZod.$schema;
    expect(lane).toEqual(fromZod);
    expect(lane.properties.command.properties.expected_lock_version.anyOf).toContainEqual({
      type: 'integer',
      minimum: 0,
      maximum: 2147483647,
      description: expect.any(String),
    });

    // The published schema and the server agree on what is valid.
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(lane);
    const cases: [unknown, boolean][] = [
      [{ command: { enabled: true } }, true],
      [{ command: { enabled: true, expected_lock_version: null } }, true],
      [{ command: { enabled: 'true' } }, false],
      [{ command: { enabled: true, expected_lock_version: 2147483648 } }, false],
      [{ command: { enabled: true, expected_lock_version: 1.5 } }, false],
      [{ command: { enabled: true, extra: 1 } }, false],
    ];
    for (const [body, valid] of cases) {
      expect(validate(body), JSON.stringify(body)).toBe(valid);
      const owner = await h.platform.ctx.identity.bootstrap({
        accountName: 'OpenAPI',
        email: `o-${Math.random().toString(36).slice(2)}@example.test`,
      });
      const r = await h.call('PUT', '/api/v1/admin/model_providers/alpha/lane', { token: owner.platform_token, body });
      expect(r.status === 200, JSON.stringify(body)).toBe(valid);
    }
    // The definition commands: the published schema is the grammar the server checks (a malformed definition is 422).
    const modelDefinition =
      doc.paths['/api/v1/admin/model_providers/{provider_id}/model_definition'].put.requestBody.content['application/json'].schema;
    const fromDefinitionZod = z.toJSONSchema(z.strictObject({ command: modelDefinitionCommandSchema }), {
      target: 'draft-2020-12',
      io: 'input',
    }) as Record<string, unknown>;
    delete fromDefinitionZod.$schema;
    expect(modelDefinition).toEqual(fromDefinitionZod);
    const validateDefinition = ajv.compile(modelDefinition);
    const definitionCases: [unknown, number][] = [
      [{ command: { model: 'alpha/x', definition: { inherit: 'chat', capabilities: { token_counter: null } } } }, 200],
      [{ command: { model: 'alpha/x', definition: { capabilities: { model_identity: ' x' } } } }, 422],
      [{ command: { model: 'alpha/x', definition: { capabilities: { tool_calls: 'yes' } } } }, 422],
      [{ command: { model: 'alpha/x', definition: { extra: 1 } } }, 422],
      [{ command: { model: 'alpha/x', definition: {}, expected_lock_version: -1 } }, 400],
    ];
    for (const [body, status] of definitionCases) {
      expect(validateDefinition(body), JSON.stringify(body)).toBe(status === 200);
      const owner = await h.platform.ctx.identity.bootstrap({
        accountName: 'OpenAPI',
        email: `o-${Math.random().toString(36).slice(2)}@example.test`,
      });
      const r = await h.call('PUT', '/api/v1/admin/model_providers/alpha/model_definition', { token: owner.platform_token, body });
      expect(r.status, JSON.stringify(body)).toBe(status);
    }
    const availability =
      doc.paths['/api/v1/admin/model_providers/{provider_id}/model_availability'].put.requestBody.content['application/json'].schema;
    expect(availability.properties.command.required).toEqual(expect.arrayContaining(['model', 'available', 'expected_lock_version']));
  });
});

describe('the OpenAPI document as a resource', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness('sqlite', { catalog: TEST_CATALOG });
  });
  afterAll(async () => h.close());

  it('[ADM-API-4] has a relative servers entry, so it is right behind any host, port or proxy', async () => {
    const r = await h.call('GET', '/api/v1/openapi.json', { headers: { host: 'api.example.test', 'x-forwarded-host': 'evil.example' } });
    expect(r.body.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    // Resolved against the document's own URL (OpenAPI 3.1 Server Object), "/" is the origin the paths hang from.
    expect(new URL(r.body.servers[0].url, `${h.url}/api/v1/openapi.json`).href).toBe(`${h.url}/`);
    expect(r.text).not.toContain('evil.example');
  });

  it('[ADM-API-4] is cacheable but revalidated: Cache-Control public, no-cache with an ETag, and 304 on If-None-Match', async () => {
    const first = await h.call('GET', '/api/v1/openapi.json');
    expect(first.headers.get('cache-control')).toBe('public, no-cache');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    const again = await h.call('GET', '/api/v1/openapi.json', { headers: { 'if-none-match': etag ?? '' } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect((await h.call('GET', '/api/v1/openapi.json', { headers: { 'if-none-match': `W/${etag ?? ''}, "other"` } })).status).toBe(304);
    const changed = await h.call('GET', '/api/v1/openapi.json', { headers: { 'if-none-match': '"another-release"' } });
    expect(changed.status).toBe(200);
    expect(changed.body.openapi).toBe('3.1.0');
    // The ETag is the document's: another server with the same routes gives the same one.
    const other = await openHarness('sqlite', { catalog: TEST_CATALOG });
    try {
      expect((await other.call('GET', '/api/v1/openapi.json')).headers.get('etag')).toBe(etag);
    } finally {
      await other.close();
    }
  });

  it('[ADM-API-1] [ADM-API-4] publishes the sign-in body schema the route validates with', async () => {
    const doc = (await h.call('GET', '/api/v1/openapi.json')).body;
    const signIn = doc.paths['/api/v1/sessions'].post;
    expect(signIn.security).toEqual([]);
    expect(Object.keys(signIn.responses).sort()).toEqual(['200', '400', '401', '413', '415', '429']);
    const validate = new Ajv2020({ strict: false }).compile(signIn.requestBody.content['application/json'].schema);
    const owner = h.platform.owner;
    const cases: [unknown, boolean][] = [
      [{ email: owner.email, password: owner.password }, true],
      [{ email: owner.email }, false],
      [{ email: 5, password: owner.password }, false],
      [{ email: '', password: owner.password }, false],
    ];
    for (const [body, valid] of cases) {
      expect(validate(body), JSON.stringify(body)).toBe(valid);
      const r = await h.call('POST', '/api/v1/sessions', { body });
      expect(r.status, JSON.stringify(body)).toBe(valid ? 200 : 400);
    }
    expect(doc.paths['/api/v1/sessions/current'].delete.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/api/v1/sessions/current'].get.security).toEqual([{ bearer: [] }, { sessionCookie: [] }]);
  });
});
