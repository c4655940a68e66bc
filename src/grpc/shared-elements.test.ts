import { create, fromBinary, fromJson, toBinary, toJson, toJsonString, type JsonValue } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import type { AuthResult, Principal } from '../core/identity/identity.model.ts';
import { silentLogger } from '../core/logger.ts';
import { JSON_WRITE } from './codec.ts';
import { QuerySchema, VulnerabilityListSchema, VulnerabilitySchema } from './generated/es/platform/v1/osv_pb.ts';
import { loadProtos } from './protos.ts';
import { EncodedMessage, type RpcMethod } from './rpc.ts';
import {
  bindRpcs,
  grpcResponseBytes,
  httpResponseBody,
  invokeRpc,
  invokeRpcResponse,
  type RpcInvocation,
  type RpcRuntimeDeps,
} from './rpc-runtime.ts';

/**
 * `sharedElements`: a response assembled from per-object cached pieces must be exactly what the field-by-field
 * conversion gives (the same JSON text, the same decoded message), and each element is converted once.
 */
describe('sharedElements', () => {
  const protos = loadProtos();
  const principal = {
    accountId: 'a',
    humanId: 'h',
    email: 'e@example.test',
    role: 'admin',
    plane: 'platform',
    capabilities: new Set(['CAP_PLATFORM_OSV_READ']),
    credentialId: 'c',
    via: 'bearer',
  } as unknown as Principal;
  const authenticated: AuthResult = { ok: true, principal };
  const deps: RpcRuntimeDeps = { auth: { authenticate: async () => authenticated }, maxDeadlineMs: 5000 };

  // Not yet canonical: an empty field, a field not in the proto, a Timestamp with a redundant fraction, a Struct.
  const first = {
    id: 'GHSA-aaaa-bbbb-cccc',
    modified: '2022-04-13T03:04:39.780000Z',
    summary: '',
    not_in_proto: 1,
    aliases: ['CVE-2021-0001'],
    affected: [
      {
        package: { name: 'jinja2', ecosystem: 'PyPI' },
        ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '3.1.4' }] }],
        ecosystem_specific: { severity: 'HIGH', list: [1, null] },
      },
    ],
    references: [{ type: 'ADVISORY', url: 'https://example.test/a' }],
  };
  const second = {
    id: 'PYSEC-2021-1',
    modified: '2021-01-01T00:00:00Z',
    details: 'Details ü',
    credits: [{ name: 'Someone', type: 'FINDER' }],
  };
  let response: Record<string, unknown> = {};

  const query: RpcMethod = {
    service: 'platform.v1.PlatformOSV',
    method: 'Query',
    capability: 'CAP_PLATFORM_OSV_READ',
    http: { method: 'POST', path: '/platform/v1/osv/query', body: '*', errorStyle: 'status' },
    handler: async () => response,
    // The records may carry fields the proto lacks (`not_in_proto`), which both conversions drop alike.
    recordData: 'response',
  };
  const [plain] = bindRpcs(protos, [query]);
  const [shared] = bindRpcs(protos, [{ ...query, sharedElements: 'vulns', recordData: 'elements' }]);
  const call = (transport: 'grpc' | 'http'): RpcInvocation => ({
    authorization: 'Bearer x',
    authenticated,
    decode: () => create(QuerySchema),
    transport,
    log: silentLogger(),
  });
  const decode = (bytes: Uint8Array) => toJson(VulnerabilityListSchema, fromBinary(VulnerabilityListSchema, bytes), JSON_WRITE);

  it('refuses a field that is not a repeated message field', () => {
    expect(() => bindRpcs(protos, [{ ...query, sharedElements: 'next_page_token' }])).toThrow(/not a repeated message field/);
    expect(() => bindRpcs(protos, [{ ...query, sharedElements: 'nope' }])).toThrow(/not a repeated message field/);
  });

  for (const body of [{ vulns: [first, second, first], next_page_token: 'UDpHSFNB' }, { vulns: [second] }, { vulns: [] }, {}]) {
    it(`gives the same JSON and protobuf as the field-by-field conversion (${JSON.stringify(Object.keys(body))}, ${body.vulns?.length ?? 0} records)`, async () => {
      response = body;
      const expected = await invokeRpc(deps, plain!, call('http'));
      expect(httpResponseBody(shared!, await invokeRpcResponse(deps, shared!, call('http')))).toBe(JSON.stringify(expected));
      // Twice: the second answer comes from the cached text.
      expect(httpResponseBody(shared!, await invokeRpcResponse(deps, shared!, call('http')))).toBe(JSON.stringify(expected));

      const expectedBytes = grpcResponseBytes(plain!, await invokeRpcResponse(deps, plain!, call('grpc')));
      for (let i = 0; i < 2; i++) {
        const bytes = grpcResponseBytes(shared!, await invokeRpcResponse(deps, shared!, call('grpc')));
        expect(decode(bytes)).toEqual(decode(expectedBytes));
        expect(bytes.byteLength).toBe(expectedBytes.byteLength);
      }
      expect(await invokeRpc(deps, shared!, call('grpc'))).toEqual(await invokeRpc(deps, plain!, call('grpc')));
    });
  }

  it('converts each element object once, and a new object (a modified record) afresh', async () => {
    response = { vulns: [first] };
    const a = await invokeRpcResponse(deps, shared!, call('http'));
    const b = await invokeRpcResponse(deps, shared!, call('http'));
    expect(a.split?.elements[0]).toBeDefined();
    expect(b.split?.elements[0]).toBe(a.split?.elements[0]);
    response = { vulns: [{ ...first, summary: 'changed' }] };
    const c = await invokeRpcResponse(deps, shared!, call('http'));
    expect(c.split?.elements[0]).not.toBe(a.split?.elements[0]);
    expect(JSON.parse(httpResponseBody(shared!, c).toString())).toMatchObject({ vulns: [{ summary: 'changed' }] });
  });

  it('splices pre-encoded elements (JSON text, UTF-8 bytes or protobuf bytes) into the same answers, deriving a missing form', async () => {
    response = { vulns: [first, second], next_page_token: 'UDpHSFNB' };
    const expectedJson = JSON.stringify(await invokeRpc(deps, plain!, call('http')));
    const expectedBytes = grpcResponseBytes(plain!, await invokeRpcResponse(deps, plain!, call('grpc')));
    const expectedCanonical = await invokeRpc(deps, plain!, call('grpc'));
    const messages = [first, second].map((v) => fromJson(VulnerabilitySchema, v as JsonValue, { ignoreUnknownFields: true }));
    const texts = messages.map((m) => toJsonString(VulnerabilitySchema, m, JSON_WRITE));
    const wires = messages.map((m) => toBinary(VulnerabilitySchema, m));
    const forms = {
      text: texts.map((t) => new EncodedMessage(t, undefined)),
      utf8: texts.map((t) => new EncodedMessage(Buffer.from(t), undefined)),
      wire: wires.map((w) => new EncodedMessage(undefined, w)),
    };
    for (const [name, vulns] of Object.entries(forms)) {
      response = { vulns, next_page_token: 'UDpHSFNB' };
      expect(httpResponseBody(shared!, await invokeRpcResponse(deps, shared!, call('http'))).toString(), name).toBe(expectedJson);
      const bytes = grpcResponseBytes(shared!, await invokeRpcResponse(deps, shared!, call('grpc')));
      expect(decode(bytes), name).toEqual(decode(expectedBytes));
      expect(await invokeRpc(deps, shared!, call('grpc')), name).toEqual(expectedCanonical);
    }
    expect(() => new EncodedMessage(undefined, undefined)).toThrow(/needs its JSON text or its protobuf bytes/);
  });
});
