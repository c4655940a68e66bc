import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  bearer,
  grpcError,
  httpJson,
  loadTestingProtos,
  startGrpcTestPlatform,
  testingClient,
  tokenWith,
  type GrpcTestPlatform,
} from '../../test/grpc/grpc-support.ts';
import { openTestPlatform } from '../../test/support/platform.ts';
import { startPlatform } from '../app/serve.ts';
import { createGrpcServer } from './grpc.server.ts';

/**
 * The gRPC server itself, over the test-only PlatformTesting service: standard health and reflection answer,
 * deadlines are honoured on both transports, unexpected errors become INTERNAL with a generic message, and
 * unimplemented methods answer UNIMPLEMENTED.
 */

type Unary = (
  request: object,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, value?: Record<string, unknown>) => void,
) => grpc.ClientUnaryCall;

/** A client of the standard health service. */
function healthClient(address: string): grpc.Client {
  const healthDefinition = protoLoader.loadSync(healthProtoPath, { keepCase: true, enums: String });
  const loaded = grpc.loadPackageDefinition(healthDefinition) as unknown as {
    grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } };
  };
  return new loaded.grpc.health.v1.Health(address, grpc.credentials.createInsecure());
}

/** A client of server reflection v1. */
function reflectionClient(address: string): grpc.Client {
  const require = createRequire(import.meta.url);
  const reflectionDir = join(dirname(require.resolve('@grpc/reflection/package.json')), 'build', 'proto', 'grpc', 'reflection', 'v1');
  const definition = protoLoader.loadSync(join(reflectionDir, 'reflection.proto'), {
    keepCase: true,
    longs: String,
    defaults: false,
    oneofs: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    grpc: { reflection: { v1: { ServerReflection: grpc.ServiceClientConstructor } } };
  };
  return new loaded.grpc.reflection.v1.ServerReflection(address, grpc.credentials.createInsecure());
}

function unary(
  client: grpc.Client,
  method: string,
  request: object,
  metadata = new grpc.Metadata(),
  options: grpc.CallOptions = {},
): Promise<Record<string, unknown>> {
  const fn = (client as unknown as Record<string, Unary>)[method];
  if (!fn) throw new Error(`no method ${method}`);
  return new Promise((resolve, reject) => {
    fn.call(client, request, metadata, options, (error, value) => (error ? reject(error) : resolve(value ?? {})));
  });
}

describe('gRPC server', () => {
  let p: GrpcTestPlatform;
  let token: string;
  let testing: grpc.Client;

  beforeAll(async () => {
    p = await startGrpcTestPlatform('sqlite');
    token = await tokenWith(p.platform, ['CAP_PLATFORM_DOCUMENTS_LIST']);
    testing = testingClient(p);
  });

  afterAll(async () => {
    testing?.close();
    await p?.close();
  });

  it('answers a unary RPC with the caller authenticated by metadata', async () => {
    await expect(unary(testing, 'Ping', { text: 'hello' }, bearer(token))).resolves.toEqual({ text: 'hello' });
    const refused = await grpcError(unary(testing, 'Ping', { text: 'hello' }));
    expect(refused.code).toBe(grpc.status.UNAUTHENTICATED);
  });

  it('logs each call with its RPC and transport: gRPC once answered, HTTP on the request logger itself', async () => {
    const parsed = () => p.platform.logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    await unary(testing, 'Ping', { text: 'logged over grpc' }, bearer(token));
    await expect
      .poll(() =>
        parsed().some(
          (l) =>
            l.msg === 'rpc completed' && l.rpc === 'platform.testing.v1.PlatformTesting/Ping' && l.transport === 'grpc' && l.code === 0,
        ),
      )
      .toBe(true);
    const http = await httpJson(`${p.restUrl}/platform/testing/v1/ping`, { method: 'POST', token, body: { text: 'logged over http' } });
    expect(http.status).toBe(200);
    // The request's own line carries the RPC too: the route's request logger is the RPC's logger.
    await expect
      .poll(() =>
        parsed().some(
          (l) =>
            l.msg === 'request completed' &&
            l.rpc === 'platform.testing.v1.PlatformTesting/Ping' &&
            l.transport === 'http' &&
            typeof l.request_id === 'string',
        ),
      )
      .toBe(true);
  });

  it('answers the standard health service for the server and each service', async () => {
    const healthDefinition = protoLoader.loadSync(healthProtoPath, { keepCase: true, enums: String });
    const loaded = grpc.loadPackageDefinition(healthDefinition) as unknown as {
      grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } };
    };
    const health = new loaded.grpc.health.v1.Health(p.grpcAddress, grpc.credentials.createInsecure());
    try {
      await expect(unary(health, 'Check', { service: '' })).resolves.toEqual({ status: 'SERVING' });
      await expect(unary(health, 'Check', { service: 'platform.v1.PlatformDocuments' })).resolves.toEqual({ status: 'SERVING' });
      await expect(unary(health, 'Check', { service: 'platform.v1.PlatformOSV' })).resolves.toEqual({ status: 'SERVING' });
      const unknown = await grpcError(unary(health, 'Check', { service: 'no.such.Service' }));
      expect(unknown.code).toBe(grpc.status.NOT_FOUND);
    } finally {
      health.close();
    }
  });

  it('answers server reflection: lists the services and describes them with snake_case JSON names', async () => {
    const require = createRequire(import.meta.url);
    const reflectionDir = join(dirname(require.resolve('@grpc/reflection/package.json')), 'build', 'proto', 'grpc', 'reflection', 'v1');
    const definition = protoLoader.loadSync(join(reflectionDir, 'reflection.proto'), {
      keepCase: true,
      longs: String,
      defaults: false,
      oneofs: true,
    });
    const loaded = grpc.loadPackageDefinition(definition) as unknown as {
      grpc: { reflection: { v1: { ServerReflection: grpc.ServiceClientConstructor } } };
    };
    const client = new loaded.grpc.reflection.v1.ServerReflection(p.grpcAddress, grpc.credentials.createInsecure());
    const ask = (request: object) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const stream = (
          client as unknown as { ServerReflectionInfo(): grpc.ClientDuplexStream<object, Record<string, unknown>> }
        ).ServerReflectionInfo();
        stream.on('data', (message: Record<string, unknown>) => {
          resolve(message);
          stream.end();
        });
        stream.on('error', reject);
        stream.write(request);
      });
    try {
      const listed = await ask({ list_services: '' });
      const names = (listed.list_services_response as { service: { name: string }[] }).service.map((s) => s.name);
      expect(names).toEqual(expect.arrayContaining(['platform.v1.PlatformDocuments', 'platform.v1.PlatformOSV', 'grpc.health.v1.Health']));

      const described = await ask({ file_containing_symbol: 'platform.v1.PlatformDocuments' });
      const files = (described.file_descriptor_response as { file_descriptor_proto: Buffer[] }).file_descriptor_proto;
      expect(files.length).toBeGreaterThan(0);
      const descriptor = (await import('protobufjs/ext/descriptor/index.js')).default;
      const decoded = files.map(
        (f) =>
          descriptor.FileDescriptorProto.decode(f) as unknown as {
            name: string;
            messageType: { name: string; field: { name: string; jsonName: string }[] }[];
          },
      );
      const listResponse = decoded.flatMap((f) => f.messageType).find((m) => m.name === 'ListDocumentsResponse');
      expect(listResponse?.field.map((f) => [f.name, f.jsonName])).toEqual([
        ['documents', 'documents'],
        ['next_page_token', 'next_page_token'],
      ]);
    } finally {
      client.close();
    }
  });

  it('honours a client deadline: DEADLINE_EXCEEDED, and the handler is told to stop', async () => {
    const before = p.probe.sleepAborted.length;
    const started = Date.now();
    const error = await grpcError(unary(testing, 'Sleep', {}, bearer(token), { deadline: Date.now() + 300 }));
    expect(error.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(Date.now() - started).toBeLessThan(5000);
    await expect.poll(() => p.probe.sleepAborted.length).toBe(before + 1);
    expect(p.probe.sleepAborted.at(-1)).toBe(true);
  });

  it('tells the handler to stop when the client goes away mid-call, on both transports', async () => {
    const before = p.probe.sleepAborted.length;
    const sleep = (testing as unknown as Record<string, (r: object, m: grpc.Metadata, cb: (e: unknown) => void) => grpc.ClientUnaryCall>)
      .Sleep!;
    const call = sleep.call(testing, {}, bearer(token), () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    call.cancel();
    await expect.poll(() => p.probe.sleepAborted.length).toBe(before + 1);
    expect(p.probe.sleepAborted.at(-1)).toBe(true);

    const gone = new AbortController();
    const request = fetch(`${p.restUrl}/platform/testing/v1/sleep`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
      signal: gone.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    gone.abort();
    await expect(request).rejects.toThrow();
    await expect.poll(() => p.probe.sleepAborted.length).toBe(before + 2);
    expect(p.probe.sleepAborted.at(-1)).toBe(true);
    // A call that finishes is not cancelled afterwards (grpc-js reports every finished stream as cancelled).
    await expect(unary(testing, 'Sleep', { millis: 10 }, bearer(token))).resolves.toEqual({});
    expect(p.probe.sleepAborted.at(-1)).toBe(false);
  });

  it('turns an unexpected error into INTERNAL with a generic message, on both transports', async () => {
    const error = await grpcError(unary(testing, 'Fail', { reason: 'boom' }, bearer(token)));
    expect(error.code).toBe(grpc.status.INTERNAL);
    expect(error.details).toBe('internal server error');
    const http = await httpJson(`${p.restUrl}/platform/testing/v1/fail/boom`, { token });
    expect(http.status).toBe(500);
    expect(http.body).toEqual({ error: { code: 'internal', message: 'internal server error' } });
    expect(p.platform.logs.text()).toContain('secret internal detail');
    // An AppError keeps its code and message.
    const known = await grpcError(unary(testing, 'Fail', { reason: 'app' }, bearer(token)));
    expect([known.code, known.details]).toEqual([grpc.status.NOT_FOUND, 'no such thing']);
  });

  it('answers UNIMPLEMENTED for a declared RPC without an implementation', async () => {
    const bare = createGrpcServer({
      protos: p.protos,
      rpcs: [],
      auth: p.platform.ctx.auth,
      log: p.platform.ctx.log,
      maxDeadlineMs: 1000,
      maxReceiveMessageBytes: 1 << 20,
      maxSendMessageBytes: 1 << 20,
    });
    const { port } = await bare.listen({ host: '127.0.0.1', port: 0 });
    const loaded = grpc.loadPackageDefinition(p.protos.packageDefinition) as unknown as {
      platform: { v1: { PlatformOSV: grpc.ServiceClientConstructor } };
    };
    const client = new loaded.platform.v1.PlatformOSV(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    try {
      const error = await grpcError(unary(client, 'GetVuln', { id: 'GHSA-xxxx' }, bearer(token)));
      expect(error.code).toBe(grpc.status.UNIMPLEMENTED);
    } finally {
      client.close();
      await bare.close(0);
    }
  });

  it('refuses a request message over the size limit with RESOURCE_EXHAUSTED', async () => {
    const big = 'x'.repeat(20 * 1024 * 1024);
    const error = await grpcError(unary(testing, 'Ping', { text: big }, bearer(token)));
    expect(error.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  });
});

describe('gRPC server deadline over HTTP', () => {
  let p: GrpcTestPlatform;

  beforeAll(async () => {
    p = await startGrpcTestPlatform('sqlite', { env: { PLATFORM_RPC_DEADLINE_MS: '300' } });
  });
  afterAll(async () => p?.close());

  it('answers 504 with DEADLINE_EXCEEDED when the server deadline passes', async () => {
    const token = await tokenWith(p.platform, ['CAP_PLATFORM_DOCUMENTS_LIST']);
    const response = await httpJson(`${p.restUrl}/platform/testing/v1/sleep`, { method: 'POST', token, body: {} });
    expect(response.status).toBe(504);
    expect(response.body).toEqual({ error: { code: 'deadline_exceeded', message: 'deadline exceeded' } });
    await expect.poll(() => p.probe.sleepAborted.at(-1)).toBe(true);
  });
});

describe('gRPC listener in startPlatform, with TLS', () => {
  it('serves the platform services over TLS on PLATFORM_GRPC_PORT and names its URL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grpc-tls-'));
    const made = spawnSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ],
      { encoding: 'utf8' },
    );
    if (made.status !== 0) {
      if (process.env.CI === 'true') throw new Error(`openssl could not make a test certificate: ${made.stderr}`);
      console.warn('\n*** openssl is not available: the gRPC TLS test is SKIPPED. ***\n');
      return;
    }
    const platform = await openTestPlatform('sqlite', {
      env: {
        PLATFORM_HTTP_PORT: '0',
        PLATFORM_GRPC_PORT: '0',
        PLATFORM_TLS_CERT: join(dir, 'cert.pem'),
        PLATFORM_TLS_KEY: join(dir, 'key.pem'),
      },
    });
    const running = await startPlatform(platform.ctx, new Set(['grpc']));
    try {
      const listener = running.listeners.find((l) => l.name === 'grpc');
      expect(listener?.url).toMatch(/^grpcs:\/\/127\.0\.0\.1:\d+$/);
      const address = (listener?.url ?? '').replace('grpcs://', '');
      const loaded = grpc.loadPackageDefinition(loadTestingProtos().packageDefinition) as unknown as {
        platform: { v1: { PlatformDocuments: grpc.ServiceClientConstructor } };
      };
      const secure = new loaded.platform.v1.PlatformDocuments(address, grpc.credentials.createSsl(readFileSync(join(dir, 'cert.pem'))));
      const plain = new loaded.platform.v1.PlatformDocuments(address, grpc.credentials.createInsecure());
      try {
        await expect(unary(secure, 'ListDocuments', {}, bearer(platform.owner.platform_token))).resolves.toEqual({});
        const refused = await grpcError(
          unary(plain, 'ListDocuments', {}, bearer(platform.owner.platform_token), { deadline: Date.now() + 2000 }),
        );
        expect([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]).toContain(refused.code);
      } finally {
        secure.close();
        plain.close();
      }
    } finally {
      await running.close();
      await platform.close();
    }
  });
});

describe('gRPC graceful shutdown', () => {
  it('lets calls in flight finish, then refuses new ones', async () => {
    const p = await startGrpcTestPlatform('sqlite');
    const token = await tokenWith(p.platform, ['CAP_PLATFORM_DOCUMENTS_LIST']);
    const loaded = grpc.loadPackageDefinition(p.protos.packageDefinition) as unknown as {
      platform: { testing: { v1: { PlatformTesting: grpc.ServiceClientConstructor } } };
    };
    const client = new loaded.platform.testing.v1.PlatformTesting(p.grpcAddress, grpc.credentials.createInsecure());
    try {
      const inFlight = unary(client, 'Sleep', { millis: 400 }, bearer(token));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const closing = p.grpcServer.close(5000);
      await expect(inFlight).resolves.toEqual({});
      await closing;
      const after = await grpcError(unary(client, 'Ping', {}, bearer(token), { deadline: Date.now() + 1000 }));
      expect([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]).toContain(after.code);
    } finally {
      client.close();
      await p.close();
    }
  });

  it('ends open health Watch and reflection streams at close instead of waiting the shutdown timeout (regression: close waited PLATFORM_GRPC_SHUTDOWN_TIMEOUT_MS)', async () => {
    const p = await startGrpcTestPlatform('sqlite');
    const health = healthClient(p.grpcAddress);
    const reflection = reflectionClient(p.grpcAddress);
    try {
      const statuses: string[] = [];
      const watch = (health as unknown as { Watch(request: object): grpc.ClientReadableStream<{ status: string }> }).Watch({ service: '' });
      watch.on('data', (message: { status: string }) => statuses.push(message.status));
      const watchEnded = new Promise<grpc.StatusObject>((resolve) => watch.on('status', resolve));
      watch.on('error', () => undefined);
      await expect.poll(() => statuses).toEqual(['SERVING']);

      // A reflection stream a client keeps open (an IDE, a long-lived grpcurl session) must not hold shutdown either.
      const info = (
        reflection as unknown as { ServerReflectionInfo(): grpc.ClientDuplexStream<object, Record<string, unknown>> }
      ).ServerReflectionInfo();
      const answered = new Promise((resolve) => info.once('data', resolve));
      info.on('error', () => undefined);
      info.write({ list_services: '' });
      await answered;

      const started = Date.now();
      await p.grpcServer.close(10_000);
      expect(Date.now() - started).toBeLessThan(2000);
      expect((await watchEnded).code).toBe(grpc.status.OK);
      expect(statuses).toEqual(['SERVING', 'NOT_SERVING']);
      expect(p.platform.logs.text()).not.toContain('still running at shutdown');
    } finally {
      health.close();
      reflection.close();
      await p.close();
    }
  });

  it('cancels calls still running when the shutdown timeout passes', async () => {
    const p = await startGrpcTestPlatform('sqlite');
    const token = await tokenWith(p.platform, ['CAP_PLATFORM_DOCUMENTS_LIST']);
    const loaded = grpc.loadPackageDefinition(p.protos.packageDefinition) as unknown as {
      platform: { testing: { v1: { PlatformTesting: grpc.ServiceClientConstructor } } };
    };
    const client = new loaded.platform.testing.v1.PlatformTesting(p.grpcAddress, grpc.credentials.createInsecure());
    try {
      const stuck = grpcError(unary(client, 'Sleep', {}, bearer(token)));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = Date.now();
      await p.grpcServer.close(200);
      expect(Date.now() - started).toBeLessThan(3000);
      expect([grpc.status.CANCELLED, grpc.status.UNAVAILABLE]).toContain((await stuck).code);
      await expect.poll(() => p.probe.sleepAborted.at(-1)).toBe(true);
    } finally {
      client.close();
      await p.close();
    }
  });
});
