import { once } from 'node:events';
import type { FastifyReply } from 'fastify';
import type {
  CompletedEmbeddings,
  CompletedTextGeneration,
  InferenceCaller,
  InferenceRequest,
  ModelPlane,
  StreamedTextGeneration,
} from '../../admin/index.ts';
import { defineRoute, type AnyApiRoute } from '../../core/http/api-route.ts';
import { AppError, errorEnvelope, INTERNAL_MESSAGE } from '../../core/errors.ts';
import type { Principal } from '../../core/identity/identity.model.ts';
import {
  INFERENCE_BODY_LIMIT_BYTES,
  inferenceRequestBodySchema,
  inferenceResponseSchema,
  type InferenceRequestBody,
} from './inference-requests.schemas.ts';

function callerOf(principal: Principal): InferenceCaller {
  return { accountId: principal.accountId, humanId: principal.humanId, credentialId: principal.credentialId };
}

function requestOf(body: InferenceRequestBody): InferenceRequest {
  const models = body.models ?? (body.model !== undefined ? [body.model] : []);
  if (body.workload === 'embeddings') {
    const texts = typeof body.input === 'string' ? [body.input] : (body.input ?? []);
    return { models, input: { workload: 'embeddings', input: texts, ...(body.parameters ? { parameters: body.parameters } : {}) } };
  }
  return {
    models,
    input: {
      workload: 'text_generation',
      // The schema's optional fields are `T | undefined`; the contract's are absent instead (exactOptionalPropertyTypes).
      messages: (body.messages ?? []).map((m) => ({
        role: m.role,
        content: m.content,
        ...(m.tool_calls ? { tool_calls: m.tool_calls } : {}),
        ...(m.tool_call_id !== undefined ? { tool_call_id: m.tool_call_id } : {}),
        ...(m.name !== undefined ? { name: m.name } : {}),
      })),
      ...(body.tools
        ? {
            tools: body.tools.map((t) => ({
              name: t.name,
              parameters: t.parameters,
              ...(t.description !== undefined ? { description: t.description } : {}),
            })),
          }
        : {}),
      ...(body.tool_choice !== undefined ? { tool_choice: body.tool_choice } : {}),
      ...(body.parameters ? { parameters: body.parameters } : {}),
      ...(body.max_output_tokens !== undefined ? { max_output_tokens: body.max_output_tokens } : {}),
      ...(body.reasoning ? { reasoning: body.reasoning } : {}),
      stream: body.stream,
    },
  };
}

function answerOf(result: CompletedTextGeneration | CompletedEmbeddings) {
  const { meta, usage, cost } = result;
  const head = { request_id: meta.request_id, model: meta.model, model_identity: meta.model_identity, workload: meta.workload };
  if ('embeddings' in result.output) return { ...head, embeddings: result.output.embeddings, usage, cost };
  const output = result.output;
  return { ...head, text: output.text, tool_calls: output.tool_calls, finish_reason: output.finish_reason, usage, cost };
}

/**
 * Writes a streamed call as Server-Sent Events: `start` (the request id, model ref and identity), one `delta` per text
 * or tool-call piece, then `done` (finish reason, usage, cost) or `error` (`{error:{code,message}}`). The reply is
 * taken from Fastify (hijacked) because the route table answers JSON; refusals before the stream started were thrown
 * as ordinary JSON errors. A client that goes away stops the loop, which ends the upstream call (its usage settles).
 */
async function sendEvents(reply: FastifyReply, result: StreamedTextGeneration, signal: AbortSignal): Promise<void> {
  const raw = reply.raw;
  reply.hijack();
  raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
  const gone = () => raw.destroyed || raw.writableEnded || signal.aborted;
  const send = async (event: string, data: unknown): Promise<void> => {
    if (gone()) return;
    if (!raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)) await Promise.race([once(raw, 'drain'), once(raw, 'close')]);
  };
  const { meta } = result;
  try {
    await send('start', { request_id: meta.request_id, model: meta.model, model_identity: meta.model_identity });
    for await (const delta of result.deltas) {
      if (gone()) break;
      if (delta.type === 'text' || delta.type === 'tool_call') await send('delta', delta);
    }
    const settlement = await result.settled;
    await send('done', settlement);
  } catch (error) {
    const known = error instanceof AppError;
    if (!known) reply.log.error({ err: error, request_id: meta.request_id }, 'a streamed inference failed');
    await send('error', known ? errorEnvelope(error.code, error.message) : errorEnvelope('internal', INTERNAL_MESSAGE));
  } finally {
    if (!raw.destroyed) raw.end();
  }
}

/** `POST /agent_api/v1/inference_requests`: the native InferenceRequest for member-plane and executor tokens. */
export function inferenceRequestRoutes(plane: ModelPlane, base: string): AnyApiRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: `${base}/inference_requests`,
      operationId: 'memberCreateInferenceRequest',
      summary: 'Runs one inference request on the first admissible candidate model (JSON, or Server-Sent Events with stream: true)',
      description:
        'Platform credentials and sessions are refused (spec Authentication 6). A streamed answer is text/event-stream with the events start, delta, done or error.',
      tag: 'member',
      auth: 'member',
      bodyLimit: INFERENCE_BODY_LIMIT_BYTES,
      body: inferenceRequestBodySchema,
      response: inferenceResponseSchema,
      errors: [
        'not_found',
        'model_unavailable',
        'context_length_exceeded',
        'validation_failed',
        'rate_limited',
        'provider_error',
        'deadline_exceeded',
        'model_plane_unavailable',
      ],
      handler: async ({ principal, body, reply }) => {
        // The client going away (its connection closed before the answer finished) cancels the upstream call.
        const controller = new AbortController();
        const onClose = (): void => {
          if (!reply.raw.writableFinished) controller.abort();
        };
        reply.raw.on('close', onClose);
        const result = await plane.infer(callerOf(principal), requestOf(body), controller.signal);
        if ('deltas' in result) {
          await sendEvents(reply, result, controller.signal);
          return undefined;
        }
        return answerOf(result);
      },
    }),
  ];
}
