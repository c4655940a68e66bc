// gRPC server reflection (grpc.reflection.v1 and v1alpha, the same messages under two package names), answered
// from the compiled file descriptors (descriptors.ts): each file under its real name with its real dependency list,
// exactly as buf compiled it, so reflection clients (grpcurl, `buf curl`, IDEs, dynamic clients) rebuild the same
// schema the server uses.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { toBinary, type DescFile, type Registry } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { withDependencies, type Schema } from './descriptors.ts';

/** A reflection request as proto-loader decodes it (`keepCase`, `oneofs`). */
interface ReflectionRequest {
  host?: string;
  message_request?:
    'file_by_filename' | 'file_containing_symbol' | 'file_containing_extension' | 'all_extension_numbers_of_type' | 'list_services';
  file_by_filename?: string;
  file_containing_symbol?: string;
  file_containing_extension?: { containing_type?: string; extension_number?: number };
  all_extension_numbers_of_type?: string;
  list_services?: string;
}

interface ReflectionResponse {
  valid_host: string;
  original_request: ReflectionRequest;
  file_descriptor_response?: { file_descriptor_proto: Uint8Array[] };
  all_extension_numbers_response?: { base_type_name: string; extension_number: number[] };
  list_services_response?: { service: { name: string }[] };
  error_response?: { error_code: number; error_message: string };
}

class ReflectionError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

/** The reflection service definitions (v1, v1alpha) from the protos that ship with @grpc/reflection. */
function reflectionDefinitions(): protoLoader.ServiceDefinition[] {
  const require = createRequire(import.meta.url);
  const protoDir = join(dirname(require.resolve('@grpc/reflection/package.json')), 'build', 'proto');
  const options: protoLoader.Options = {
    keepCase: true,
    longs: Number,
    enums: Number,
    defaults: false,
    oneofs: true,
    includeDirs: [protoDir],
  };
  const out: protoLoader.ServiceDefinition[] = [];
  for (const version of ['v1', 'v1alpha']) {
    const definition = protoLoader.loadSync(`grpc/reflection/${version}/reflection.proto`, options);
    out.push(definition[`grpc.reflection.${version}.ServerReflection`] as protoLoader.ServiceDefinition);
  }
  return out;
}

/**
 * Answers reflection requests over `schema`; `services` are the services `list_services` names (those the
 * server implements).
 */
export class ReflectionIndex {
  private readonly files = new Map<string, DescFile>();
  private readonly encoded = new Map<DescFile, Uint8Array>();
  private readonly registry: Registry;

  constructor(
    schema: Schema,
    private readonly services: readonly string[],
  ) {
    this.registry = schema.registry;
    for (const file of schema.files) this.files.set(file.proto.name, file);
  }

  /** The file and every file it imports, transitively (a client resolves the whole schema from one answer). */
  private withImports(file: DescFile): { file_descriptor_proto: Uint8Array[] } {
    // The requested file first (grpcurl and buf curl read it as the answer), then its imports.
    const ordered = [file, ...withDependencies([file]).filter((f) => f !== file)];
    return {
      file_descriptor_proto: ordered.map((f) => {
        let bytes = this.encoded.get(f);
        if (bytes === undefined) {
          bytes = toBinary(FileDescriptorProtoSchema, f.proto);
          this.encoded.set(f, bytes);
        }
        return bytes;
      }),
    };
  }

  /** The file declaring a fully qualified name: a message, enum, service or extension, or a member of one. */
  private fileOfSymbol(symbol: string): DescFile | undefined {
    const name = symbol.startsWith('.') ? symbol.slice(1) : symbol;
    const direct = this.registry.get(name);
    if (direct) return direct.file;
    // A method, field, oneof or enum value: its parent is a service, a message or an enum's scope.
    const parent = name.slice(0, Math.max(0, name.lastIndexOf('.')));
    const member = name.slice(parent.length + 1);
    const service = this.registry.getService(parent);
    if (service?.methods.some((m) => m.name === member)) return service.file;
    const message = this.registry.getMessage(parent);
    // Map entry messages (`FieldsEntry`) are nested types of the descriptor without a registry entry of their own.
    if (
      message &&
      (message.fields.some((f) => f.name === member) ||
        message.oneofs.some((o) => o.name === member) ||
        message.proto.nestedType.some((n) => n.name === member))
    ) {
      return message.file;
    }
    for (const type of this.registry) {
      if (type.kind !== 'enum' || !type.values.some((v) => v.name === member)) continue;
      // Enum values are scoped beside their enum (protobuf's C++ scoping); some clients name them inside it.
      const scope = type.typeName.slice(0, Math.max(0, type.typeName.lastIndexOf('.')));
      if (parent === scope || parent === type.typeName) return type.file;
    }
    return undefined;
  }

  answer(request: ReflectionRequest): ReflectionResponse {
    const response: ReflectionResponse = { valid_host: request.host ?? '', original_request: request };
    try {
      switch (request.message_request) {
        case 'list_services':
          response.list_services_response = { service: this.services.map((name) => ({ name })) };
          break;
        case 'file_by_filename': {
          const file = this.files.get(request.file_by_filename ?? '');
          if (!file) throw new ReflectionError(grpc.status.NOT_FOUND, 'file not found');
          response.file_descriptor_response = this.withImports(file);
          break;
        }
        case 'file_containing_symbol': {
          const file = this.fileOfSymbol(request.file_containing_symbol ?? '');
          if (!file) throw new ReflectionError(grpc.status.NOT_FOUND, 'symbol not found');
          response.file_descriptor_response = this.withImports(file);
          break;
        }
        case 'file_containing_extension': {
          const message = this.registry.getMessage(request.file_containing_extension?.containing_type ?? '');
          const extension = message && this.registry.getExtensionFor(message, request.file_containing_extension?.extension_number ?? 0);
          if (!extension) throw new ReflectionError(grpc.status.NOT_FOUND, 'extension not found');
          response.file_descriptor_response = this.withImports(extension.file);
          break;
        }
        case 'all_extension_numbers_of_type': {
          const typeName = request.all_extension_numbers_of_type ?? '';
          const message = this.registry.getMessage(typeName);
          if (!message) throw new ReflectionError(grpc.status.NOT_FOUND, 'type not found');
          const numbers: number[] = [];
          for (const type of this.registry) if (type.kind === 'extension' && type.extendee.typeName === typeName) numbers.push(type.number);
          response.all_extension_numbers_response = { base_type_name: typeName, extension_number: numbers.sort((a, b) => a - b) };
          break;
        }
        default:
          throw new ReflectionError(grpc.status.INVALID_ARGUMENT, 'no message_request set');
      }
    } catch (error) {
      if (!(error instanceof ReflectionError)) throw error;
      response.error_response = { error_code: error.code, error_message: error.message };
    }
    return response;
  }
}

/** Adds ServerReflectionInfo (v1 and v1alpha) answering from `index`. */
export function addReflection(server: Pick<grpc.Server, 'addService'>, index: ReflectionIndex): void {
  for (const definition of reflectionDefinitions()) {
    server.addService(definition, {
      ServerReflectionInfo(stream: grpc.ServerDuplexStream<ReflectionRequest, ReflectionResponse>) {
        stream.on('data', (request: ReflectionRequest) => stream.write(index.answer(request)));
        stream.on('end', () => stream.end());
      },
    });
  }
}
