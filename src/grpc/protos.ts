import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { LOADER_OPTIONS, PLATFORM_PROTO_FILES, PROTO_ROOT } from './proto-files.ts';
import { createProtoJsonCodec, type ProtoJsonCodec } from './proto-json.ts';

/** The HTTP mapping an RPC declares with `option (google.api.http)`. */
export interface HttpRuleAnnotation {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  /** The path template as written, for example `/platform/v1/documents/{id}`. */
  template: string;
  body: string;
}

/** One unary RPC of a loaded service. */
export interface LoadedMethod {
  service: string;
  method: string;
  /** `/package.Service/Method`. */
  path: string;
  requestType: string;
  responseType: string;
  http: HttpRuleAnnotation | undefined;
  definition: protoLoader.MethodDefinition<object, object>;
}

/** The protos as both libraries see them: proto-loader's definition for gRPC and reflection, protobufjs for JSON. */
export interface LoadedProtos {
  packageDefinition: protoLoader.PackageDefinition;
  codec: ProtoJsonCodec;
  /** Service full name → its methods by name. */
  services: Map<string, Map<string, LoadedMethod>>;
}

function resolveIn(includeDirs: readonly string[]) {
  return (_origin: string, target: string): string => {
    if (isAbsolute(target)) return target;
    for (const dir of includeDirs) {
      const candidate = join(dir, target);
      if (existsSync(candidate)) return candidate;
    }
    // Well-known types (google/protobuf/*.proto) are bundled with protobufjs and found by name.
    return target;
  };
}

function httpRule(options: Record<string, unknown> | undefined): HttpRuleAnnotation | undefined {
  const rule = options?.['(google.api.http)'] as Record<string, string> | undefined;
  if (!rule) return undefined;
  for (const verb of ['get', 'post', 'put', 'delete', 'patch'] as const) {
    const template = rule[verb];
    if (typeof template === 'string') return { method: verb.toUpperCase() as HttpRuleAnnotation['method'], template, body: rule.body ?? '' };
  }
  return undefined;
}

/**
 * Loads proto files (relative to the include dirs; by default the platform's public protos) once for gRPC,
 * reflection and the JSON codec.
 */
export function loadProtos(files: readonly string[] = PLATFORM_PROTO_FILES, includeDirs: readonly string[] = [PROTO_ROOT]): LoadedProtos {
  const packageDefinition = protoLoader.loadSync([...files], { ...LOADER_OPTIONS, includeDirs: [...includeDirs] });
  const root = new protobuf.Root();
  root.resolvePath = resolveIn(includeDirs);
  root.loadSync([...files], { keepCase: true });
  root.resolveAll();
  const codec = createProtoJsonCodec(root);

  const services = new Map<string, Map<string, LoadedMethod>>();
  for (const [name, entry] of Object.entries(packageDefinition)) {
    if ('format' in entry) continue; // message and enum definitions
    const service = root.lookupService(name);
    const methods = new Map<string, LoadedMethod>();
    for (const [methodName, definition] of Object.entries(entry)) {
      const reflected = service.methods[methodName];
      if (!reflected?.resolvedRequestType || !reflected.resolvedResponseType) continue;
      methods.set(methodName, {
        service: name,
        method: methodName,
        path: definition.path,
        requestType: reflected.resolvedRequestType.fullName.replace(/^\./, ''),
        responseType: reflected.resolvedResponseType.fullName.replace(/^\./, ''),
        http: httpRule(definition.options),
        definition: definition,
      });
    }
    services.set(name, methods);
  }
  return { packageDefinition, codec, services };
}
