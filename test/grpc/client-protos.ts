// The protos as an outside grpc-js client loads them (@grpc/proto-loader, protobufjs), for tests and benchmarks,
// and the test-only PlatformTesting service (testing.proto) compiled for the server, which has no generated code.
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { create, createFileRegistry, setExtension, type DescFile } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, MethodOptionsSchema } from '@bufbuild/protobuf/wkt';
import { fromBinary } from '@bufbuild/protobuf';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { http } from '../../src/grpc/generated/es/google/api/annotations_pb.ts';
import { HttpRuleSchema } from '../../src/grpc/generated/es/google/api/http_pb.ts';
import { PLATFORM_PROTO_FILES, PROTO_ROOT } from '../../src/grpc/proto-files.ts';
import { loadProtos, PLATFORM_FILES, type LoadedProtos } from '../../src/grpc/protos.ts';

const TESTING_DIR = dirname(fileURLToPath(import.meta.url));
const TESTING_SERVICE = 'platform.testing.v1.PlatformTesting';

/**
 * How proto-loader turns messages into objects for grpc-js clients: proto field names, 64-bit integers and enums as
 * strings, bytes as Buffers, no defaults for absent fields, and the virtual oneof field (the conventions of the
 * types `npm run proto:gen` writes with proto-loader-gen-types).
 */
const CLIENT_LOADER_OPTIONS = {
  keepCase: true,
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: false,
  oneofs: true,
} as const satisfies protoLoader.Options;

/** The server's protos plus what a client needs: proto-loader's definition and protobufjs types by name. */
export interface TestingProtos extends LoadedProtos {
  packageDefinition: protoLoader.PackageDefinition;
  codec: { type(typeName: string): protobuf.Type };
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

/**
 * PlatformTesting's compiled descriptor, from what proto-loader compiled of testing.proto (one synthetic file per
 * package, without custom options), with each method's `google.api.http` rule put back from proto-loader's options.
 */
function testingFile(definition: protoLoader.PackageDefinition): DescFile {
  const service = definition[TESTING_SERVICE] as protoLoader.ServiceDefinition;
  const someMessage = definition['platform.testing.v1.PingRequest'] as protoLoader.MessageTypeDefinition<object, object>;
  const bytes = someMessage.fileDescriptorProtos.find(
    (b: Buffer) => fromBinary(FileDescriptorProtoSchema, b).package === 'platform.testing.v1',
  );
  if (!bytes) throw new Error('testing.proto did not compile');
  const proto = fromBinary(FileDescriptorProtoSchema, bytes);
  for (const method of proto.service.flatMap((s) => s.method)) {
    const rule = (service[method.name]?.options as Record<string, Record<string, string>> | undefined)?.['(google.api.http)'];
    if (!rule) continue;
    const verb = (['get', 'post', 'put', 'delete', 'patch'] as const).find((v) => typeof rule[v] === 'string');
    if (!verb) continue;
    const options = create(MethodOptionsSchema);
    setExtension(options, http, create(HttpRuleSchema, { pattern: { case: verb, value: rule[verb] as string }, body: rule.body ?? '' }));
    method.options = options;
  }
  const registry = createFileRegistry(create(FileDescriptorProtoSchema, proto), () => undefined);
  const file = registry.getFile(proto.name);
  if (!file) throw new Error('testing.proto did not compile');
  return file;
}

let testingProtos: TestingProtos | undefined;

/** The platform protos plus the test-only `platform.testing.v1.PlatformTesting` service. */
export function loadTestingProtos(): TestingProtos {
  if (!testingProtos) {
    const files = ['testing.proto', ...PLATFORM_PROTO_FILES];
    const includeDirs = [TESTING_DIR, PROTO_ROOT];
    const packageDefinition = protoLoader.loadSync(files, { ...CLIENT_LOADER_OPTIONS, includeDirs });
    const root = new protobuf.Root();
    root.resolvePath = resolveIn(includeDirs);
    root.loadSync(files, { keepCase: true });
    root.resolveAll();
    testingProtos = {
      ...loadProtos([testingFile(packageDefinition), ...PLATFORM_FILES]),
      packageDefinition,
      codec: { type: (typeName) => root.lookupType(typeName) },
    };
  }
  return testingProtos;
}
