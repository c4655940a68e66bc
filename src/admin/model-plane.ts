import { gzipSync } from 'node:zlib';
import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../core/clock.ts';
import { sealedSecretKeyId, type SecretKey } from '../core/crypto.ts';
import type { Dialect } from '../core/db/database.ts';
import type { AdminTables } from './admin.table.ts';
import { AppError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { loadCatalog, type Catalog, type CatalogState } from './catalog/catalog.loader.ts';
import { createCostUnitService } from './cost-unit/cost-unit.service.ts';
import { createDiscoveryService, type DiscoveredModel, type DiscoveryLimits } from './discovery/discovery.service.ts';
import { createModelTestRateLimit } from './model-test/model-test.rate-limit.ts';
import { createModelTestService, type ModelTestResult } from './model-test/model-test.service.ts';
import type { UpstreamClient } from './upstream/upstream-client.ts';
import {
  createInferenceLimiter,
  DEFAULT_MAX_STREAMS,
  DEFAULT_RATE_PER_MINUTE,
  type InferenceLimiter,
} from './inference/inference.limits.ts';
import { createInferenceService, INFERENCE_TIMEOUT_MS } from './inference/inference.service.ts';
import type { InferenceCaller, InferenceEngine, InferenceRequest } from './inference/inference.types.ts';
import { createTokenCounters } from './tokens/token-counter.ts';
import { createUsageReads } from './usage/usage.service.ts';
import { createCredentialService } from './credentials/credentials.service.ts';
import type { ModelDefinition, ProviderDeclaration } from './catalog/catalog.schemas.ts';
import { createDefinitionService, type DefinitionService } from './definitions/definitions.service.ts';
import { commandRef, createPolicyService, requireProvider, staleRefs, unknownModel, unknownProvider } from './policy/policy.service.ts';
import { documentVersion, loadAccountState, modelPlaneVersion, type LoadedState } from './projection/account-state.store.ts';
import { createFreshCoalescer } from '../core/coalesce.ts';
import {
  configurationView,
  createProjection,
  liveModels,
  modelRowsJson,
  providerRow,
  type ConfigurationView,
  type EffectiveProvider,
  type AccountState,
  type ModelFilter,
  type Projection,
  type ProviderRowView,
} from './projection/projection.ts';

export interface ModelPlaneDeps {
  db: Kysely<AdminTables>;
  dialect: Dialect;
  clock: Clock;
  log: Logger;
  secretKeys: { current: SecretKey; all: readonly SecretKey[] };
  catalogDir: string;
  /** `PLATFORM_TOKENIZER_DIR`: installed hub tokenizer files; none when undefined. */
  tokenizerDir?: string | undefined;
  /** The one outbound client of every provider call (discovery, model test), with its safety rules. */
  upstream: UpstreamClient;
  /** Tests shorten the spec's bounds (20 s discovery, 30 s model test) to exercise them; production never sets these. */
  discoveryLimits?: DiscoveryLimits;
  modelTestDeadlineMs?: number;
  /** `PLATFORM_INFERENCE_TIMEOUT_MS`; 120 s when absent. */
  inferenceTimeoutMs?: number;
  /**
   * Per-credential inference limits (built at composition: Redis or the database); when absent, the database with
   * the default limits, so a plane built without them is still limited as a deployment without Redis is.
   */
  inferenceLimiter?: InferenceLimiter;
}

/** A provider as members see it: no policy version and no credential details beyond whether one is configured. */
export interface MemberProviderRow {
  id: string;
  display_name: string | null;
  credentials: string | null;
  enabled: boolean;
  configured: boolean;
  reauthorization_required: boolean;
  unavailable_until: string | null;
  /** Models a member can see (neither hidden nor invalid). */
  models: number;
}

/** A serialised response body and its gzip form, compressed on first use and then kept. */
export interface CachedBody {
  json: Buffer;
  gzip: () => Buffer;
}

function cachedBody(json: Buffer): CachedBody {
  let compressed: Buffer | undefined;
  return { json, gzip: () => (compressed ??= gzipSync(json, { level: 6 })) };
}

/**
 * Adds to a 422 over the reference limit which stored refs name models that left the catalog, so the admin can
 * clear them (they were checked against the catalog when written, so they are catalog data, not this request's
 * input).
 */
async function withStaleHint<T>(provider: EffectiveProvider, command: Promise<T>): Promise<T> {
  try {
    return await command;
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'validation_failed') throw error;
    const stale = staleRefs(provider);
    if (stale.length === 0) throw error;
    const shown = stale.slice(0, 5).join(', ') + (stale.length > 5 ? ', …' : '');
    throw new AppError(
      'validation_failed',
      `${error.message}; ${stale.length} of them name models no longer in the catalog (${shown}): clear them with model_visibility visible true or model_availability available true`,
    );
  }
}

/** The singular provider read (spec: `GET /model_providers/{provider_id}`). */
export interface ProviderEnvelope {
  model_provider: ProviderRowView;
  configuration: ConfigurationView;
}

/**
 * The model plane's composition root: loads and caches the catalog once, then serves the admin reads, the member
 * reads and the commands from one projection. A catalog that failed to load is logged once here with the file and
 * the reason, and every model-plane call answers 503 `model_plane_unavailable` (never an empty list). It is the
 * admin service's one facade (about 400 lines): each method is a short delegation to the policy, credential, cost-unit,
 * definition and projection modules, kept together so that every route and command reads the same cached projection.
 */
export function createModelPlane(deps: ModelPlaneDeps) {
  const { db, clock, log } = deps;
  const state: CatalogState = loadCatalog(deps.catalogDir);
  let projection: Projection | undefined;
  // Hub tokenizers are read on first use (a CLI command that never counts never pays for a 10 MB file); a missing or
  // invalid one is logged once, when a row or a count first needs it.
  const tokenCounters = createTokenCounters({
    tokenizerDir: deps.tokenizerDir,
    onUnavailable: (tokenizerId, reason) =>
      log.warn({ tokenizer_id: tokenizerId, reason }, 'a hub token counter is unavailable; no other counter is used in its place'),
  });
  if (state.ok) {
    projection = createProjection({
      tokenCounterAvailable: (counter) => tokenCounters.available(counter),
      catalog: state.catalog,
      secretKeys: deps.secretKeys.all,
      now: () => clock.now(),
      onBrokenEntry: (detail) => log.error(detail, 'a stored model definition entry no longer composes; the model is left out'),
    });
    log.info(
      { catalog_dir: state.catalog.dir, providers: state.catalog.providers.size, models: state.catalog.composed.size },
      'model catalog loaded',
    );
  } else {
    log.error({ catalog_file: state.file, reason: state.reason }, `model plane unavailable: catalog file ${state.file}: ${state.reason}`);
  }

  const policy = createPolicyService({ db, clock });
  const credentials = createCredentialService({ db, clock, log, secretKeys: deps.secretKeys });
  const costUnit = createCostUnitService({ db, clock });
  const discovery = createDiscoveryService({
    upstream: deps.upstream,
    policy,
    credentials,
    log,
    ...(deps.discoveryLimits ? { limits: deps.discoveryLimits } : {}),
  });
  const modelTests = createModelTestService({
    upstream: deps.upstream,
    policy,
    credentials,
    log,
    ...(deps.modelTestDeadlineMs !== undefined ? { deadlineMs: deps.modelTestDeadlineMs } : {}),
  });
  const modelTestRate = createModelTestRateLimit({ db, dialect: deps.dialect, clock });
  const inferenceTimeoutMs = deps.inferenceTimeoutMs ?? INFERENCE_TIMEOUT_MS;
  const inference = createInferenceService({
    db,
    clock,
    log,
    upstream: deps.upstream,
    timeoutMs: inferenceTimeoutMs,
    limiter:
      deps.inferenceLimiter ??
      createInferenceLimiter({
        db,
        clock,
        log,
        ratePerMinute: DEFAULT_RATE_PER_MINUTE,
        maxStreams: DEFAULT_MAX_STREAMS,
        inferenceTimeoutMs,
      }),
    tokenCounters,
    accountOf: (accountId) => providersWithKey(accountId),
    wireCredential: async (accountId, provider) => credentials.wireCredential(accountId, provider),
  });
  const definitions: DefinitionService | undefined = state.ok ? createDefinitionService({ catalog: state.catalog, policy }) : undefined;

  function requirePlane(): { catalog: Catalog; projection: Projection } {
    if (!state.ok || !projection)
      throw new AppError(
        'model_plane_unavailable',
        'the model catalog is unavailable; the server log names the catalog file and the reason',
      );
    return { catalog: state.catalog, projection };
  }

  // Concurrent reads of one Account share a database round trip, but only one that started after they arrived
  // (see src/core/coalesce.ts): under load this removes most snapshot queries without ever serving a read older than a write
  // its caller could have seen committed.
  const states = createFreshCoalescer(loadState);

  // The policy documents each Account's last read returned, by version: the next read asks the database only for
  // documents that changed (account-state.store.ts), so large policies are not moved on every request.
  const documentTexts = new LRUCache<string, Map<string, string>>({ max: 1024 });

  // The state each Account's last read returned, with the Account's model-plane version taken *before* that read
  // (migration 20261126_0014). Triggers move the version inside the very transaction of every write to the tables the
  // state is read from, whichever replica or process (a CLI command) wrote, and nothing else moves it: usage rows and
  // rate counters live in other tables. So when a version read now finds the held version, no write to those tables
  // has committed since the held state was read (a write committed after the held version was taken would have moved
  // it), and the held state is what the database holds: the read costs a one-row primary-key lookup instead of the
  // state query. The version itself is read on every request (no time-based caching), so a policy, credential,
  // admission-floor or cost-unit write on any replica reaches the next request here exactly as before.
  const heldStates = new LRUCache<string, { version: number; state: AccountState }>({ max: 1024 });

  async function loadState(accountId: string): Promise<AccountState> {
    const version = await modelPlaneVersion(db, deps.dialect, accountId);
    const held = heldStates.get(accountId);
    if (held?.version === version) return held.state;
    const state = await readAccountState(accountId);
    heldStates.set(accountId, { version, state });
    return state;
  }

  async function readAccountState(accountId: string): Promise<AccountState> {
    const version = (p: LoadedState['policies'][number]) => documentVersion(p.provider_id, p.lock_version, p.created_at);
    if (deps.dialect === 'sqlite') return withDocuments(await loadAccountState(db, deps.dialect, accountId), new Map());
    let loaded = await loadAccountState(db, deps.dialect, accountId, [...(documentTexts.get(accountId)?.keys() ?? [])]);
    const texts = documentTexts.get(accountId) ?? new Map<string, string>();
    // A document held when the query was sent but gone since (evicted, or replaced by a concurrent read): ask again
    // for everything rather than guess.
    if (loaded.policies.some((p) => p.document === null && !texts.has(version(p))))
      loaded = await loadAccountState(db, deps.dialect, accountId, []);
    const state = withDocuments(loaded, texts);
    documentTexts.set(
      accountId,
      new Map(state.policies.map((p) => [documentVersion(p.provider_id, p.lock_version, p.created_at), p.document])),
    );
    return state;
  }

  /** The state with every elided document filled in from `texts` (by version). */
  function withDocuments(loaded: LoadedState, texts: ReadonlyMap<string, string>): AccountState {
    const policies = loaded.policies.map((p) => {
      const document = p.document ?? texts.get(documentVersion(p.provider_id, p.lock_version, p.created_at));
      if (document === undefined) throw new AppError('internal', 'a policy document was neither sent nor held');
      return { ...p, document };
    });
    return { ...loaded, policies };
  }

  /**
   * The part of a snapshot key that does not depend on the time, kept by state object: a state served again from
   * `heldStates` is the same object, so its key is built once. Every policy write bumps `lock_version` and
   * `updated_at`, every credential write `updated_at` (rotation changes the key id), so equal keys mean equal inputs.
   */
  const stateKeys = new WeakMap<AccountState, string>();
  function stateKey(state: AccountState): string {
    let key = stateKeys.get(state);
    if (key !== undefined) return key;
    const parts: string[] = [];
    for (const p of state.policies) parts.push(`p|${p.provider_id}|${p.lock_version}|${p.enabled}|${p.created_at}|${p.updated_at}`);
    for (const c of state.credentials)
      parts.push(
        `c|${c.provider_id}|${c.generation}|${c.material_kind}|${c.reauthorization_required}|${c.updated_at}|${c.sealed ? sealedSecretKeyId(c.sealed) : '-'}`,
      );
    key = parts.sort().join('\n');
    stateKeys.set(state, key);
    return key;
  }

  /**
   * One read of everything the projection needs for an Account (policies, credentials, admission facts) and a key
   * that names exactly those inputs as of now: the state's own key, then each admission floor still in the future.
   */
  async function snapshot(accountId: string, started?: Promise<AccountState>): Promise<{ state: AccountState; key: string }> {
    const state = await (started ?? states.get(accountId));
    const now = clock.now();
    let floors = '';
    for (const a of state.admission)
      if (a.unavailable_until !== null && a.unavailable_until > now) floors += `\na|${a.provider_id}|${a.unavailable_until}`;
    return { state, key: stateKey(state) + floors };
  }

  // Projections and serialised bodies are memoised by the snapshot key: a read still asks the database every time
  // (the model-plane version, and the state when it moved), so every replica sees every write at once, but skips
  // recomputing what the key proves unchanged.
  const projected = new LRUCache<string, { key: string; providers: EffectiveProvider[] }>({ max: 1024 });
  const bodies = new LRUCache<string, { key: string; body: CachedBody }>({ max: 2048 });

  async function providersOf(accountId: string): Promise<EffectiveProvider[]> {
    return (await providersWithKey(accountId)).providers;
  }

  /** `started`: this request's state read, begun earlier (see readState); the database is read here otherwise. */
  async function providersWithKey(
    accountId: string,
    started?: Promise<AccountState>,
  ): Promise<{ key: string; providers: EffectiveProvider[]; costUnit: string | null }> {
    const plane = requirePlane();
    const snap = await snapshot(accountId, started);
    const costUnit = snap.state.costUnit;
    const hit = projected.get(accountId);
    if (hit?.key === snap.key) return { key: hit.key, providers: hit.providers, costUnit };
    const entry = { key: snap.key, providers: plane.projection.providers(accountId, snap.state) };
    projected.set(accountId, entry);
    return { ...entry, costUnit };
  }

  /** The `{"models":[…]}` body for an Account and filter, rebuilt only when the snapshot changed. */
  async function modelsBody(accountId: string, filter: ModelFilter): Promise<CachedBody> {
    const { key, providers } = await providersWithKey(accountId);
    const cacheKey = `${accountId}|${filter.workload ?? ''}|${filter.available ?? ''}|${filter.visibleOnly ? 1 : 0}`;
    const hit = bodies.get(cacheKey);
    if (hit?.key === key) return hit.body;
    const body = cachedBody(Buffer.from(`{"models":${modelRowsJson(providers, filter)}}`, 'utf8'));
    bodies.set(cacheKey, { key, body });
    return body;
  }

  async function providerRowOf(accountId: string, providerId: string): Promise<{ model_provider: ProviderRowView }> {
    const provider = requireProvider(await providersOf(accountId), providerId);
    return { model_provider: providerRow(provider) };
  }

  /** Logs a policy change (the audit trail; the spec defines no events) and returns the provider row. */
  async function changed(accountId: string, providerId: string, outcome: 'created' | 'updated' | 'noop', detail: Record<string, unknown>) {
    const result = await providerRowOf(accountId, providerId);
    if (outcome !== 'noop')
      log.info(
        { account_id: accountId, provider_id: providerId, lock_version: result.model_provider.lock_version, outcome, ...detail },
        'provider policy changed',
      );
    return result;
  }

  function requireDefinitions(): DefinitionService {
    requirePlane();
    if (!definitions)
      throw new AppError(
        'model_plane_unavailable',
        'the model catalog is unavailable; the server log names the catalog file and the reason',
      );
    return definitions;
  }

  /**
   * After a definition command: logs the change (the audit trail) and answers the singular-read envelope (spec:
   * "same envelope as the singular read"), which a removed custom provider still has.
   */
  async function definitionChanged(
    accountId: string,
    providerId: string,
    outcome: 'created' | 'updated' | 'noop',
    detail: Record<string, unknown>,
  ): Promise<ProviderEnvelope> {
    const { catalog } = requirePlane();
    const provider = (await providersOf(accountId)).find((p) => p.id === providerId);
    if (!provider) throw unknownProvider();
    const envelope = { model_provider: providerRow(provider), configuration: configurationView(provider, catalog) };
    if (outcome !== 'noop')
      log.info(
        { account_id: accountId, provider_id: providerId, lock_version: envelope.model_provider.lock_version, outcome, ...detail },
        'provider definition changed',
      );
    return envelope;
  }

  return {
    catalogState: state,
    credentials,
    /** Token counters of this process, selected by a model's composed token_counter. */
    tokenCounters,
    costUnit,
    /** The usage reads (`GET /usage`, `platform usage`); they need no catalog. */
    usage: createUsageReads({ db, dialect: deps.dialect, clock, costUnitOf: async (id) => (await costUnit.get(id)).cost_unit }),

    /** The Account's providers (removed custom ones included, flagged), for commands and the CLI. */
    providersOf,

    /**
     * Starts the read of an Account's state for a command that will run next (./state-prefetch.ts), to be handed to
     * that command; the read is the one the command would make itself, started sooner.
     */
    readState: (accountId: string): Promise<AccountState> => states.get(accountId),

    /**
     * The member plane's inference path (issue 16): selection, admission, fitting, the upstream call and its usage
     * row. See `InferenceEngine` in ./inference/inference.types.ts for the refusals.
     */
    infer(caller: InferenceCaller, request: InferenceRequest, signal: AbortSignal): ReturnType<InferenceEngine['infer']> {
      requirePlane();
      return inference.infer(caller, request, signal);
    },

    /** `GET /models`: the JSON body `{"models":[…]}` ordered by ref, unavailable models included unless filtered. */
    async adminModelsJson(accountId: string, filter: Pick<ModelFilter, 'workload' | 'available'>): Promise<CachedBody> {
      return modelsBody(accountId, { ...filter, visibleOnly: false });
    },

    /** `GET /model_providers`: every provider row except removed custom providers. */
    async adminProviders(accountId: string): Promise<ProviderRowView[]> {
      return (await providersOf(accountId)).filter((p) => p.source !== 'removed').map(providerRow);
    },

    /** `GET /model_providers/{id}`: the row and its configuration; a removed custom provider stays readable. */
    async adminProvider(accountId: string, providerId: string): Promise<ProviderEnvelope> {
      const { catalog } = requirePlane();
      const provider = (await providersOf(accountId)).find((p) => p.id === providerId);
      if (!provider) throw unknownProvider();
      return { model_provider: providerRow(provider), configuration: configurationView(provider, catalog) };
    },

    /** Member discovery: visible models only (hidden and invalid ones are absent). */
    async memberModelsJson(accountId: string, filter: Pick<ModelFilter, 'workload' | 'available'>): Promise<CachedBody> {
      return modelsBody(accountId, { ...filter, visibleOnly: true });
    },

    async memberProviders(accountId: string): Promise<MemberProviderRow[]> {
      return (await providersOf(accountId))
        .filter((p) => p.source !== 'removed')
        .map((p) => {
          const row = providerRow(p);
          return {
            id: row.id,
            display_name: row.display_name,
            credentials: row.credentials,
            enabled: row.enabled,
            configured: row.configured,
            reauthorization_required: row.reauthorization_required,
            unavailable_until: row.unavailable_until,
            models: liveModels(p).filter((m) => !m.hidden && !m.invalid).length,
          };
        });
    },

    async setLane(accountId: string, providerId: string, enabled: boolean, expected: number | null) {
      const provider = requireProvider(await providersOf(accountId), providerId);
      const outcome = await policy.setLane(accountId, provider, enabled, expected);
      return changed(accountId, providerId, outcome, { command: 'lane', enabled });
    },

    async setVisibility(accountId: string, providerId: string, ref: string, visible: boolean, expected: number | null) {
      const provider = requireProvider(await providersOf(accountId), providerId);
      const target = commandRef(provider, ref, visible);
      if (target === undefined) throw unknownModel(provider, ref);
      const outcome = await withStaleHint(provider, policy.setVisibility(accountId, provider, target, visible, expected));
      return changed(accountId, providerId, outcome, { command: 'model_visibility', model: target, visible });
    },

    async setAvailability(accountId: string, providerId: string, ref: string, available: boolean, expected: number | null) {
      const provider = requireProvider(await providersOf(accountId), providerId);
      const target = commandRef(provider, ref, available);
      if (target === undefined) throw unknownModel(provider, ref);
      const outcome = await withStaleHint(provider, policy.setAvailability(accountId, provider, target, available, expected));
      return changed(accountId, providerId, outcome, { command: 'model_availability', model: target, available });
    },

    /** `PUT …/definition`: override, create (disabled) or recreate a provider; unknown ids are created. */
    async putProviderDefinition(
      accountId: string,
      providerId: string,
      declaration: ProviderDeclaration,
      expected: number | null,
    ): Promise<ProviderEnvelope> {
      const service = requireDefinitions();
      const outcome = await service.putProviderDefinition(accountId, providerId, declaration, expected);
      return definitionChanged(accountId, providerId, outcome, { command: 'definition', api_format: declaration.api_format });
    },

    /** `DELETE …/definition`: back to the file declaration, or a custom provider removed (read as `source` removed). */
    async deleteProviderDefinition(accountId: string, providerId: string, expected: number | null): Promise<ProviderEnvelope> {
      const service = requireDefinitions();
      const provider = requireProvider(await providersOf(accountId), providerId);
      const outcome = await service.deleteProviderDefinition(accountId, provider, expected);
      return definitionChanged(accountId, providerId, outcome, { command: 'definition_delete' });
    },

    /** `PUT …/model_definition`: the whole entry replaced. */
    async putModelDefinition(
      accountId: string,
      providerId: string,
      ref: string,
      definition: ModelDefinition,
      expected: number | null,
    ): Promise<ProviderEnvelope> {
      const service = requireDefinitions();
      const provider = requireProvider(await providersOf(accountId), providerId);
      const outcome = await withStaleHint(provider, service.putModelDefinition(accountId, provider, ref, definition, expected));
      return definitionChanged(accountId, providerId, outcome, { command: 'model_definition', model: ref });
    },

    /** `DELETE …/model_definition`: a removal entry. */
    async removeModelDefinition(accountId: string, providerId: string, ref: string, expected: number | null): Promise<ProviderEnvelope> {
      const service = requireDefinitions();
      const provider = requireProvider(await providersOf(accountId), providerId);
      const outcome = await withStaleHint(provider, service.removeModelDefinition(accountId, provider, ref, expected));
      return definitionChanged(accountId, providerId, outcome, { command: 'model_definition_delete', model: ref });
    },

    /** `POST …/model_definition/reset`: the stored entry removed, file inheritance back. */
    async resetModelDefinition(accountId: string, providerId: string, ref: string, expected: number | null): Promise<ProviderEnvelope> {
      const service = requireDefinitions();
      const provider = requireProvider(await providersOf(accountId), providerId);
      const outcome = await service.resetModelDefinition(accountId, provider, ref, expected);
      return definitionChanged(accountId, providerId, outcome, { command: 'model_definition_reset', model: ref });
    },

    /**
     * `POST …/model_discovery`: the provider's directory read with its saved credential; the invalid marks it calls for
     * are written only after the whole directory arrived, against the submitted version.
     */
    async discoverModels(
      accountId: string,
      providerId: string,
      expected: number | null,
      started?: Promise<AccountState>,
    ): Promise<{ models: DiscoveredModel[] }> {
      const provider = requireProvider((await providersWithKey(accountId, started)).providers, providerId);
      return { models: await discovery.discover(accountId, provider, expected) };
    },

    /**
     * `POST …/model_test`: unknown models are 404 before anything else; then the Human's rate limit (none for the
     * operator CLI, `humanId` null), the probe, and the availability write the outcome calls for.
     */
    async testModel(
      accountId: string,
      humanId: string | null,
      providerId: string,
      ref: string,
      expected: number | null,
      started?: Promise<AccountState>,
    ): Promise<{ model_test: ModelTestResult; model_provider: ProviderRowView }> {
      const provider = requireProvider((await providersWithKey(accountId, started)).providers, providerId);
      const model = provider.models.find((m) => m.ref === ref && !m.removed && m.composed !== null);
      if (!model) throw unknownModel(provider, ref);
      if (humanId !== null) await modelTestRate.admit(humanId);
      const result = await modelTests.run(accountId, provider, model, expected);
      // The row read at the start is still current unless the test wrote, or lost to another write.
      const current = result.availability_update === 'applied' || result.availability_update === 'stale';
      return { model_test: result, ...(current ? await providerRowOf(accountId, providerId) : { model_provider: providerRow(provider) }) };
    },

    async putApiKey(accountId: string, providerId: string, apiKey: string) {
      const provider = requireProvider(await providersOf(accountId), providerId);
      await credentials.putApiKey(accountId, provider, apiKey);
      return providerRowOf(accountId, providerId);
    },

    async deleteApiKey(accountId: string, providerId: string) {
      const provider = requireProvider(await providersOf(accountId), providerId);
      await credentials.deleteApiKey(accountId, provider);
      return providerRowOf(accountId, providerId);
    },
  };
}

export type ModelPlane = ReturnType<typeof createModelPlane>;
