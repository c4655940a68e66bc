import { describe, expect, it } from 'vitest';
import { loadProtos } from './protos.ts';
import type { RpcMethod } from './rpc.ts';
import { bindRpcs } from './rpc-runtime.ts';

/** RpcMethods are checked against the protos at start, so the published HTTP mapping and the served one agree. */
describe('bindRpcs', () => {
  const protos = loadProtos();
  const getVuln: RpcMethod = {
    service: 'platform.v1.PlatformOSV',
    method: 'GetVuln',
    capability: 'CAP_PLATFORM_OSV_READ',
    http: { method: 'GET', path: '/platform/v1/osv/vulns/:id', errorStyle: 'status' },
    handler: async () => ({}),
  };

  it('accepts an RpcMethod matching its google.api.http annotation', () => {
    expect(bindRpcs(protos, [getVuln]).map((b) => [b.proto.requestType, b.proto.responseType])).toEqual([
      ['platform.v1.GetVulnRequest', 'platform.v1.Vulnerability'],
    ]);
  });

  it('refuses unknown methods, duplicates and HTTP mappings that differ from the proto', () => {
    expect(() => bindRpcs(protos, [{ ...getVuln, method: 'GetVulnById' }])).toThrow(/not declared in the protos/);
    expect(() => bindRpcs(protos, [getVuln, getVuln])).toThrow(/registered twice/);
    expect(() => bindRpcs(protos, [{ ...getVuln, http: { method: 'GET', path: '/v1/vulns/:id' } }])).toThrow(
      /differs from the proto annotation/,
    );
    expect(() => bindRpcs(protos, [{ ...getVuln, http: { method: 'POST', path: '/platform/v1/osv/vulns/:id' } }])).toThrow(/differs/);
    expect(() => bindRpcs(protos, [{ ...getVuln, method: 'Query', http: { method: 'POST', path: '/platform/v1/osv/query' } }])).toThrow(
      /differs/,
    );
  });
});
