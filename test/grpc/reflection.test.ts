// Server reflection as real clients use it (issue 12, item 2): `buf curl` and a dynamic client that knows nothing
// but the reflection answers call every RPC of PlatformDocuments and PlatformOSV and grpc.health.v1.Health/Check.
// Neither sees a local proto of the platform: buf curl runs in an empty directory, and the dynamic client builds its
// schema from the FileDescriptorProtos the server sends.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import {
  create,
  createFileRegistry,
  fromBinary,
  fromJson,
  getOption,
  toBinary,
  toJson,
  type DescMethod,
  type FileRegistry,
  type JsonValue,
} from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, FileDescriptorSetSchema, type FileDescriptorProto } from '@bufbuild/protobuf/wkt';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bufBinary } from '../../src/grpc/proto-gen.ts';
import { importRecords } from '../../src/osv/osv.importer.ts';
import { startGrpcTestPlatform, tokenWith, type GrpcTestPlatform } from './grpc-support.ts';

type Json = Record<string, unknown>;

/** A record using every kind of field the answer carries: timestamps, enums, nested messages, Structs. */
const RECORD = {
  schema_version: '1.6.0',
  id: 'GHSA-refl-ecti-on01',
  modified: '2024-03-01T10:00:00Z',
  published: '2024-02-01T10:00:00Z',
  aliases: ['CVE-2024-0001'],
  summary: 'reflection test record',
  severity: [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' }],
  affected: [
    {
      package: { ecosystem: 'npm', name: 'reflected-pkg' },
      ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }, { fixed: '1.2.3' }] }],
      ecosystem_specific: { affected_functions: ['run'] },
    },
  ],
  references: [{ type: 'ADVISORY', url: 'https://example.com/advisory' }],
  database_specific: { source: 'test', nested: { n: 1 } },
};

const QUERY = { package: { ecosystem: 'npm', name: 'reflected-pkg' }, version: '1.0.0' };

/** Requests and checks shared by both clients, in call order (CreateDocument's id feeds DeleteDocument). */
function scenario(): { path: string; request: () => Json; check: (response: Json) => void }[] {
  let documentId = '';
  return [
    {
      path: 'grpc.health.v1.Health/Check',
      request: () => ({}),
      check: (r) => expect(r).toEqual({ status: 'SERVING' }),
    },
    {
      path: 'platform.v1.PlatformDocuments/CreateDocument',
      request: () => ({
        ciphertext: Buffer.from('sealed').toString('base64'),
        encryption: { algorithm: 'A256GCM', key_id: 'k1', nonce: 'AAECAw==' },
        request_id: 'r-1',
      }),
      check: (r) => {
        expect(r).toMatchObject({
          size_bytes: '6',
          encryption: { algorithm: 'A256GCM', key_id: 'k1', nonce: 'AAECAw==' },
          request_id: 'r-1',
        });
        expect(r).not.toHaveProperty('ciphertext');
        documentId = String(r.id);
      },
    },
    {
      path: 'platform.v1.PlatformDocuments/ListDocuments',
      request: () => ({ page_size: 10 }),
      check: (r) => {
        const documents = r.documents as Json[];
        expect(documents.map((d) => d.id)).toEqual([documentId]);
        expect(documents[0]).toMatchObject({ ciphertext: Buffer.from('sealed').toString('base64'), encryption: { key_id: 'k1' } });
        expect(Date.parse(String(documents[0]?.create_time))).toBeGreaterThan(0);
      },
    },
    {
      path: 'platform.v1.PlatformDocuments/DeleteDocument',
      request: () => ({ id: documentId }),
      check: (r) => expect(r).toEqual({}),
    },
    {
      path: 'platform.v1.PlatformOSV/Query',
      request: () => QUERY,
      check: (r) => {
        const vulns = r.vulns as Json[];
        expect(vulns.map((v) => v.id)).toEqual([RECORD.id]);
        expect(vulns[0]).toMatchObject({ schema_version: '1.6.0', severity: RECORD.severity, database_specific: RECORD.database_specific });
        expect(vulns[0]?.affected).toEqual([
          { ...RECORD.affected[0], ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }, { fixed: '1.2.3' }] }] },
        ]);
      },
    },
    {
      path: 'platform.v1.PlatformOSV/QueryBatch',
      request: () => ({ queries: [QUERY, { package: { ecosystem: 'npm', name: 'reflected-pkg' }, version: '1.2.3' }] }),
      check: (r) => expect(r).toEqual({ results: [{ vulns: [{ id: RECORD.id, modified: '2024-03-01T10:00:00Z' }] }, {}] }),
    },
    {
      path: 'platform.v1.PlatformOSV/GetVuln',
      request: () => ({ id: RECORD.id }),
      check: (r) =>
        expect(r).toMatchObject({
          id: RECORD.id,
          modified: RECORD.modified,
          published: RECORD.published,
          references: RECORD.references,
          aliases: RECORD.aliases,
        }),
    },
  ];
}

/** A ServerReflectionInfo stream of `version` (v1 or v1alpha), with the protos @grpc/reflection ships. */
function reflectionStream(address: string, version: 'v1' | 'v1alpha') {
  const require = createRequire(import.meta.url);
  const protoDir = join(dirname(require.resolve('@grpc/reflection/package.json')), 'build', 'proto');
  const definition = protoLoader.loadSync(`grpc/reflection/${version}/reflection.proto`, {
    keepCase: true,
    longs: Number,
    defaults: false,
    oneofs: true,
    includeDirs: [protoDir],
  });
  const Client = grpc.makeClientConstructor(
    definition[`grpc.reflection.${version}.ServerReflection`] as protoLoader.ServiceDefinition,
    'ServerReflection',
  );
  const client = new Client(address, grpc.credentials.createInsecure());
  const stream = (client as unknown as { ServerReflectionInfo(): grpc.ClientDuplexStream<object, Json> }).ServerReflectionInfo();
  const answers: Json[] = [];
  const waiting: ((answer: Json) => void)[] = [];
  stream.on('data', (answer: Json) => {
    const next = waiting.shift();
    if (next) next(answer);
    else answers.push(answer);
  });
  stream.on('error', () => undefined);
  return {
    /** One request, one answer (the server answers in order). */
    ask(request: Json): Promise<Json> {
      stream.write(request);
      const ready = answers.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
    },
    close() {
      stream.end();
      client.close();
    },
  };
}

/**
 * The schema a client that has no protos rebuilds: the files describing each listed service, then every import it
 * was not sent yet, fetched by file name.
 */
async function reflectedSchema(
  ask: (request: Json) => Promise<Json>,
): Promise<{ services: string[]; files: Map<string, FileDescriptorProto>; registry: FileRegistry }> {
  const listed = await ask({ list_services: '*' });
  const services = (listed.list_services_response as { service: { name: string }[] }).service.map((s) => s.name);
  const files = new Map<string, FileDescriptorProto>();
  const take = (answer: Json) => {
    expect(answer.error_response).toBeUndefined();
    for (const bytes of (answer.file_descriptor_response as { file_descriptor_proto: Buffer[] }).file_descriptor_proto) {
      const file = fromBinary(FileDescriptorProtoSchema, bytes);
      files.set(file.name, file);
    }
  };
  for (const service of services) take(await ask({ file_containing_symbol: service }));
  for (
    let missing = [...files.values()].flatMap((f) => f.dependency).filter((d) => !files.has(d));
    missing.length > 0;
    missing = [...files.values()].flatMap((f) => f.dependency).filter((d) => !files.has(d))
  ) {
    take(await ask({ file_by_filename: missing[0] }));
  }
  // A FileDescriptorSet lists each file after its imports.
  const ordered: FileDescriptorProto[] = [];
  const visit = (name: string): void => {
    const file = files.get(name);
    if (!file || ordered.includes(file)) return;
    file.dependency.forEach(visit);
    ordered.push(file);
  };
  [...files.keys()].forEach(visit);
  return { services, files, registry: createFileRegistry(create(FileDescriptorSetSchema, { file: ordered })) };
}

/** A unary call of `method` with JSON in and out, through a plain grpc-js client and the reflected descriptors. */
function dynamicCall(client: grpc.Client, method: DescMethod, request: Json, token: string): Promise<Json> {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      `/${method.parent.typeName}/${method.name}`,
      (value: Json) => Buffer.from(toBinary(method.input, fromJson(method.input, value as JsonValue))),
      (bytes: Buffer) => toJson(method.output, fromBinary(method.output, bytes)) as Json,
      request,
      metadata,
      (error, value) => (error ? reject(error) : resolve(value ?? {})),
    );
  });
}

describe('server reflection from the compiled descriptors', () => {
  let p: GrpcTestPlatform;
  let token: string;

  beforeAll(async () => {
    p = await startGrpcTestPlatform('sqlite');
    token = await tokenWith(p.platform, [
      'CAP_PLATFORM_DOCUMENTS_CREATE',
      'CAP_PLATFORM_DOCUMENTS_LIST',
      'CAP_PLATFORM_DOCUMENTS_DELETE',
      'CAP_PLATFORM_OSV_READ',
    ]);
    await importRecords(p.platform.ctx.database.db, [{ source: 'test', value: RECORD }]);
    await p.services.osv.keeper.refresh();
  });

  afterAll(async () => {
    await p?.close();
  });

  it('`buf curl` calls every RPC of both services and Health/Check with nothing but reflection', { timeout: 120_000 }, async () => {
    const run = promisify(execFile);
    // An empty working directory and cache: buf finds no buf.yaml and no protos, so the schema can only come from
    // reflection.
    const dir = mkdtempSync(join(tmpdir(), 'buf-curl-'));
    try {
      for (const step of scenario()) {
        const args = [
          'curl',
          '--protocol',
          'grpc',
          '--http2-prior-knowledge',
          '-H',
          `authorization: Bearer ${token}`,
          '-d',
          JSON.stringify(step.request()),
          `http://${p.grpcAddress}/${step.path}`,
        ];
        const { stdout } = await run(process.execPath, [bufBinary(), ...args], {
          cwd: dir,
          env: { ...process.env, BUF_CACHE_DIR: join(dir, 'cache') },
        });
        step.check(JSON.parse(stdout) as Json);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const version of ['v1', 'v1alpha'] as const) {
    it(`a client built only from reflection (${version}) calls every RPC of both services and Health/Check`, async () => {
      const reflection = reflectionStream(p.grpcAddress, version);
      const client = new grpc.Client(p.grpcAddress, grpc.credentials.createInsecure());
      try {
        const { services, files, registry } = await reflectedSchema((r) => reflection.ask(r));
        expect(services.sort()).toEqual(['grpc.health.v1.Health', 'platform.v1.PlatformDocuments', 'platform.v1.PlatformOSV']);
        // Real files under their real names, with their real imports (not one synthetic file per package).
        expect([...files.keys()].sort()).toEqual([
          'google/api/annotations.proto',
          'google/api/http.proto',
          'google/protobuf/descriptor.proto',
          'google/protobuf/struct.proto',
          'google/protobuf/timestamp.proto',
          'grpc/health/v1/health.proto',
          'platform/v1/documents.proto',
          'platform/v1/osv.proto',
        ]);
        expect(files.get('platform/v1/osv.proto')?.dependency).toEqual([
          'google/api/annotations.proto',
          'google/protobuf/struct.proto',
          'google/protobuf/timestamp.proto',
        ]);
        expect(registry.getMessage('google.protobuf.Struct')?.fields[0]?.fieldKind).toBe('map');
        expect(files.get('google/protobuf/struct.proto')?.messageType[0]?.nestedType.map((n) => n.name)).toEqual(['FieldsEntry']);
        // The HTTP mapping reads as the google.api.http option, resolvable from the reflected extension.
        const http = registry.getExtension('google.api.http');
        const rule = registry.getMessage('google.api.HttpRule');
        const query = registry.getService('platform.v1.PlatformOSV')?.methods.find((m) => m.name === 'Query');
        if (!http || !rule || !query) throw new Error('incomplete schema');
        expect(toJson(rule, getOption(query, http) as never)).toEqual({ post: '/platform/v1/osv/query', body: '*' });

        for (const step of scenario()) {
          const [serviceName, methodName] = step.path.split('/') as [string, string];
          const method = registry.getService(serviceName)?.methods.find((m) => m.name === methodName);
          if (!method) throw new Error(`${step.path} is not in the reflected schema`);
          step.check(await dynamicCall(client, method, step.request(), token));
        }
      } finally {
        client.close();
        reflection.close();
      }
    });
  }

  it('answers every lookup kind, and NOT_FOUND without echoing the name', async () => {
    const reflection = reflectionStream(p.grpcAddress, 'v1');
    try {
      const fileOf = async (request: Json) => {
        const answer = await reflection.ask(request);
        const first = (answer.file_descriptor_response as { file_descriptor_proto: Buffer[] } | undefined)?.file_descriptor_proto[0];
        return first ? fromBinary(FileDescriptorProtoSchema, first).name : answer.error_response;
      };
      expect(await fileOf({ file_by_filename: 'grpc/health/v1/health.proto' })).toBe('grpc/health/v1/health.proto');
      expect(await fileOf({ file_containing_symbol: 'platform.v1.PlatformOSV.GetVuln' })).toBe('platform/v1/osv.proto');
      expect(await fileOf({ file_containing_symbol: 'platform.v1.Vulnerability.database_specific' })).toBe('platform/v1/osv.proto');
      expect(await fileOf({ file_containing_symbol: 'platform.v1.Severity.CVSS_V3' })).toBe('platform/v1/osv.proto');
      expect(await fileOf({ file_containing_symbol: 'google.protobuf.Struct.FieldsEntry' })).toBe('google/protobuf/struct.proto');
      expect(
        await fileOf({ file_containing_extension: { containing_type: 'google.protobuf.MethodOptions', extension_number: 72295728 } }),
      ).toBe('google/api/annotations.proto');
      const numbers = await reflection.ask({ all_extension_numbers_of_type: 'google.protobuf.MethodOptions' });
      expect(numbers.all_extension_numbers_response).toEqual({
        base_type_name: 'google.protobuf.MethodOptions',
        extension_number: [72295728],
      });
      for (const request of [
        { file_by_filename: 'platform/v1/secret-probe.proto' },
        { file_containing_symbol: 'platform.v1.SecretProbe' },
        { file_containing_symbol: 'platform.v1.PlatformOSV.SecretProbe' },
      ]) {
        const error = (await fileOf(request)) as { error_code: number; error_message: string };
        expect(error.error_code).toBe(grpc.status.NOT_FOUND);
        expect(error.error_message).not.toContain('SecretProbe');
        expect(error.error_message).not.toContain('secret-probe');
      }
    } finally {
      reflection.close();
    }
  });
});
