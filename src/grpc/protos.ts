import { createRegistry, getOption, type DescFile, type DescMessage, type DescMethod, type Registry } from '@bufbuild/protobuf';
import { http } from './generated/es/google/api/annotations_pb.ts';
import { file_platform_v1_documents } from './generated/es/platform/v1/documents_pb.ts';
import { file_platform_v1_osv } from './generated/es/platform/v1/osv_pb.ts';

/** The HTTP mapping an RPC declares with `option (google.api.http)`. */
export interface HttpRuleAnnotation {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  /** The path template as written, for example `/platform/v1/documents/{id}`. */
  template: string;
  body: string;
}

/** One RPC of a loaded service, with the generated schemas of its messages. */
export interface LoadedMethod {
  service: string;
  method: string;
  /** `/package.Service/Method`. */
  path: string;
  requestType: string;
  responseType: string;
  input: DescMessage;
  output: DescMessage;
  http: HttpRuleAnnotation | undefined;
  desc: DescMethod;
}

/** The services the RPC layer serves, from compiled file descriptors (protoc-gen-es's, or a test's own). */
export interface LoadedProtos {
  /** The files whose services are served. */
  files: readonly DescFile[];
  /** Every message, enum and service of `files` and their imports. */
  registry: Registry;
  /** Service full name → its methods by name. */
  services: Map<string, Map<string, LoadedMethod>>;
}

/** The platform's public protos (proto/platform/v1), as protoc-gen-es compiled them into src/grpc/generated/es. */
export const PLATFORM_FILES: readonly DescFile[] = [file_platform_v1_documents, file_platform_v1_osv];

const VERBS = ['get', 'post', 'put', 'delete', 'patch'] as const;

function httpRule(method: DescMethod): HttpRuleAnnotation | undefined {
  const rule = getOption(method, http);
  const pattern = rule.pattern;
  if (pattern.case === undefined || !(VERBS as readonly string[]).includes(pattern.case)) return undefined;
  return { method: pattern.case.toUpperCase() as HttpRuleAnnotation['method'], template: pattern.value, body: rule.body };
}

/** The services of `files` (by default the platform's public protos) with their methods and HTTP rules. */
export function loadProtos(files: readonly DescFile[] = PLATFORM_FILES): LoadedProtos {
  const services = new Map<string, Map<string, LoadedMethod>>();
  for (const file of files) {
    for (const service of file.services) {
      const methods = new Map<string, LoadedMethod>();
      for (const desc of service.methods) {
        methods.set(desc.name, {
          service: service.typeName,
          method: desc.name,
          path: `/${service.typeName}/${desc.name}`,
          requestType: desc.input.typeName,
          responseType: desc.output.typeName,
          input: desc.input,
          output: desc.output,
          http: httpRule(desc),
          desc,
        });
      }
      services.set(service.typeName, methods);
    }
  }
  return { files, registry: createRegistry(...files), services };
}
