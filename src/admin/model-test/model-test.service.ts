import { AppError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { CredentialService } from '../credentials/credentials.service.ts';
import { withInvalid } from '../policy/policy.document.ts';
import type { PolicyService } from '../policy/policy.service.ts';
import type { EffectiveModel, EffectiveProvider } from '../projection/projection.ts';
import { UpstreamFailure, type UpstreamClient } from '../upstream/upstream-client.ts';
import { endpointFor } from '../wires/wires.registry.ts';
import { classifyAnswer, type Classified, type ModelTestOutcome } from './model-test.outcome.ts';

/** Spec Limits: the provider request of a model test has a 30-second maximum deadline and no retry. */
export const MODEL_TEST_DEADLINE_MS = 30_000;
/** What a probe answer may weigh; only its shape is checked (a short speech clip is the largest expected). */
const PROBE_ANSWER_MAX_BYTES = 4 * 1024 * 1024;

export type AvailabilityUpdate = 'unchanged' | 'applied' | 'noop' | 'stale' | 'not_found' | 'invalid';

/** Spec "Model test result". */
export interface ModelTestResult {
  outcome: ModelTestOutcome;
  duration_ms: number;
  http_status: number | null;
  availability_update: AvailabilityUpdate;
}

export interface ModelTestDeps {
  upstream: UpstreamClient;
  policy: PolicyService;
  credentials: CredentialService;
  log: Logger;
  deadlineMs?: number;
}

/** What a finished probe (or a refusal before it) tells the availability write. */
interface ProbeResult extends Classified {
  httpStatus: number | null;
  durationMs: number;
}

const without = (outcome: ModelTestOutcome): ProbeResult => ({ outcome, marksInvalid: false, httpStatus: null, durationMs: 0 });

/** An outbound refusal or transport failure as a model-test outcome. */
function failureOutcome(failure: UpstreamFailure): ModelTestOutcome {
  switch (failure.kind) {
    case 'timed_out':
      return 'timed_out';
    case 'connection_failed':
      return 'connection_failed';
    case 'body_too_large':
      return 'invalid_response';
    case 'url_refused':
    case 'address_refused':
      return 'request_rejected';
  }
}

/**
 * The diagnostic model test (spec Endpoints rule 8): one fixed small request through the model's wire, classified from
 * the HTTP status and the provider's structured error, then at most one availability write checked against the
 * submitted version. No database lock or transaction is held while the probe is in flight; nothing the provider
 * returned (content, error text) is kept, logged or answered.
 */
export function createModelTestService(deps: ModelTestDeps) {
  const { upstream, policy, credentials, log } = deps;
  const deadlineMs = deps.deadlineMs ?? MODEL_TEST_DEADLINE_MS;

  async function probe(accountId: string, provider: EffectiveProvider, model: EffectiveModel): Promise<ProbeResult> {
    const declaration = provider.declaration;
    const composed = model.composed;
    if (!declaration || !composed) return without('not_found');
    // A disabled provider or an unusable credential answers without inference (rule 8).
    if (!provider.policy?.enabled) return without('provider_disabled');
    if (provider.credential.refusal) return without(provider.credential.refusal);
    const adapter = endpointFor(declaration.api_format, composed.workload);
    if (!adapter) return without('model_plane_unavailable');
    const input = adapter.probe(composed);
    if (!input.ok) return without('test_input_unavailable');
    const credential = credentials.wireCredential(accountId, provider);
    if (credential === undefined) return without('credential_unusable');
    let request;
    try {
      request = adapter.build({ baseUrl: declaration.base_url, model: composed, credential }, input.input);
    } catch (error) {
      if (error instanceof AppError && error.code === 'validation_failed') return without('request_invalid');
      throw error;
    }
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const answer = await upstream.send(request, { timeoutMs: deadlineMs, maxBodyBytes: PROBE_ANSWER_MAX_BYTES });
      return { ...classifyAnswer(composed.workload, answer), httpStatus: answer.status, durationMs: elapsed() };
    } catch (error) {
      if (!(error instanceof UpstreamFailure)) throw error;
      return { outcome: failureOutcome(error), marksInvalid: false, httpStatus: null, durationMs: elapsed() };
    }
  }

  /**
   * The availability write a result calls for: success clears the invalid mark, a "model gone" code sets it, every
   * other outcome changes nothing (spec States). Checked against the submitted version, after the probe.
   */
  async function updateAvailability(
    accountId: string,
    provider: EffectiveProvider,
    ref: string,
    result: ProbeResult,
    expected: number | null,
  ): Promise<AvailabilityUpdate> {
    const invalid = result.outcome === 'succeeded' ? false : result.marksInvalid ? true : undefined;
    if (invalid === undefined) return 'unchanged';
    const key = { accountId, providerId: provider.id };
    const absent = invalid
      ? { absent: () => new AppError('not_found', `provider ${provider.id} has no policy to hold the invalid mark`) }
      : { create: () => 'noop' as const };
    try {
      // The policy this request read is handed in: at the submitted version it saves the re-read (one statement).
      const written = await policy.apply(
        key,
        expected,
        absent,
        (current) =>
          current.document.invalid_models.includes(ref) === invalid
            ? 'noop'
            : { enabled: current.enabled, document: withInvalid(current.document, ref, invalid) },
        provider.source === 'removed' ? null : provider.policy,
      );
      return written === 'noop' ? 'noop' : 'applied';
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      if (error.code === 'stale_object') return 'stale';
      if (error.code === 'not_found') return 'not_found';
      if (error.code === 'validation_failed') return 'invalid';
      throw error;
    }
  }

  return {
    /** Runs the test of a live model of `provider`; the caller has resolved the model (unknown refs are 404 there). */
    async run(accountId: string, provider: EffectiveProvider, model: EffectiveModel, expected: number | null): Promise<ModelTestResult> {
      const result = await probe(accountId, provider, model);
      const availability = await updateAvailability(accountId, provider, model.ref, result, expected);
      const answer: ModelTestResult = {
        outcome: result.outcome,
        duration_ms: result.durationMs,
        http_status: result.httpStatus,
        availability_update: availability,
      };
      log.info({ account_id: accountId, provider_id: provider.id, model: model.ref, ...answer }, 'model test finished');
      return answer;
    },
  };
}
