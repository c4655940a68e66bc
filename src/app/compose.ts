import type { Kysely } from 'kysely';
import type { AdminTables } from '../admin/admin.table.ts';
import { createCredentialService, type CredentialService } from '../admin/credentials/credentials.service.ts';
import type { ModelsCommandDeps } from '../admin/models.commands.ts';
import { upstreamAllowPrivate } from '../admin/admin.config.ts';
import { createInferenceLimiter } from '../admin/inference/inference.limits.ts';
import { createModelPlane, type ModelPlane } from '../admin/model-plane.ts';
import { createUpstreamClient } from '../admin/upstream/upstream-client.ts';
import { narrowTables, type DatabaseHandle } from '../core/db/database.ts';
import { holdRedis } from '../core/redis-client.ts';
import { findAccount } from '../core/identity/identity.store.ts';
import { createDocumentsRpcs } from '../documents/documents.rpcs.ts';
import { createDocumentsService, type DocumentsService } from '../documents/documents.service.ts';
import { createPageTokenCodec } from '../documents/page-token.ts';
import { loadProtos, type LoadedProtos } from '../grpc/protos.ts';
import type { RpcMethod } from '../grpc/rpc.ts';
import type { OsvCommandDeps } from '../osv/osv.command.ts';
import { createOsvRpcs } from '../osv/osv.rpcs.ts';
import { createOsvRuntime, type OsvRuntime } from '../osv/osv.runtime.ts';
import type { OsvTables } from '../osv/osv.table.ts';
import type { PlatformContext } from './context.ts';

/**
 * The composition root: each service is built here, once, from the configuration and the core (database, logger,
 * clock, fetch, secret keys, identity), and receives only the narrow dependencies it declares. `platform serve`
 * builds the services `--only` selects and hands each listener what it serves; commands build the one service they
 * need through the same functions.
 */

/** What `platform serve --only` can select. */
export const SERVICES = ['admin', 'grpc', 'mcp', 'devforge'] as const;
export type ServiceName = (typeof SERVICES)[number];

/** The model plane: the admin API, the member reads and the `models` commands. */
export function composeModelPlane(core: PlatformContext): ModelPlane {
  // One outbound client (and connection pool) for every provider call of this process, closed with the core.
  const upstream = createUpstreamClient({ allowPrivate: upstreamAllowPrivate(core.config.admin, core.database.dialect) });
  core.onClose(() => upstream.close());
  const config = core.config.admin;
  const db: Kysely<AdminTables> = narrowTables(core.database.db);
  // The process's Redis connection (core/redis-client.ts) for the inference limits, when replicas share them there.
  const redisUrl = config.PLATFORM_REDIS_URL;
  const hold =
    redisUrl === undefined
      ? undefined
      : holdRedis(redisUrl, {
          clock: core.clock,
          log: core.log,
          onUnreachable: 'inference limits: Redis unreachable; calls are not limited until it is back',
        });
  if (hold) core.onClose(() => hold.release());
  const redis = hold?.redis;
  const inferenceLimiter = createInferenceLimiter({
    db,
    clock: core.clock,
    log: core.log,
    redis,
    ratePerMinute: config.PLATFORM_INFERENCE_RATE_PER_MINUTE,
    maxStreams: config.PLATFORM_INFERENCE_MAX_STREAMS,
    inferenceTimeoutMs: config.PLATFORM_INFERENCE_TIMEOUT_MS,
  });
  return createModelPlane({
    upstream,
    inferenceLimiter,
    db,
    dialect: core.database.dialect,
    clock: core.clock,
    log: core.log,
    secretKeys: core.secretKeys,
    catalogDir: core.config.admin.PLATFORM_CATALOG_DIR,
    tokenizerDir: core.config.admin.PLATFORM_TOKENIZER_DIR,
    inferenceTimeoutMs: config.PLATFORM_INFERENCE_TIMEOUT_MS,
  });
}

/** The model plane and an Account check, for `platform models …`. */
export function composeModelsCommand(core: PlatformContext): ModelsCommandDeps {
  return {
    plane: composeModelPlane(core),
    accountExists: async (id) => (await findAccount(narrowTables(core.database.db), id)) !== undefined,
  };
}

/** Provider credentials alone (`platform secrets rotate`), without loading the catalog. */
export function composeCredentials(core: PlatformContext): CredentialService {
  return createCredentialService({ db: narrowTables(core.database.db), clock: core.clock, log: core.log, secretKeys: core.secretKeys });
}

/** PlatformOSV with its in-memory index (built at once); stopped when the core closes. */
export function composeOsv(core: PlatformContext): OsvRuntime {
  const runtime = createOsvRuntime({ db: narrowTables(core.database.db), clock: core.clock, log: core.log, config: core.config.osv });
  core.onClose(() => runtime.close());
  return runtime;
}

/** The OSV corpus without the index, for `platform osv import|status`. */
export function composeOsvCorpus(core: PlatformContext): OsvCommandDeps {
  // Narrowed to OSV's tables as `narrowTables` does for a connection; the handle stays open for the command's run.
  return { database: core.database as unknown as DatabaseHandle<OsvTables>, clock: core.clock };
}

/** PlatformDocuments; its page tokens are signed with the current secret key and verified with every configured one. */
export function composeDocuments(core: PlatformContext): DocumentsService {
  const { current, all } = core.secretKeys;
  const secrets = [current, ...all.filter((k) => k.id !== current.id)].map((k) => k.key);
  return createDocumentsService({
    db: narrowTables(core.database.db),
    dialect: core.database.dialect,
    clock: core.clock,
    config: core.config.documents,
    pageTokens: createPageTokenCodec(secrets),
  });
}

/** The builders `composeServices` calls; tests replace them to observe what a selection builds. */
export interface ServiceBuilders {
  modelPlane(core: PlatformContext): ModelPlane;
  osv(core: PlatformContext): OsvRuntime;
  documents(core: PlatformContext): DocumentsService;
  protos(): LoadedProtos;
}

export const SERVICE_BUILDERS: ServiceBuilders = {
  modelPlane: composeModelPlane,
  osv: composeOsv,
  documents: composeDocuments,
  protos: () => loadProtos(),
};

/**
 * The platform RPCs (PlatformDocuments and PlatformOSV) and the protos they are served with. One set serves both
 * transports, the gRPC listener and the HTTP mappings on the REST listener. A proto method missing from `rpcs`
 * answers UNIMPLEMENTED over gRPC and has no HTTP route.
 */
export interface RpcServices {
  protos: LoadedProtos;
  rpcs: readonly RpcMethod[];
  documents: DocumentsService;
  osv: OsvRuntime;
}

/** The services of one `serve`, each present only when selected. */
export interface PlatformServices {
  /** `admin`: the admin API, the member reads and the OpenAPI document on the REST listener. */
  admin?: ModelPlane;
  /** `grpc`: the gRPC listener and the HTTP mappings on the REST listener. */
  rpc?: RpcServices;
}

export function composeRpcServices(core: PlatformContext, builders: ServiceBuilders = SERVICE_BUILDERS): RpcServices {
  const documents = builders.documents(core);
  const osv = builders.osv(core);
  const rpcs = [...createDocumentsRpcs({ service: documents, config: core.config.documents }), ...createOsvRpcs({ service: osv.service })];
  return { protos: builders.protos(), rpcs, documents, osv };
}

/**
 * Builds the services `only` selects, each once. `mcp` and `devforge` are built by their listener
 * (src/mcp/mcp.listener.ts), since nothing else shares them.
 */
export function composeServices(
  core: PlatformContext,
  only: ReadonlySet<ServiceName>,
  builders: ServiceBuilders = SERVICE_BUILDERS,
): PlatformServices {
  return {
    ...(only.has('admin') ? { admin: builders.modelPlane(core) } : {}),
    ...(only.has('grpc') ? { rpc: composeRpcServices(core, builders) } : {}),
  };
}
