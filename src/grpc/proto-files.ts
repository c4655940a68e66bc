import { fileURLToPath } from 'node:url';
import type { Options } from '@grpc/proto-loader';

/** The repository root and the folder holding the public protos (`proto/`, the include root of every import). */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const PROTO_ROOT = fileURLToPath(new URL('../../proto/', import.meta.url));

/** The public protos the platform serves, relative to `PROTO_ROOT` (ARCHITECTURE.md, "gRPC"). */
export const PLATFORM_PROTO_FILES: readonly string[] = ['platform/v1/documents.proto', 'platform/v1/osv.proto'];

/**
 * How proto-loader turns messages into objects on the gRPC side: proto field names (snake_case), 64-bit integers
 * and enums as strings, bytes as Buffers, no defaults for absent fields, and the virtual oneof field. The JSON codec
 * (`proto-json.ts`) converts these objects to and from the proto3 JSON shape the RPC handlers see.
 */
export const LOADER_OPTIONS = {
  keepCase: true,
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: false,
  oneofs: true,
} as const satisfies Options;
