// PlatformOSV's three RPCs for the gRPC server and their HTTP mappings (proto/platform/v1/osv.proto). Errors on the
// HTTP side use OSV.dev's `{"code": <gRPC code>, "message"}` body (osv-facts.md §1).
import { toJson, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { JSON_WRITE } from '../grpc/index.ts';
import type { BatchQuery, GetVulnRequest, Query } from '../grpc/index.ts';
import { BatchQuerySchema, GetVulnRequestSchema, QuerySchema } from '../grpc/index.ts';
import type { RpcMethod } from '../grpc/index.ts';
import type { EncodedBatchVulnerabilityList, EncodedVulnerabilityList, OsvService, VulnJson } from './osv.service.ts';

const SERVICE = 'platform.v1.PlatformOSV';

/** A batch of 1000 queries with long purls and page tokens stays well below this. */
const BATCH_BODY_LIMIT = 4 * 1024 * 1024;

/**
 * The request as the service reads it: proto3 JSON with the proto field names, defaults left out and a set oneof
 * member kept even when empty (`{"version": ""}` is not `{}` to OSV.dev's validation).
 */
function serviceRequest<Desc extends DescMessage>(desc: Desc, request: MessageShape<Desc>): unknown {
  return toJson(desc, request, JSON_WRITE);
}

/** The RpcMethods of PlatformOSV over `service`; each needs CAP_PLATFORM_OSV_READ. */
export function createOsvRpcs(deps: { service: OsvService }): RpcMethod[] {
  const { service } = deps;
  const query: RpcMethod<Query, EncodedVulnerabilityList> = {
    service: SERVICE,
    method: 'Query',
    capability: 'CAP_PLATFORM_OSV_READ',
    http: { method: 'POST', path: '/platform/v1/osv/query', body: '*', errorStyle: 'status' },
    // Records come as the stored bytes this transport sends (EncodedMessage), or, for rows stored before answers
    // were, as objects from the service's cache that are never changed: each is converted once, not on every call.
    // The call itself is the options: its signal is only created if the service reads it.
    handler: (call) => service.queryEncoded(serviceRequest(QuerySchema, call.request), call.transport === 'grpc' ? 'wire' : 'json', call),
    sharedElements: 'vulns',
    recordData: 'elements',
  };
  const batch: RpcMethod<BatchQuery, EncodedBatchVulnerabilityList> = {
    service: SERVICE,
    method: 'QueryBatch',
    capability: 'CAP_PLATFORM_OSV_READ',
    http: { method: 'POST', path: '/platform/v1/osv/querybatch', body: '*', bodyLimit: BATCH_BODY_LIMIT, errorStyle: 'status' },
    // Each result comes written in the form this transport sends (osv.batch-answer.ts), spliced into the answer
    // instead of read back by fromJson and written again field by field.
    handler: (call) =>
      service.queryBatchEncoded(serviceRequest(BatchQuerySchema, call.request), call.transport === 'grpc' ? 'wire' : 'json', call),
    sharedElements: 'results',
  };
  const get: RpcMethod<GetVulnRequest, VulnJson> = {
    service: SERVICE,
    method: 'GetVuln',
    capability: 'CAP_PLATFORM_OSV_READ',
    http: { method: 'GET', path: '/platform/v1/osv/vulns/:id', errorStyle: 'status' },
    handler: (call) => service.getVuln(serviceRequest(GetVulnRequestSchema, call.request), call),
    recordData: 'response',
  };
  return [query, batch, get] as RpcMethod[];
}
