import { AppError } from '../../core/errors.ts';
import type { ComposedModel } from '../catalog/catalog.compose.ts';
import type { Workload } from '../catalog/wires.ts';
import {
  liveModels,
  unavailableReason,
  type EffectiveModel,
  type EffectiveProvider,
  type UnavailableReason,
} from '../projection/projection.ts';
import type { ProviderDeclaration } from '../catalog/catalog.schemas.ts';

/**
 * Why a known candidate is refused: the spec's `unavailable_reason` (in its priority order, as `GET /models` shows it),
 * then the provider's admission floor (`provider_unavailable`: its `unavailable_until` is in the future, after an
 * upstream 429), then a model of another workload than the request's (`workload_mismatch`).
 */
export type AdmissionRefusal = UnavailableReason | 'provider_unavailable' | 'workload_mismatch';

export interface AdmittedModel {
  provider: EffectiveProvider & { declaration: ProviderDeclaration };
  model: EffectiveModel & { composed: ComposedModel };
}

type Candidate = { ref: string; known: false } | ({ ref: string; known: true; refusal: AdmissionRefusal | null } & AdmittedModel);

type LiveModel = ReturnType<typeof liveModels>[number];

/**
 * Each provider's live models by ref. A projection's providers are memoised objects (model-plane.ts keeps them while
 * their inputs are unchanged) and never mutated, so the index built for one stays right for as long as it is reachable,
 * and a changed projection brings new objects and so new indexes.
 */
const liveByRef = new WeakMap<EffectiveProvider, Map<string, LiveModel>>();
function liveModel(provider: EffectiveProvider, ref: string): LiveModel | undefined {
  let index = liveByRef.get(provider);
  if (!index) {
    index = new Map(liveModels(provider).map((m) => [m.ref, m]));
    liveByRef.set(provider, index);
  }
  return index.get(ref);
}

function lookup(providers: readonly EffectiveProvider[], ref: string, workload: Workload): Candidate {
  const slash = ref.indexOf('/');
  const provider = slash > 0 ? providers.find((p) => p.id === ref.slice(0, slash)) : undefined;
  const model = provider && provider.source !== 'removed' ? liveModel(provider, ref) : undefined;
  if (!provider?.declaration || !model) return { ref, known: false };
  const refusal =
    unavailableReason(provider, model) ??
    (provider.unavailableUntil !== null ? 'provider_unavailable' : null) ??
    (model.composed.workload !== workload ? 'workload_mismatch' : null);
  return { ref, known: true, refusal, provider: provider as AdmittedModel['provider'], model };
}

function describe(candidate: Candidate & { known: true }): string {
  if (candidate.refusal === 'provider_unavailable' && candidate.provider.unavailableUntil !== null)
    return `${candidate.ref}: provider_unavailable (provider ${candidate.provider.id} admits no calls until ${new Date(candidate.provider.unavailableUntil).toISOString()})`;
  if (candidate.refusal === 'workload_mismatch')
    return `${candidate.ref}: workload_mismatch (a ${candidate.model.composed.workload} model)`;
  return `${candidate.ref}: ${candidate.refusal ?? 'available'}`;
}

/**
 * Selection and admission (issue 16 item 3): the first admissible candidate in order. Refs that name no model of the
 * Account are skipped; when none is known the answer is 404 `not_found`, when every known one is refused 409
 * `model_unavailable` naming each candidate's reason. `providers` is the request's own projection read, so every
 * request is admitted against the current policy, credentials and admission floor.
 */
export function admit(providers: readonly EffectiveProvider[], refs: readonly string[], workload: Workload): AdmittedModel {
  const known: (Candidate & { known: true })[] = [];
  for (const ref of refs) {
    const candidate = lookup(providers, ref, workload);
    if (!candidate.known) continue;
    if (candidate.refusal === null) return { provider: candidate.provider, model: candidate.model };
    known.push(candidate);
  }
  if (known.length === 0)
    throw new AppError(
      'not_found',
      refs.length === 1 ? 'the model names no model of this Account' : 'no candidate names a model of this Account',
    );
  throw new AppError('model_unavailable', `no candidate model is available: ${known.map(describe).join('; ')}`);
}

/** The first known candidate's ref (what a refused request's usage row names), or undefined when none is known. */
export function firstKnownRef(
  providers: readonly EffectiveProvider[],
  refs: readonly string[],
  workload: Workload,
): AdmittedModel | undefined {
  for (const ref of refs) {
    const candidate = lookup(providers, ref, workload);
    if (candidate.known) return { provider: candidate.provider, model: candidate.model };
  }
  return undefined;
}
