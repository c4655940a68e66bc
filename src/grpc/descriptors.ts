import { createRegistry, type DescFile, type Registry } from '@bufbuild/protobuf';
import { file_grpc_health_v1_health } from './generated/es/grpc/health/v1/health_pb.ts';
import { file_platform_v1_documents } from './generated/es/platform/v1/documents_pb.ts';
import { file_platform_v1_osv } from './generated/es/platform/v1/osv_pb.ts';

/**
 * The compiled descriptors of the protos the server serves (protoc-gen-es embeds each file's FileDescriptorProto
 * as buf compiled it, without source comments): the public platform protos and the standard health service.
 * Their imports (google/api/*, the well-known types) come with them through `DescFile.dependencies`.
 */
export const SERVED_FILES: readonly DescFile[] = [file_platform_v1_documents, file_platform_v1_osv, file_grpc_health_v1_health];

/** `files` and everything they import, each once, every file after the files it imports. */
export function withDependencies(files: readonly DescFile[]): DescFile[] {
  const out: DescFile[] = [];
  const seen = new Set<DescFile>();
  const visit = (file: DescFile): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const dependency of file.dependencies) visit(dependency);
    out.push(file);
  };
  for (const file of files) visit(file);
  return out;
}

/** A set of compiled files and every message, enum, service and extension they declare. */
export interface Schema {
  files: readonly DescFile[];
  registry: Registry;
}

let served: Schema | undefined;

/** The served protos and their imports. */
export function servedSchema(): Schema {
  if (!served) {
    const files = withDependencies(SERVED_FILES);
    served = { files, registry: createRegistry(...files) };
  }
  return served;
}
