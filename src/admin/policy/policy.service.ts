import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { AdminTables } from '../admin.table.ts';
import { AppError } from '../../core/errors.ts';
import type { EffectiveModel, EffectiveProvider } from '../projection/projection.ts';
import { emptyDocument, parseDocument, serializeDocument, withHidden, withInvalid, type PolicyDocument } from './policy.document.ts';
import { compilePolicyVersionLookup, findPolicy, insertPolicyIfAbsent, updatePolicyIfVersion, type PolicyKey } from './policy.store.ts';

/** Spec "Limits": `expected_lock_version` is an integer from 0 through 2147483647. */
export const MAX_LOCK_VERSION = 2_147_483_647;

/** What a command wants the policy to become, or `noop` when it already is (the version then stays). */
export type Mutation = { enabled: boolean; document: PolicyDocument } | 'noop';

/**
 * A policy as the caller's request already read it (the projection's `policy` of a provider that is not removed, so
 * `enabled` is the stored flag), with the version that names its document.
 */
export type HeldPolicy = NonNullable<EffectiveProvider['policy']>;

/** How a command treats an absent policy (spec: "States and transitions" and Endpoints rule 2). */
export interface AbsentRule {
  /** Error when there is no policy, whatever the version (lane disable, availability with null version). */
  absent?: () => AppError;
  /**
   * The policy to create when the version is null; a function is called only then (the definition commands derive it
   * from an empty document) and may answer `noop` when the command has nothing to change on an untouched provider.
   */
  create?: { enabled: boolean; document: PolicyDocument } | (() => { enabled: boolean; document: PolicyDocument } | 'noop');
}

export function staleObject(message = 'the provider policy changed since it was read; read the provider again'): AppError {
  return new AppError('stale_object', message);
}

/**
 * A policy at the highest `lock_version` (spec Limits: 2147483647) cannot take another change. It is reported as the
 * spec's version conflict, 409 `stale_object`, with a message saying that re-reading will not help; same-value
 * requests still succeed because they leave the version unchanged.
 */
export function versionExhausted(): AppError {
  return staleObject(`the provider policy has reached the highest lock_version (${MAX_LOCK_VERSION}) and cannot change any more`);
}

/**
 * 404 for a provider id that names no provider. The id came from the client and is not repeated: whatever was
 * pasted into the URL (an API key included) must not come back in a response.
 */
export function unknownProvider(): AppError {
  return new AppError('not_found', 'unknown model provider: no provider of this Account has this id');
}

/** Looks up a provider for a command: unknown (and removed custom) providers are 404 (spec: Errors). */
export function requireProvider(providers: readonly EffectiveProvider[], providerId: string): EffectiveProvider {
  const provider = providers.find((p) => p.id === providerId);
  if (!provider || provider.source === 'removed') throw unknownProvider();
  return provider;
}

/**
 * The live model a complete reference names within a provider, if any (spec: Endpoints rule 1: the ref travels whole
 * and is matched whole; a ref of another provider or an unknown model is 404 `not_found`, see `unknownModel`).
 */
function findModel(provider: EffectiveProvider, ref: string): EffectiveModel | undefined {
  if (!ref.startsWith(`${provider.id}/`)) return undefined;
  return provider.models.find((m) => m.ref === ref && !m.removed && m.composed !== null);
}

/**
 * The ref a visibility or availability command may act on. A live model always qualifies. When the command only
 * clears (`visible: true`, `available: true`), so does a ref the policy still lists as hidden or invalid although
 * its model left the catalog: such a stale ref keeps counting toward the 256-reference limit (spec: Limits), and
 * without this it could never be cleared (docs/admin.md, "Stale references"). Hiding or invalidating needs a live
 * model. Undefined when the command has nothing to act on (404).
 */
export function commandRef(provider: EffectiveProvider, ref: string, clearing: boolean): string | undefined {
  if (findModel(provider, ref)) return ref;
  if (!clearing || !provider.policy) return undefined;
  const { hidden_models: hidden, invalid_models: invalid } = provider.policy.document;
  return hidden.includes(ref) || invalid.includes(ref) ? ref : undefined;
}

/**
 * Hidden or invalid refs of a provider's policy that name no model of the provider any more (the model left the
 * catalog), in ref order.
 */
export function staleRefs(provider: EffectiveProvider): string[] {
  if (!provider.policy) return [];
  const known = new Set(provider.models.map((m) => m.ref));
  const { hidden_models: hidden, invalid_models: invalid } = provider.policy.document;
  return [...new Set([...hidden, ...invalid])].filter((ref) => !known.has(ref)).sort();
}

/** 404 for a reference that names no model of `provider`, without repeating the reference. */
export function unknownModel(provider: EffectiveProvider, ref: string): AppError {
  if (!ref.startsWith(`${provider.id}/`))
    return new AppError(
      'not_found',
      `command.model: the reference is not a model of provider ${provider.id} (it must start with "${provider.id}/")`,
    );
  return new AppError('not_found', `command.model: provider ${provider.id} has no model with this reference`);
}

export interface PolicyServiceDeps {
  db: Kysely<AdminTables>;
  clock: Clock;
}

/**
 * The versioned policy commands: lane, visibility and availability. Each is one conditional statement (no
 * transaction held across reads), so concurrent writers on one version give exactly one success and 409s for the
 * rest, on SQLite and on PostgreSQL alike.
 */
export function createPolicyService(deps: PolicyServiceDeps) {
  const { db, clock } = deps;
  const policyVersion = compilePolicyVersionLookup(db);

  /**
   * The mutation computed from the copy the request already holds, when that copy is at the submitted version: one
   * statement instead of a read and a write. A change is one conditional UPDATE on that exact version (and row); a
   * command with nothing to change reads only the version, still checked after the caller's network IO. Undefined
   * whenever that does not settle it (the version moved, the row is gone, the write would be refused): the caller
   * then runs the general path, which reads the row afresh and reports exactly as it always does.
   */
  async function applyHeld(
    key: PolicyKey,
    expected: number,
    held: HeldPolicy,
    mutate: (current: { enabled: boolean; document: PolicyDocument }) => Mutation,
    now: number,
  ): Promise<'updated' | 'noop' | undefined> {
    const next = mutate({ enabled: held.enabled, document: held.document });
    if (next === 'noop') {
      const current = await policyVersion(key);
      return current?.lock_version === expected && current.created_at === held.createdAt ? 'noop' : undefined;
    }
    if (expected >= MAX_LOCK_VERSION) return undefined;
    let text: string;
    try {
      text = serializeDocument(next.document);
    } catch (error) {
      // Over a limit: the general path decides whether that or a stale version is the answer.
      if (error instanceof AppError && error.code === 'validation_failed') return undefined;
      throw error;
    }
    const written = await updatePolicyIfVersion(db, key, expected, { enabled: next.enabled, document: text }, now, held.createdAt);
    return written ? 'updated' : undefined;
  }

  /**
   * Applies a mutation under the spec's version rules:
   *  - no policy: null version creates (when the command may), a non-null version is 409; some commands are 404;
   *  - a policy: null is 409, another version is 409, the same value leaves the version unchanged, otherwise the
   *    conditional UPDATE bumps it; zero rows updated → re-read: missing `not_found`, present `stale_object`.
   * `held` (optional) is the policy as the request read it; see `applyHeld`. `mutate` may be called twice and must
   * be pure.
   */
  async function apply(
    key: PolicyKey,
    expected: number | null,
    absentRule: AbsentRule,
    mutate: (current: { enabled: boolean; document: PolicyDocument }) => Mutation,
    held?: HeldPolicy | null,
  ): Promise<'created' | 'updated' | 'noop'> {
    const now = clock.now();
    if (held && expected !== null && held.lockVersion === expected) {
      const settled = await applyHeld(key, expected, held, mutate, now);
      if (settled !== undefined) return settled;
    }
    const row = await findPolicy(db, key);
    if (!row) {
      if (absentRule.absent) throw absentRule.absent();
      if (expected !== null) throw staleObject('the provider has no policy yet; send expected_lock_version null');
      const create = typeof absentRule.create === 'function' ? absentRule.create() : absentRule.create;
      if (create === 'noop') return 'noop';
      if (!create) throw new AppError('not_found', 'the provider has no policy');
      const created = await insertPolicyIfAbsent(db, key, { enabled: create.enabled, document: serializeDocument(create.document) }, now);
      if (!created) throw staleObject('another request created the provider policy first; read the provider again');
      return 'created';
    }
    if (expected === null) throw staleObject('the provider already has a policy; send its lock_version');
    if (expected !== row.lock_version) throw staleObject();
    const next = mutate({ enabled: row.enabled === 1, document: parseDocument(row.document) });
    if (next === 'noop') return 'noop';
    const text = serializeDocument(next.document);
    if (row.lock_version >= MAX_LOCK_VERSION) throw versionExhausted();
    const updated = await updatePolicyIfVersion(db, key, expected, { enabled: next.enabled, document: text }, now);
    if (!updated) {
      const again = await findPolicy(db, key);
      if (!again) throw new AppError('not_found', 'the provider policy no longer exists');
      throw staleObject();
    }
    return 'updated';
  }

  return {
    /** The versioned write every policy command shares; the definition commands (../definitions) call it too. */
    apply,

    /** `PUT …/lane` (spec rule 5): enabling creates the policy if missing; disabling needs one (404 otherwise). */
    async setLane(accountId: string, provider: EffectiveProvider, enabled: boolean, expected: number | null) {
      const key = { accountId, providerId: provider.id };
      return apply(
        key,
        expected,
        enabled
          ? { create: { enabled: true, document: emptyDocument() } }
          : { absent: () => new AppError('not_found', `provider ${provider.id} has no policy to disable`) },
        (current) => (current.enabled === enabled ? 'noop' : { enabled, document: current.document }),
      );
    },

    /**
     * `PUT …/model_visibility` (spec rule 6): on an untouched provider a null version creates a disabled policy
     * with that visibility at version 0; showing never enables the provider, installs a key or clears a mark.
     */
    async setVisibility(accountId: string, provider: EffectiveProvider, ref: string, visible: boolean, expected: number | null) {
      const key = { accountId, providerId: provider.id };
      return apply(key, expected, { create: { enabled: false, document: withHidden(emptyDocument(), ref, !visible) } }, (current) => {
        const hidden = current.document.hidden_models.includes(ref);
        if (hidden === !visible) return 'noop';
        return { enabled: current.enabled, document: withHidden(current.document, ref, !visible) };
      });
    },

    /**
     * `PUT …/model_availability` (spec rule 7): requires a policy (a null version without one is 404, a number is
     * 409), works on disabled providers, and clearing the mark keeps a manual hide.
     */
    async setAvailability(accountId: string, provider: EffectiveProvider, ref: string, available: boolean, expected: number | null) {
      const key = { accountId, providerId: provider.id };
      return apply(
        key,
        expected,
        expected === null
          ? { absent: () => new AppError('not_found', `provider ${provider.id} has no policy; availability needs one`) }
          : {},
        (current) => {
          const invalid = current.document.invalid_models.includes(ref);
          if (invalid === !available) return 'noop';
          return { enabled: current.enabled, document: withInvalid(current.document, ref, !available) };
        },
      );
    },
  };
}

/** @public the service's shape, for callers that hold one */
export type PolicyService = ReturnType<typeof createPolicyService>;
