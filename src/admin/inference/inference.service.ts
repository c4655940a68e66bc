import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { AdminTables } from '../admin.table.ts';
import { setUnavailableUntil } from '../policy/policy.store.ts';
import type { EffectiveProvider } from '../projection/projection.ts';
import type { TokenCounters } from '../tokens/token-counter.ts';
import { UpstreamFailure, type UpstreamClient } from '../upstream/upstream-client.ts';
import type { FinishReason, StreamDecoder, TextDelta, UpstreamRequest, WireCredential, WireUsage } from '../wires/wire.types.ts';
import { endpointFor } from '../wires/wires.registry.ts';
import { admit, firstKnownRef, type AdmittedModel } from './admission.ts';
import { estimateCost } from './cost.ts';
import type { InferenceLimiter, StreamSlot } from './inference.limits.ts';
import { rateLimitWaitMs, transportFailure, unreadableAnswer, upstreamRefusal } from './execution.ts';
import type { ComposedModel } from '../catalog/catalog.compose.ts';
import { checkedParameters, checkFitBounded, estimateChatInput, estimateEmbeddingsInput } from './fitting.ts';
import type {
  CompletedEmbeddings,
  CompletedTextGeneration,
  EmbeddingsRequest,
  InferenceCaller,
  InferenceCost,
  InferenceEngine,
  InferenceMeta,
  InferenceRequest,
  StreamedTextGeneration,
  TextGenerationRequest,
  StreamSettlement,
} from './inference.types.ts';
import { createUsageWriter, type UsageOutcome } from './usage.store.ts';

/** Spec-free bound on a non-streamed answer (a long completion or a batch of embeddings fits well inside). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** What a streamed call's error answer may weigh: only its status and structured code are read. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** The names catalogs give the vector size of embeddings (OpenAI's, then Gemini's). */
const DIMENSION_PARAMETERS = ['dimensions', 'output_dimensionality'] as const;

/**
 * The embeddings call's parameters, with the OpenAI surface's `dimensions` under the name the model declares for
 * the vector size; a model that declares none refuses it, as an undeclared parameter.
 */
export function embeddingsParameters(composed: ComposedModel, input: EmbeddingsRequest): Record<string, unknown> {
  const parameters = { ...input.parameters };
  if (input.dimensions === undefined) return parameters;
  const table = composed.capabilities.generation_parameters;
  const name = DIMENSION_PARAMETERS.find((n) => Object.hasOwn(table, n));
  if (name === undefined)
    throw new AppError('parameter_invalid', `dimensions: the model ${composed.ref} declares no vector size parameter`);
  if (Object.hasOwn(parameters, name)) throw new AppError('parameter_invalid', `parameters.${name}: given twice`);
  parameters[name] = input.dimensions;
  return parameters;
}

/**
 * An effort the model does not declare is the caller's 400 naming the field, as an undeclared parameter is, before
 * the wire's own check (which would answer 422, a status the OpenAI surface does not use).
 */
function checkReasoningEffort(composed: ComposedModel, reasoning: TextGenerationRequest['reasoning']): void {
  if (reasoning === undefined) return;
  const declared = composed.capabilities.reasoning;
  if (!declared) throw new AppError('parameter_invalid', `reasoning.effort: the model ${composed.ref} declares no reasoning support`);
  if (!declared.efforts?.includes(reasoning.effort))
    throw new AppError('parameter_invalid', `reasoning.effort: not an effort the model ${composed.ref} declares`);
}

/** `PLATFORM_INFERENCE_TIMEOUT_MS` default. */
export const INFERENCE_TIMEOUT_MS = 120_000;

export interface InferenceServiceDeps {
  db: Kysely<AdminTables>;
  clock: Clock;
  log: Logger;
  upstream: UpstreamClient;
  /** `PLATFORM_INFERENCE_TIMEOUT_MS`: the deadline of one call, a streamed answer included. */
  timeoutMs: number;
  tokenCounters: TokenCounters;
  /**
   * The request's projection read (policy, credentials, admission floor as of now) and the Account's cost unit,
   * from the same read of the Account's state.
   */
  accountOf(accountId: string): Promise<{ providers: EffectiveProvider[]; costUnit: string | null }>;
  wireCredential(accountId: string, provider: EffectiveProvider): Promise<WireCredential | undefined>;
  /** Per-credential request rate and concurrent streams (issue 16 item 7). */
  limiter: InferenceLimiter;
}

/** One call's bookkeeping: who, which model, when; finished once by `settle`. */
interface Call {
  id: string;
  caller: InferenceCaller;
  admitted: AdmittedModel;
  startedAt: number;
  started: number;
  streamed: boolean;
  /** The Account's cost unit, from the request's state read (null until configured). */
  costUnit: string | null;
}

/**
 * The model plane's execution path (issue 16 items 3–6): selection and admission against the request's projection
 * read, parameter checks and fitting before any upstream call, the call through the model's wire with the stored
 * credential and the inference deadline, and one usage row per request once the call ended (a client that went away
 * mid-stream included). A started call is never cancelled by a policy change: admission is decided once, before the
 * request is sent. Nothing of the prompt or the output is logged or stored.
 */
export function createInferenceService(deps: InferenceServiceDeps): InferenceEngine {
  const { db, clock, log, upstream } = deps;
  const usageRows = createUsageWriter(db);
  async function settle(call: Call, outcome: UsageOutcome, usage: WireUsage | null, cost: InferenceCost | null): Promise<void> {
    const durationMs = Math.round(performance.now() - call.started);
    const { model } = call.admitted;
    try {
      await usageRows.write({
        id: call.id,
        accountId: call.caller.accountId,
        humanId: call.caller.humanId,
        credentialId: call.caller.credentialId,
        model: model.ref,
        modelIdentity: model.composed.capabilities.model_identity,
        workload: model.composed.workload,
        inputTokens: usage?.input_tokens ?? null,
        outputTokens: usage?.output_tokens ?? null,
        cachedInputTokens: usage?.cached_input_tokens ?? null,
        cost,
        startedAt: call.startedAt,
        durationMs,
        outcome,
        streamed: call.streamed,
      });
    } catch (error) {
      // The answer is already decided (or sent); a lost row is logged, never turned into a failed call.
      log.error({ err: error, request_id: call.id }, 'an inference usage row could not be written');
    }
    log.info(
      {
        request_id: call.id,
        account_id: call.caller.accountId,
        human_id: call.caller.humanId,
        model: model.ref,
        outcome,
        streamed: call.streamed,
        duration_ms: durationMs,
        input_tokens: usage?.input_tokens ?? null,
        output_tokens: usage?.output_tokens ?? null,
      },
      'inference request finished',
    );
  }

  function costOf(call: Call, usage: WireUsage | null): InferenceCost | null {
    const pricing = call.admitted.model.composed.pricing;
    if (usage === null || pricing === null) return null;
    return estimateCost(pricing, call.costUnit, usage);
  }

  /**
   * What a call the provider answered with an error costs: nothing (providers do not bill a refused request), known
   * exactly when the Account has a cost unit, so such rows do not make a day's total unknown.
   */
  function noCharge(call: Call): InferenceCost | null {
    return call.costUnit === null ? null : { amount: '0', unit: call.costUnit };
  }

  /** Records a refusal under its error code and rethrows it. */
  async function refused(call: Call, error: unknown): Promise<never> {
    if (error instanceof AppError) await settle(call, error.code, null, null);
    throw error;
  }

  /** An upstream 429: the provider's admission floor moves (visible on its row), and the caller hears the wait. */
  async function rateLimited(call: Call, answer: { headers: Record<string, string>; body: Uint8Array }): Promise<never> {
    const now = clock.now();
    const waitMs = rateLimitWaitMs(answer.headers, answer.body, now);
    const provider = call.admitted.provider;
    await setUnavailableUntil(db, { accountId: call.caller.accountId, providerId: provider.id }, now + waitMs, now);
    await settle(call, 'rate_limited', null, noCharge(call));
    throw new AppError(
      'rate_limited',
      `provider ${provider.id} is rate limiting this Account; it admits calls again in ${Math.ceil(waitMs / 1000)} s`,
      {
        headers: { 'retry-after': String(Math.ceil(waitMs / 1000)) },
      },
    );
  }

  async function failedToSend(call: Call, error: unknown, signal: AbortSignal): Promise<never> {
    if (!(error instanceof UpstreamFailure)) throw error;
    await settle(call, signal.aborted ? 'aborted' : 'failed', null, null);
    throw transportFailure(call.admitted.provider.id, error);
  }

  async function refusedUpstream(
    call: Call,
    answer: { status: number; headers: Record<string, string>; body: Uint8Array },
  ): Promise<never> {
    if (answer.status === 429) return rateLimited(call, answer);
    await settle(call, 'failed', null, noCharge(call));
    throw upstreamRefusal(call.admitted.model.composed.workload, call.admitted.provider.id, answer);
  }

  function metaOf(call: Call): InferenceMeta {
    const { model } = call.admitted;
    return {
      request_id: call.id,
      model: model.ref,
      model_identity: model.composed.capabilities.model_identity,
      workload: model.composed.workload,
    };
  }

  /** Everything before the upstream call: parameters, fitting, credential and the built request. Throws the refusal. */
  async function prepare(call: Call, request: InferenceRequest): Promise<UpstreamRequest> {
    const { provider, model } = call.admitted;
    const composed = model.composed;
    const counter = deps.tokenCounters.resolve(composed.capabilities.token_counter);
    if (!counter.available) throw new AppError('model_unavailable', `the token counter of ${model.ref} is unavailable: ${counter.reason}`);
    const baseUrl = provider.declaration.base_url;
    const input = request.input;
    let build: (credential: WireCredential) => UpstreamRequest;
    if (input.workload === 'text_generation') {
      const adapter = endpointFor(provider.declaration.api_format, 'text_generation');
      if (!adapter) throw new AppError('model_unavailable', `${model.ref}: its wire has no text generation endpoint`);
      if (input.stream && !adapter.streamDecoder) throw new AppError('parameter_invalid', `stream: ${model.ref} cannot stream on its wire`);
      const parameters = checkedParameters(composed, input.parameters, input.max_output_tokens);
      checkReasoningEffort(composed, input.reasoning);
      const declared = composed.capabilities.generation_parameters.max_output_tokens?.default;
      const maxOutput =
        typeof parameters.max_output_tokens === 'number'
          ? parameters.max_output_tokens
          : typeof declared === 'number'
            ? declared
            : adapter.defaultMaxOutput?.(composed);
      checkFitBounded(composed, counter.counter, (c) => estimateChatInput(c, input.messages, input.tools), maxOutput);
      build = (credential) =>
        adapter.build(
          { baseUrl, model: composed, credential },
          {
            messages: input.messages,
            parameters,
            ...(input.tools?.length ? { tools: input.tools } : {}),
            ...(input.tool_choice !== undefined ? { tool_choice: input.tool_choice } : {}),
            ...(input.reasoning ? { reasoning: input.reasoning } : {}),
            stream: input.stream,
          },
        );
    } else {
      const adapter = endpointFor(provider.declaration.api_format, 'embeddings');
      if (!adapter) throw new AppError('model_unavailable', `${model.ref}: its wire has no embeddings endpoint`);
      const parameters = checkedParameters(composed, embeddingsParameters(composed, input));
      checkFitBounded(composed, counter.counter, (c) => estimateEmbeddingsInput(c, input.input), undefined);
      build = (credential) => adapter.build({ baseUrl, model: composed, credential }, { input: input.input, parameters });
    }
    const credential = await deps.wireCredential(call.caller.accountId, provider);
    if (credential === undefined)
      throw new AppError('model_unavailable', `${model.ref}: credential_unusable (the stored credential does not open)`);
    return build(credential);
  }

  async function complete(call: Call, request: InferenceRequest, upstreamRequest: UpstreamRequest, signal: AbortSignal) {
    const { provider } = call.admitted;
    let answer;
    try {
      answer = await upstream.send(upstreamRequest, { timeoutMs: deps.timeoutMs, maxBodyBytes: MAX_ANSWER_BYTES, signal });
    } catch (error) {
      return failedToSend(call, error, signal);
    }
    if (answer.status < 200 || answer.status >= 300) return refusedUpstream(call, answer);
    let completed: { output: CompletedTextGeneration['output'] | CompletedEmbeddings['output']; embeddings: boolean };
    try {
      const format = provider.declaration.api_format;
      if (request.input.workload === 'embeddings') {
        const adapter = endpointFor(format, 'embeddings');
        if (!adapter) throw new Error('no embeddings endpoint');
        completed = { output: adapter.parse({ body: answer.body, headers: answer.headers }), embeddings: true };
      } else {
        const adapter = endpointFor(format, 'text_generation');
        if (!adapter) throw new Error('no text generation endpoint');
        completed = { output: adapter.parse({ body: answer.body, headers: answer.headers }), embeddings: false };
      }
    } catch {
      await settle(call, 'failed', null, null);
      throw unreadableAnswer(provider.id);
    }
    const usage = completed.output.usage ?? null;
    const cost = costOf(call, usage);
    await settle(call, 'succeeded', usage, cost);
    const meta = metaOf(call);
    return completed.embeddings
      ? ({ meta, output: completed.output, usage, cost } as CompletedEmbeddings)
      : ({ meta, output: completed.output, usage, cost } as CompletedTextGeneration);
  }

  async function stream(call: Call, upstreamRequest: UpstreamRequest, signal: AbortSignal): Promise<StreamedTextGeneration> {
    const { provider } = call.admitted;
    const adapter = endpointFor(provider.declaration.api_format, 'text_generation');
    const decoder = adapter?.streamDecoder?.();
    if (!decoder) throw new AppError('internal', 'the streaming decoder vanished between preparing and sending');
    // Taken last, after every refusal that needs no upstream call; a refusal here is not a request and writes no row.
    const slot = await deps.limiter.openStream(call.caller.credentialId);
    let response;
    try {
      response = await upstream.stream(upstreamRequest, { timeoutMs: deps.timeoutMs, maxErrorBodyBytes: MAX_ERROR_BODY_BYTES, signal });
    } catch (error) {
      await slot.release();
      return failedToSend(call, error, signal);
    }
    if (response.status < 200 || response.status >= 300) {
      await slot.release();
      const chunks: Uint8Array[] = [];
      try {
        for await (const chunk of response.body) chunks.push(chunk);
      } catch (error) {
        return failedToSend(call, error, signal);
      }
      return refusedUpstream(call, { status: response.status, headers: response.headers, body: Buffer.concat(chunks) });
    }
    return streaming(call, response.body, decoder, slot, signal);
  }

  /** The open stream: its deltas, and its settlement once it ended (the slot given back, the usage row written). */
  function streaming(
    call: Call,
    body: AsyncIterable<Uint8Array>,
    decoder: StreamDecoder,
    slot: StreamSlot,
    signal: AbortSignal,
  ): StreamedTextGeneration {
    const { provider } = call.admitted;
    let resolveSettled!: (settlement: StreamSettlement) => void;
    const settled = new Promise<StreamSettlement>((resolve) => (resolveSettled = resolve));

    async function* deltas(): AsyncGenerator<TextDelta> {
      // A consumer that stops iterating early (the client went away) leaves this as `aborted`.
      let outcome: UsageOutcome = 'aborted';
      let finishReason: FinishReason | null = null;
      let usage: WireUsage | null = null;
      const note = (delta: TextDelta) => {
        if (delta.type === 'finish') finishReason = delta.finish_reason;
        else if (delta.type === 'usage') usage = delta.usage;
      };
      try {
        try {
          for await (const chunk of body) {
            for (const delta of decoder.push(chunk)) {
              note(delta);
              yield delta;
            }
          }
          for (const delta of decoder.end()) {
            note(delta);
            yield delta;
          }
          outcome = 'succeeded';
        } catch (error) {
          outcome = signal.aborted ? 'aborted' : 'failed';
          if (error instanceof UpstreamFailure) throw transportFailure(provider.id, error);
          if (error instanceof AppError) throw error;
          throw unreadableAnswer(provider.id);
        }
      } finally {
        // Leaving early (return) must also end the upstream request: stop reading its body.
        if (outcome === 'aborted') await body[Symbol.asyncIterator]().return?.();
        await slot.release();
        // Cut short, the call still cost what the provider reported before the cut.
        if (usage === null && outcome !== 'succeeded') usage = decoder.usageSoFar?.() ?? null;
        const cost = costOf(call, usage);
        await settle(call, outcome, usage, cost);
        resolveSettled({ finish_reason: finishReason, usage, cost });
      }
    }

    return { meta: metaOf(call), deltas: deltas(), settled };
  }

  return {
    async infer(caller, request, signal) {
      // The rate is counted first in effect: a credential over it writes no usage row and hears nothing else. The
      // projection read goes out beside the count rather than after it (one round trip less on PostgreSQL); when
      // the count refuses, that read is simply dropped.
      const counted = deps.limiter.admitRequest(caller.credentialId);
      const read = deps.accountOf(caller.accountId);
      read.catch(() => undefined);
      await counted;
      const workload = request.input.workload;
      const { providers, costUnit } = await read;
      const callOf = (admitted: AdmittedModel): Call => ({
        id: randomUUID(),
        caller,
        admitted,
        startedAt: clock.now(),
        started: performance.now(),
        streamed: workload === 'text_generation' && request.input.workload === 'text_generation' && request.input.stream,
        costUnit,
      });
      let admitted: AdmittedModel;
      try {
        admitted = admit(providers, request.models, workload);
      } catch (error) {
        const first = firstKnownRef(providers, request.models, workload);
        if (first && error instanceof AppError && error.code === 'model_unavailable') return refused(callOf(first), error);
        throw error;
      }
      const call = callOf(admitted);
      let upstreamRequest: UpstreamRequest;
      try {
        upstreamRequest = await prepare(call, request);
      } catch (error) {
        return refused(call, error);
      }
      if (call.streamed) return stream(call, upstreamRequest, signal);
      return complete(call, request, upstreamRequest, signal);
    },
  };
}
