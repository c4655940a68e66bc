// Original file: proto/platform/v1/osv.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { BatchQuery as _platform_v1_BatchQuery, BatchQuery__Output as _platform_v1_BatchQuery__Output } from '../../platform/v1/BatchQuery.ts';
import type { BatchVulnerabilityList as _platform_v1_BatchVulnerabilityList, BatchVulnerabilityList__Output as _platform_v1_BatchVulnerabilityList__Output } from '../../platform/v1/BatchVulnerabilityList.ts';
import type { GetVulnRequest as _platform_v1_GetVulnRequest, GetVulnRequest__Output as _platform_v1_GetVulnRequest__Output } from '../../platform/v1/GetVulnRequest.ts';
import type { Query as _platform_v1_Query, Query__Output as _platform_v1_Query__Output } from '../../platform/v1/Query.ts';
import type { Vulnerability as _platform_v1_Vulnerability, Vulnerability__Output as _platform_v1_Vulnerability__Output } from '../../platform/v1/Vulnerability.ts';
import type { VulnerabilityList as _platform_v1_VulnerabilityList, VulnerabilityList__Output as _platform_v1_VulnerabilityList__Output } from '../../platform/v1/VulnerabilityList.ts';

/**
 * OSV-format vulnerability queries.
 */
export interface PlatformOSVClient extends grpc.Client {
  /**
   * One OSV record by its exact id (withdrawn records included). Unknown ids are NOT_FOUND.
   */
  GetVuln(argument: _platform_v1_GetVulnRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_Vulnerability__Output>): grpc.ClientUnaryCall;
  GetVuln(argument: _platform_v1_GetVulnRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_platform_v1_Vulnerability__Output>): grpc.ClientUnaryCall;
  GetVuln(argument: _platform_v1_GetVulnRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_Vulnerability__Output>): grpc.ClientUnaryCall;
  GetVuln(argument: _platform_v1_GetVulnRequest, callback: grpc.requestCallback<_platform_v1_Vulnerability__Output>): grpc.ClientUnaryCall;
  /**
   * One OSV record by its exact id (withdrawn records included). Unknown ids are NOT_FOUND.
   */
  getVuln(argument: _platform_v1_GetVulnRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_Vulnerability__Output>): grpc.ClientUnaryCall;
  getVuln(argument: _platform_v1_GetVulnRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_platform_v1_Vulnerability__Output>): grpc.ClientUnaryCall;
  getVuln(argument: _platform_v1_GetVulnRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_Vulnerability__Output>): grpc.ClientUnaryCall;
  getVuln(argument: _platform_v1_GetVulnRequest, callback: grpc.requestCallback<_platform_v1_Vulnerability__Output>): grpc.ClientUnaryCall;
  
  /**
   * Vulnerabilities affecting one package at a version (or one commit), as full OSV records in ascending id order.
   * The HTTP body is the Query itself. Large results are paged with `next_page_token`. (The request type is named
   * in full: inside this service the bare name `Query` is this method, not the message.)
   */
  Query(argument: _platform_v1_Query, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_VulnerabilityList__Output>): grpc.ClientUnaryCall;
  Query(argument: _platform_v1_Query, metadata: grpc.Metadata, callback: grpc.requestCallback<_platform_v1_VulnerabilityList__Output>): grpc.ClientUnaryCall;
  Query(argument: _platform_v1_Query, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_VulnerabilityList__Output>): grpc.ClientUnaryCall;
  Query(argument: _platform_v1_Query, callback: grpc.requestCallback<_platform_v1_VulnerabilityList__Output>): grpc.ClientUnaryCall;
  /**
   * Vulnerabilities affecting one package at a version (or one commit), as full OSV records in ascending id order.
   * The HTTP body is the Query itself. Large results are paged with `next_page_token`. (The request type is named
   * in full: inside this service the bare name `Query` is this method, not the message.)
   */
  query(argument: _platform_v1_Query, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_VulnerabilityList__Output>): grpc.ClientUnaryCall;
  query(argument: _platform_v1_Query, metadata: grpc.Metadata, callback: grpc.requestCallback<_platform_v1_VulnerabilityList__Output>): grpc.ClientUnaryCall;
  query(argument: _platform_v1_Query, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_VulnerabilityList__Output>): grpc.ClientUnaryCall;
  query(argument: _platform_v1_Query, callback: grpc.requestCallback<_platform_v1_VulnerabilityList__Output>): grpc.ClientUnaryCall;
  
  /**
   * Up to 1000 queries at once. `results[i]` answers `queries[i]`; each vulnerability carries only `id` and
   * `modified`. Items with more results carry their own `next_page_token`.
   */
  QueryBatch(argument: _platform_v1_BatchQuery, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_BatchVulnerabilityList__Output>): grpc.ClientUnaryCall;
  QueryBatch(argument: _platform_v1_BatchQuery, metadata: grpc.Metadata, callback: grpc.requestCallback<_platform_v1_BatchVulnerabilityList__Output>): grpc.ClientUnaryCall;
  QueryBatch(argument: _platform_v1_BatchQuery, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_BatchVulnerabilityList__Output>): grpc.ClientUnaryCall;
  QueryBatch(argument: _platform_v1_BatchQuery, callback: grpc.requestCallback<_platform_v1_BatchVulnerabilityList__Output>): grpc.ClientUnaryCall;
  /**
   * Up to 1000 queries at once. `results[i]` answers `queries[i]`; each vulnerability carries only `id` and
   * `modified`. Items with more results carry their own `next_page_token`.
   */
  queryBatch(argument: _platform_v1_BatchQuery, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_BatchVulnerabilityList__Output>): grpc.ClientUnaryCall;
  queryBatch(argument: _platform_v1_BatchQuery, metadata: grpc.Metadata, callback: grpc.requestCallback<_platform_v1_BatchVulnerabilityList__Output>): grpc.ClientUnaryCall;
  queryBatch(argument: _platform_v1_BatchQuery, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_BatchVulnerabilityList__Output>): grpc.ClientUnaryCall;
  queryBatch(argument: _platform_v1_BatchQuery, callback: grpc.requestCallback<_platform_v1_BatchVulnerabilityList__Output>): grpc.ClientUnaryCall;
  
}

/**
 * OSV-format vulnerability queries.
 */
export interface PlatformOSVHandlers extends grpc.UntypedServiceImplementation {
  /**
   * One OSV record by its exact id (withdrawn records included). Unknown ids are NOT_FOUND.
   */
  GetVuln: grpc.handleUnaryCall<_platform_v1_GetVulnRequest__Output, _platform_v1_Vulnerability>;
  
  /**
   * Vulnerabilities affecting one package at a version (or one commit), as full OSV records in ascending id order.
   * The HTTP body is the Query itself. Large results are paged with `next_page_token`. (The request type is named
   * in full: inside this service the bare name `Query` is this method, not the message.)
   */
  Query: grpc.handleUnaryCall<_platform_v1_Query__Output, _platform_v1_VulnerabilityList>;
  
  /**
   * Up to 1000 queries at once. `results[i]` answers `queries[i]`; each vulnerability carries only `id` and
   * `modified`. Items with more results carry their own `next_page_token`.
   */
  QueryBatch: grpc.handleUnaryCall<_platform_v1_BatchQuery__Output, _platform_v1_BatchVulnerabilityList>;
  
}

export interface PlatformOSVDefinition extends grpc.ServiceDefinition {
  GetVuln: MethodDefinition<_platform_v1_GetVulnRequest, _platform_v1_Vulnerability, _platform_v1_GetVulnRequest__Output, _platform_v1_Vulnerability__Output>
  Query: MethodDefinition<_platform_v1_Query, _platform_v1_VulnerabilityList, _platform_v1_Query__Output, _platform_v1_VulnerabilityList__Output>
  QueryBatch: MethodDefinition<_platform_v1_BatchQuery, _platform_v1_BatchVulnerabilityList, _platform_v1_BatchQuery__Output, _platform_v1_BatchVulnerabilityList__Output>
}
