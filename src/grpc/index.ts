// What the RPC services (documents, osv) may use of the gRPC layer (eslint.boundaries.js): the RpcMethod contract,
// the pre-encoded element hook, the JSON write options, and the messages generated from the public protos.
export { JSON_WRITE } from './codec.ts';
export { EncodedMessage, type RpcMethod } from './rpc.ts';
export * from './generated/es/platform/v1/documents_pb.ts';
export * from './generated/es/platform/v1/osv_pb.ts';
