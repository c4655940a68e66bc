import { fileURLToPath } from 'node:url';

/** The repository root and the folder holding the public protos (`proto/`, the include root of every import). */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const PROTO_ROOT = fileURLToPath(new URL('../../proto/', import.meta.url));

/** The public protos the platform serves, relative to `PROTO_ROOT` (ARCHITECTURE.md, "gRPC"). */
export const PLATFORM_PROTO_FILES: readonly string[] = ['platform/v1/documents.proto', 'platform/v1/osv.proto'];
