import { decryptSecret, type SecretKey } from '../../core/crypto.ts';
import type { AdmissionRow, CredentialMaterialRow, PolicyRow } from '../admin.table.ts';
import { composeRef, type ComposedModel } from '../catalog/catalog.compose.ts';
import { compareRefs, type Catalog } from '../catalog/catalog.loader.ts';
import type { ModelDefinition, ProviderDeclaration } from '../catalog/catalog.schemas.ts';
import type { CredentialLane, Workload } from '../catalog/wires.ts';
import { parseDocument, type PolicyDocument } from '../policy/policy.document.ts';

/**
 * The account-effective catalog: the deployment catalog seen through one Account's provider policies, credentials
 * and admission facts. Admin rows, member rows, commands and the CLI all read it from here, so they cannot
 * disagree (spec: "They use the same catalog, policy commands, credential commands and projections").
 */

/** Spec Model row `unavailable_reason`, in priority order: the first refusal wins. */
export const UNAVAILABLE_REASONS = [
  'provider_disabled',
  'model_unavailable',
  'model_hidden',
  'missing_credential',
  'reauthorization_required',
  'credential_unusable',
] as const;
export type UnavailableReason = (typeof UNAVAILABLE_REASONS)[number];

type CredentialReason = Extract<UnavailableReason, 'missing_credential' | 'reauthorization_required' | 'credential_unusable'>;

/** Where a provider's declaration comes from (spec: `configuration.source`). */
type ProviderSource = 'catalog' | 'override' | 'custom' | 'removed';
type ModelSource = 'catalog' | 'override' | 'custom';

export interface EffectiveModel {
  ref: string;
  /** The authored entry as stored: the policy's definition entry, else the catalog's. */
  definition: ModelDefinition;
  source: ModelSource;
  removed: boolean;
  /** Null only when a stored entry no longer composes (reported in the log, never served). */
  composed: ComposedModel | null;
  hidden: boolean;
  invalid: boolean;
  /** `{"ref":…,"pricing":…` without the closing brace: the static part of the row, serialised once. */
  jsonPrefix: string | null;
}

export interface EffectiveProvider {
  id: string;
  source: ProviderSource;
  /** Null for a removed custom provider. */
  declaration: ProviderDeclaration | null;
  /** `createdAt` with `lockVersion` names the stored document exactly (a recreated row has a new `createdAt`). */
  policy: { lockVersion: number; createdAt: number; enabled: boolean; document: PolicyDocument } | null;
  credential: {
    materialKind: string | null;
    configured: boolean;
    reauthorizationRequired: boolean;
    /** Why the lane's credential refuses calls, or null when it is usable. */
    refusal: CredentialReason | null;
    /**
     * The stored material, still sealed, as read with this projection: an upstream call opens it from here instead of
     * reading the row again. Rows are built field by field (`providerRow`), so it never reaches a response.
     */
    sealed: string | null;
  };
  unavailableUntil: number | null;
  /** Every model entry in ref order, removed ones included (they stay visible in the configuration). */
  models: EffectiveModel[];
}

export interface AccountState {
  policies: PolicyRow[];
  credentials: CredentialMaterialRow[];
  admission: AdmissionRow[];
  /** The Account's configured cost unit (null until configured), read with the rest: a priced call needs both. */
  costUnit: string | null;
}

/** Spec "Provider row". */
export interface ProviderRowView {
  id: string;
  display_name: string | null;
  credentials: CredentialLane | null;
  enabled: boolean;
  lock_version: number | null;
  configured: boolean;
  material_kind: string | null;
  reauthorization_required: boolean;
  unavailable_until: string | null;
  models: number;
}

/** The singular-read configuration (spec: "Provider configuration"). */
export interface ConfigurationView {
  definition: ProviderDeclaration | null;
  source: ProviderSource;
  models: { model: string; definition: ModelDefinition; source: ModelSource; removed: boolean }[];
  model_definitions: Catalog['modelDefinitions'];
}

/** Associated data that binds a sealed credential to its row, so sealed values cannot be swapped between rows. */
export function credentialAad(accountId: string, providerId: string): string {
  return `model-provider-credential:${accountId}:${providerId}`;
}

export interface ProjectionDeps {
  catalog: Catalog;
  secretKeys: readonly SecretKey[];
  now: () => number;
  /** Reports a stored entry that no longer composes (never thrown at a reader). */
  onBrokenEntry?: (detail: { accountId: string; ref: string; reason: string }) => void;
  /** Whether a model's token counter can be used (../tokens/token-counter.ts); true for every model when absent. */
  tokenCounterAvailable?: (counter: ComposedModel['capabilities']['token_counter']) => boolean;
}

/**
 * Builds projections for one catalog. Composition of catalog models is done once at load; policy definition
 * entries are composed on read and memoised by their content. Decryption results (usable or not) are memoised
 * by (Account, provider, sealed value): a sealed value only opens in the row it was sealed for.
 */
export function createProjection(deps: ProjectionDeps) {
  const { catalog } = deps;
  const composedMemo = new Map<string, ComposedModel | string>();
  const usableMemo = new Map<string, boolean>();
  // Per projection: the counter's availability is part of the static row and depends on this process's deps.
  const rowPrefixes = new WeakMap<ComposedModel, string>();

  function jsonPrefixOf(model: ComposedModel): string {
    let prefix = rowPrefixes.get(model);
    if (prefix === undefined) {
      const counterAvailable = deps.tokenCounterAvailable?.(model.capabilities.token_counter) ?? true;
      prefix = `${JSON.stringify(model).slice(0, -1)},"token_counter_available":${counterAvailable}`;
      rowPrefixes.set(model, prefix);
    }
    return prefix;
  }

  function composeEntry(
    providerId: string,
    declaration: ProviderDeclaration,
    ref: string,
    definition: ModelDefinition,
  ): ComposedModel | string {
    const key = JSON.stringify([providerId, declaration, ref, definition]);
    let hit = composedMemo.get(key);
    if (hit === undefined) {
      const result = composeRef(providerId, declaration, ref, definition, catalog.modelDefinitions);
      hit = result.ok ? result.model : result.reason;
      if (composedMemo.size > 4096) composedMemo.clear();
      composedMemo.set(key, hit);
    }
    return hit;
  }

  function usable(accountId: string, providerId: string, sealed: string): boolean {
    // Keyed by the row as well as the sealed value: the value is bound to its (Account, provider) row, so the same
    // value copied into another row does not decrypt there and must not inherit the first row's answer.
    const memoKey = `${accountId}|${providerId}|${sealed}`;
    let ok = usableMemo.get(memoKey);
    if (ok === undefined) {
      try {
        decryptSecret(sealed, deps.secretKeys, credentialAad(accountId, providerId));
        ok = true;
      } catch {
        ok = false;
      }
      if (usableMemo.size > 4096) usableMemo.clear();
      usableMemo.set(memoKey, ok);
    }
    return ok;
  }

  function credentialOf(
    accountId: string,
    providerId: string,
    lane: CredentialLane | null,
    row: CredentialMaterialRow | undefined,
  ): EffectiveProvider['credential'] {
    const materialKind = row?.sealed ? row.material_kind : null;
    const reauthorizationRequired = materialKind === 'oauth_tokens' && row?.reauthorization_required === 1;
    const configured = materialKind !== null;
    let refusal: CredentialReason | null = null;
    if (lane === 'api_key' || lane === 'oauth_tokens') {
      if (!row?.sealed || materialKind === null) refusal = 'missing_credential';
      else if (materialKind !== lane) refusal = 'credential_unusable';
      else if (reauthorizationRequired) refusal = 'reauthorization_required';
      else if (!usable(accountId, providerId, row.sealed)) refusal = 'credential_unusable';
    }
    return { materialKind, configured, reauthorizationRequired, refusal, sealed: row?.sealed ?? null };
  }

  /** Every provider the Account can see or read, in id order; removed custom providers are included, flagged. */
  function providers(accountId: string, state: AccountState): EffectiveProvider[] {
    const policies = new Map(state.policies.map((p) => [p.provider_id, p]));
    const credentials = new Map(state.credentials.map((c) => [c.provider_id, c]));
    const admission = new Map(state.admission.map((a) => [a.provider_id, a]));
    const ids = new Set<string>(catalog.providers.keys());
    for (const p of state.policies) if (!catalog.providers.has(p.provider_id)) ids.add(p.provider_id);
    const out: EffectiveProvider[] = [];
    for (const id of [...ids].sort(compareRefs)) {
      const row = policies.get(id);
      const document = row ? parseDocument(row.document) : null;
      const fromCatalog = catalog.providers.get(id);
      let source: ProviderSource;
      let declaration: ProviderDeclaration | null;
      if (fromCatalog) {
        source = document?.provider_definition ? 'override' : 'catalog';
        declaration = document?.provider_definition ?? fromCatalog.declaration;
      } else if (document?.provider_definition && !document.provider_removed) {
        source = 'custom';
        declaration = document.provider_definition;
      } else if (document) {
        source = 'removed';
        declaration = null;
      } else {
        continue;
      }
      const models: EffectiveModel[] = [];
      if (declaration) {
        const refs = new Set<string>();
        if (fromCatalog) for (const key of fromCatalog.models.keys()) refs.add(`${id}/${key}`);
        for (const ref of Object.keys(document?.model_definitions ?? {})) refs.add(ref);
        const hidden = new Set(document?.hidden_models ?? []);
        const invalid = new Set(document?.invalid_models ?? []);
        const removed = new Set(document?.removed_models ?? []);
        for (const ref of [...refs].sort(compareRefs)) {
          const authored = document?.model_definitions[ref];
          const catalogEntry = fromCatalog?.models.get(ref.slice(id.length + 1));
          const definition = authored ?? catalogEntry;
          if (!definition) continue;
          let composed: ComposedModel | string | undefined = !authored && source === 'catalog' ? catalog.composed.get(ref) : undefined;
          composed ??= composeEntry(id, declaration, ref, definition);
          if (typeof composed === 'string') {
            deps.onBrokenEntry?.({ accountId, ref, reason: composed });
            composed = undefined;
          }
          models.push({
            ref,
            definition,
            source: authored ? (catalogEntry ? 'override' : 'custom') : 'catalog',
            removed: removed.has(ref),
            composed: composed ?? null,
            hidden: hidden.has(ref),
            invalid: invalid.has(ref),
            jsonPrefix: composed ? jsonPrefixOf(composed) : null,
          });
        }
      }
      const until = admission.get(id)?.unavailable_until ?? null;
      out.push({
        id,
        source,
        declaration,
        policy:
          row && document
            ? { lockVersion: row.lock_version, createdAt: row.created_at, enabled: row.enabled === 1 && source !== 'removed', document }
            : null,
        credential: credentialOf(accountId, id, declaration?.credentials ?? null, credentials.get(id)),
        unavailableUntil: until !== null && until > deps.now() ? until : null,
        models,
      });
    }
    return out;
  }

  return { providers };
}

export type Projection = ReturnType<typeof createProjection>;

/** The first refusal for a model, in the spec's priority order, or null when it is available. */
export function unavailableReason(provider: EffectiveProvider, model: EffectiveModel): UnavailableReason | null {
  if (!provider.policy?.enabled) return 'provider_disabled';
  if (model.invalid) return 'model_unavailable';
  if (model.hidden) return 'model_hidden';
  return provider.credential.refusal;
}

/** Models that exist (not removed and composable), in ref order. */
export function liveModels(provider: EffectiveProvider): (EffectiveModel & { composed: ComposedModel; jsonPrefix: string })[] {
  return provider.models.filter(
    (m): m is EffectiveModel & { composed: ComposedModel; jsonPrefix: string } =>
      !m.removed && m.composed !== null && m.jsonPrefix !== null,
  );
}

export interface ModelFilter {
  workload?: Workload;
  available?: boolean;
  /** Member discovery: only visible models (neither hidden nor invalid). */
  visibleOnly?: boolean;
}

/**
 * Model rows of an Account ordered by ref, serialised as the JSON array text. Rows are assembled from
 * pre-serialised static parts, so a catalog read costs string concatenation rather than a deep stringify.
 */
export function modelRowsJson(providers: readonly EffectiveProvider[], filter: ModelFilter = {}): string {
  const parts: string[] = [];
  const rows: { ref: string; json: string }[] = [];
  for (const provider of providers) {
    if (provider.source === 'removed') continue;
    for (const model of liveModels(provider)) {
      if (filter.workload !== undefined && model.composed.workload !== filter.workload) continue;
      const visible = !model.hidden && !model.invalid;
      if (filter.visibleOnly && !visible) continue;
      const reason = unavailableReason(provider, model);
      if (filter.available !== undefined && (reason === null) !== filter.available) continue;
      rows.push({
        ref: model.ref,
        json: `${model.jsonPrefix},"available":${reason === null},"visible":${visible},"unavailable_reason":${reason === null ? 'null' : `"${reason}"`}}`,
      });
    }
  }
  // Provider order is not ref order: provider "a" sorts before "a.b", but ref "a.b/x" sorts before "a/x"
  // ("." < "/"). Sort once over all rows.
  rows.sort((a, b) => compareRefs(a.ref, b.ref));
  for (const row of rows) parts.push(row.json);
  return `[${parts.join(',')}]`;
}

/** Spec "Provider row". */
export function providerRow(provider: EffectiveProvider): ProviderRowView {
  return {
    id: provider.id,
    display_name: provider.declaration?.display_name ?? null,
    credentials: provider.declaration?.credentials ?? null,
    enabled: provider.policy?.enabled ?? false,
    lock_version: provider.policy?.lockVersion ?? null,
    configured: provider.credential.configured,
    material_kind: provider.credential.materialKind,
    reauthorization_required: provider.credential.reauthorizationRequired,
    unavailable_until: provider.unavailableUntil === null ? null : new Date(provider.unavailableUntil).toISOString(),
    models: liveModels(provider).length,
  };
}

/** Spec "Provider configuration": authored entries as stored, removed ones included; nothing expanded. */
export function configurationView(provider: EffectiveProvider, catalog: Catalog): ConfigurationView {
  return {
    definition: provider.declaration,
    source: provider.source,
    models: provider.models.map((m) => ({ model: m.ref, definition: m.definition, source: m.source, removed: m.removed })),
    model_definitions: catalog.modelDefinitions,
  };
}
