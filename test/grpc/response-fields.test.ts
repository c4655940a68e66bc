// A response field the message does not declare is a failure, not a silent drop (issue 12, item 3): a handler
// that misspells a field fails the call with INTERNAL on both transports and the log names the field, while OSV
// records (RpcMethod.recordData) still drop the fields of imported data the proto does not carry.
import { create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetVulnRequestSchema } from '../../src/grpc/generated/es/platform/v1/osv_pb.ts';
import { loadProtos } from '../../src/grpc/protos.ts';
import { bindRpcs, invokeRpc, type RpcRuntimeDeps } from '../../src/grpc/rpc-runtime.ts';
import type { RpcMethod } from '../../src/grpc/rpc.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { bearer, grpcError, httpJson, startGrpcTestPlatform, testingClient, tokenWith, type GrpcTestPlatform } from './grpc-support.ts';

describe('response fields the message does not declare', () => {
  let p: GrpcTestPlatform;
  let token: string;
  let testing: grpc.Client;

  beforeAll(async () => {
    p = await startGrpcTestPlatform('sqlite');
    token = await tokenWith(p.platform, ['CAP_PLATFORM_DOCUMENTS_LIST']);
    testing = testingClient(p);
  });

  afterAll(async () => {
    testing?.close();
    await p?.close();
  });

  it('fail the call with INTERNAL on both transports, the field named in the log only', async () => {
    const ping = (text: string) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        (
          testing as unknown as {
            Ping(r: object, m: grpc.Metadata, cb: (e: grpc.ServiceError | null, v?: Record<string, unknown>) => void): void;
          }
        ).Ping({ text }, bearer(token), (e, v) => (e ? reject(e) : resolve(v ?? {})));
      });
    expect(await ping('fine')).toEqual({ text: 'fine' });
    const error = await grpcError(ping('misspelled-response'));
    expect(error.code).toBe(grpc.status.INTERNAL);
    expect(error.details).toBe('internal server error');
    const http = await httpJson(`${p.restUrl}/platform/testing/v1/ping`, { method: 'POST', token, body: { text: 'misspelled-response' } });
    expect(http.status).toBe(500);
    expect(JSON.stringify(http.body)).not.toContain('txet');
    expect(p.platform.logs.text()).toContain('txet');
  });

  it('are dropped only from the records an RPC declares as imported data (recordData)', async () => {
    const protos = loadProtos();
    const deps: RpcRuntimeDeps = {
      auth: {
        authenticate: async () => ({
          ok: true,
          principal: { plane: 'platform', via: 'bearer', capabilities: new Set(['CAP_PLATFORM_OSV_READ']) },
        }),
      } as never,
      maxDeadlineMs: 10_000,
    };
    const record = {
      id: 'OSV-1',
      modified: '2024-01-01T00:00:00Z',
      affected: [{ package: { ecosystem: 'npm', name: 'a' }, newer_field: 1 }],
    };
    const getVuln = (recordData?: 'response'): RpcMethod => ({
      service: 'platform.v1.PlatformOSV',
      method: 'GetVuln',
      capability: 'CAP_PLATFORM_OSV_READ',
      http: { method: 'GET', path: '/platform/v1/osv/vulns/:id', errorStyle: 'status' },
      handler: async () => record,
      ...(recordData ? { recordData } : {}),
    });
    const call = { authorization: 'Bearer x', decode: () => create(GetVulnRequestSchema), transport: 'http' as const, log: silentLogger() };
    const [asRecords] = bindRpcs(protos, [getVuln('response')]);
    const [strict] = bindRpcs(protos, [getVuln()]);
    if (!asRecords || !strict) throw new Error('not bound');
    expect(await invokeRpc(deps, asRecords, call)).toEqual({
      id: 'OSV-1',
      modified: '2024-01-01T00:00:00Z',
      affected: [{ package: { ecosystem: 'npm', name: 'a' } }],
    });
    await expect(invokeRpc(deps, strict, call)).rejects.toMatchObject({ code: 'internal' });
  });
});
