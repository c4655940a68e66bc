import type { Message } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import type { FastifyInstance } from 'fastify';
import type { RpcServices } from '../../src/app/compose.ts';
import { createPlatformGrpcServer } from '../../src/app/grpc-listener.ts';
import { buildRestApp, registerRpcMappings } from '../../src/app/rest-app.ts';
import { AppError } from '../../src/core/errors.ts';
import type { Capability } from '../../src/core/identity/identity.model.ts';
import type { Dialect } from '../../src/core/db/database.ts';
import type { ProtoGrpcType as DocumentsGrpc } from '../../src/grpc/generated/documents.ts';
import type { ProtoGrpcType as OsvGrpc } from '../../src/grpc/generated/osv.ts';
import type { PlatformDocumentsClient } from '../../src/grpc/generated/platform/v1/PlatformDocuments.ts';
import type { PlatformOSVClient } from '../../src/grpc/generated/platform/v1/PlatformOSV.ts';
import type { PlatformGrpcServer } from '../../src/grpc/grpc.server.ts';
import type { RpcMethod } from '../../src/grpc/rpc.ts';
import { composeTestServices, openTestPlatform, type TestPlatform } from '../support/platform.ts';
import { loadTestingProtos, type TestingProtos } from './client-protos.ts';

export { loadTestingProtos };

/** A PlatformTesting request as the handlers read it (the generated message's fields; no generated type exists). */
type TestingRequest<Fields> = Message & Fields;

/** What the testing RPCs saw, so tests can check that handlers were told to stop. */
interface TestingProbe {
  sleepAborted: boolean[];
}

/** Ping (no-op), Sleep (waits for its signal) and Fail (throws a plain Error), all needing CAP_PLATFORM_DOCUMENTS_LIST. */
function testingRpcs(probe: TestingProbe = { sleepAborted: [] }): RpcMethod[] {
  const service = 'platform.testing.v1.PlatformTesting';
  const capability: Capability = 'CAP_PLATFORM_DOCUMENTS_LIST';
  const ping: RpcMethod<TestingRequest<{ text: string }>, { text?: string }> = {
    service,
    method: 'Ping',
    capability,
    http: { method: 'POST', path: '/platform/testing/v1/ping', body: '*' },
    async handler({ request }) {
      // A handler with a misspelled response field, as a programming error would write it.
      if (request.text === 'misspelled-response') return { txet: 'lost' } as { text?: string };
      return { text: request.text ?? '' };
    },
  };
  const sleep: RpcMethod<TestingRequest<{ millis: number }>, { aborted: boolean }> = {
    service,
    method: 'Sleep',
    capability,
    http: { method: 'POST', path: '/platform/testing/v1/sleep', body: '*' },
    async handler({ request, signal }) {
      await new Promise<void>((resolve) => {
        const timer = request.millis ? setTimeout(resolve, request.millis) : undefined;
        signal.addEventListener('abort', () => {
          if (timer) clearTimeout(timer);
          resolve();
        });
      });
      probe.sleepAborted.push(signal.aborted);
      return { aborted: signal.aborted };
    },
  };
  const fail: RpcMethod<TestingRequest<{ reason: string }>, Record<string, never>> = {
    service,
    method: 'Fail',
    capability,
    http: { method: 'GET', path: '/platform/testing/v1/fail/:reason' },
    async handler({ request }) {
      if (request.reason === 'app') throw new AppError('not_found', 'no such thing');
      throw new Error(`secret internal detail: ${request.reason ?? ''}`);
    },
  };
  return [ping, sleep, fail] as RpcMethod[];
}

export interface GrpcTestPlatform {
  platform: TestPlatform;
  /** The composed services both listeners serve (PlatformOSV's runtime among them). */
  services: RpcServices;
  rest: FastifyInstance;
  restUrl: string;
  grpcServer: PlatformGrpcServer;
  /** `127.0.0.1:<port>` for gRPC clients. */
  grpcAddress: string;
  protos: TestingProtos;
  probe: TestingProbe;
  documentsClient(options?: grpc.ClientOptions): PlatformDocumentsClient;
  osvClient(): PlatformOSVClient;
  close(): Promise<void>;
}

/**
 * A test platform serving the gRPC services on 127.0.0.1:0 (with the testing service) and the REST listener with
 * their HTTP mappings on another ephemeral port.
 */
export async function startGrpcTestPlatform(dialect: Dialect, options: { env?: Record<string, string> } = {}): Promise<GrpcTestPlatform> {
  const platform = await openTestPlatform(dialect, options.env ? { env: options.env } : {});
  const protos = loadTestingProtos();
  const probe: TestingProbe = { sleepAborted: [] };
  const testing = testingRpcs(probe);
  const composed = composeTestServices(platform, new Set(['admin', 'grpc']));
  if (!composed.rpc) throw new Error('the grpc selection composed no RPC services');
  const services = composed.rpc;
  const rest = await buildRestApp(platform.ctx, composed);
  registerRpcMappings(rest, platform.ctx, { rpcs: testing, protos });
  await rest.listen({ host: '127.0.0.1', port: 0 });
  const address = rest.server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  const grpcServer = createPlatformGrpcServer(platform.ctx, { rpcs: [...services.rpcs, ...testing], protos });
  const { port } = await grpcServer.listen({ host: '127.0.0.1', port: 0 });
  const grpcAddress = `127.0.0.1:${port}`;
  const loaded = grpc.loadPackageDefinition(protos.packageDefinition) as unknown as DocumentsGrpc & OsvGrpc;
  const clients: grpc.Client[] = [];
  return {
    platform,
    services,
    rest,
    restUrl: `http://127.0.0.1:${address.port}`,
    grpcServer,
    grpcAddress,
    protos,
    probe,
    documentsClient(clientOptions = {}) {
      const client = new loaded.platform.v1.PlatformDocuments(grpcAddress, grpc.credentials.createInsecure(), clientOptions);
      clients.push(client);
      return client;
    },
    osvClient() {
      const client = new loaded.platform.v1.PlatformOSV(grpcAddress, grpc.credentials.createInsecure());
      clients.push(client);
      return client;
    },
    async close() {
      for (const client of clients) client.close();
      await grpcServer.close(1000);
      await rest.close();
      // Closing the platform's core also stops PlatformOSV's index refresh (the composition registered it).
      await platform.close();
    },
  };
}

/** A client of the test-only `PlatformTesting` service on the platform's gRPC listener (close it after use). */
export function testingClient(p: GrpcTestPlatform): grpc.Client {
  const loaded = grpc.loadPackageDefinition(p.protos.packageDefinition) as unknown as {
    platform: { testing: { v1: { PlatformTesting: grpc.ServiceClientConstructor } } };
  };
  return new loaded.platform.testing.v1.PlatformTesting(p.grpcAddress, grpc.credentials.createInsecure());
}

/** Metadata carrying `authorization: Bearer <token>` (none when token is undefined). */
export function bearer(token: string | undefined): grpc.Metadata {
  const metadata = new grpc.Metadata();
  if (token !== undefined) metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

/** Promisifies one unary call of a generated client: `await grpcCall((cb) => client.ListDocuments(req, md, cb))`. */
export function grpcCall<T>(start: (callback: grpc.requestCallback<T>) => grpc.ClientUnaryCall): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    start((error, value) => (error ? reject(error) : resolve(value as T)));
  });
}

/** The status of a failed call (or throws when it succeeded). */
export async function grpcError(promise: Promise<unknown>): Promise<grpc.ServiceError> {
  try {
    await promise;
  } catch (error) {
    return error as grpc.ServiceError;
  }
  throw new Error('expected the call to fail');
}

/** A platform token for the owner of `platform` with only `capabilities`. */
export async function tokenWith(platform: TestPlatform, capabilities: Capability[]): Promise<string> {
  const created = await platform.ctx.identity.createToken({
    humanId: platform.owner.human_id,
    plane: 'platform',
    capabilities,
    name: 'test',
  });
  return created.token;
}

/** JSON over the HTTP mapping. */
export async function httpJson(
  url: string,
  init: { method?: string; token?: string | undefined; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body !== undefined ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: response.headers };
}
