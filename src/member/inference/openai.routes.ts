import { Readable } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type {
  CompletedEmbeddings,
  CompletedTextGeneration,
  InferenceCaller,
  InferenceEngine,
  ModelPlane,
  StreamedTextGeneration,
} from '../../admin/index.ts';
import { AppError } from '../../core/errors.ts';
import { credentialsOf, documentOperation } from '../../core/http/api-route.ts';
import { openAiOperations } from './openai.openapi.ts';
import { requireMemberPlane, type Authenticator } from '../../core/identity/auth.ts';
import { chatCompletionObject, createChunkTranslator, parseChatRequest } from './openai-chat.translate.ts';
import { embeddingsListObject, parseEmbeddingsRequest } from './openai-embeddings.translate.ts';
import { openAiErrorFromAppError, toAppError } from './openai-errors.ts';
import { INFERENCE_BODY_LIMIT_BYTES } from './inference-requests.schemas.ts';

/**
 * The OpenAI-compatible surface of the Agent API (issue 16 item 2): Chat Completions, Embeddings and the model list
 * under `/agent_api/v1`, so an OpenAI client pointed at `${url}/agent_api/v1` works unchanged. Requests are
 * translated to the engine's `InferenceRequest` and answers back; every error on these routes, authentication and
 * body parsing included, is in OpenAI's error shape, which its clients turn into typed errors.
 *
 * These routes follow OpenAI's API rather than the platform's route table (`api-route.ts`), so they are not in the
 * admin service's OpenAPI document.
 */

const BASE = '/agent_api/v1';
const MODELS_PATH = `${BASE}/models`;

export interface OpenAiRoutesDeps {
  engine: InferenceEngine;
  plane: Pick<ModelPlane, 'memberModelsJson'>;
  auth: Pick<Authenticator, 'authenticate'>;
  /** The clock of `created` (Unix seconds in answers); tests pin it. */
  now?: () => number;
}

/**
 * Whether a model-list request asks for OpenAI's shape: `?format=openai`, or OpenAI's client (its SDKs send
 * `x-stainless-lang` and a `user-agent` of `OpenAI/<lang> <version>`). Other clients keep the member discovery shape.
 */
export function wantsOpenAiModelList(headers: Record<string, string | string[] | undefined>, url: string): boolean {
  const agent = headers['user-agent'];
  if (typeof agent === 'string' && agent.startsWith('OpenAI/')) return true;
  if (headers['x-stainless-lang'] !== undefined) return true;
  const q = url.indexOf('?');
  return q !== -1 && new URLSearchParams(url.slice(q + 1)).get('format') === 'openai';
}

/**
 * Routes `GET /agent_api/v1/models` by who asks: the router derives this constraint for every request, so it checks
 * the path first and costs a string comparison elsewhere. Requests that derive nothing take the member route.
 */
const OPENAI_CLIENT_CONSTRAINT = 'openaiModelList';

function addModelListConstraint(app: FastifyInstance): void {
  app.addConstraintStrategy({
    name: OPENAI_CLIENT_CONSTRAINT,
    // A request that derives the value but finds no constrained route (any other path) still takes its plain route.
    mustMatchWhenDerived: false,
    storage() {
      const handlers = new Map<unknown, unknown>();
      return {
        get: (value: unknown) => (handlers.get(value) ?? null) as never,
        set: (value: unknown, handler: unknown) => void handlers.set(value, handler),
      };
    },
    deriveConstraint(req) {
      const url = req.url ?? '';
      if (!url.startsWith(MODELS_PATH) || (url.length > MODELS_PATH.length && url[MODELS_PATH.length] !== '?')) return undefined;
      return wantsOpenAiModelList(req.headers, url) ? 'yes' : undefined;
    },
  });
}

/** Unix seconds. */
function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/**
 * An AbortController aborted when the client goes away before its answer is complete (the response closes
 * unfinished), so the engine aborts the upstream call; a finished answer never aborts.
 */
function abortOnDisconnect(reply: FastifyReply): AbortController {
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller;
}

function isStream(answer: Awaited<ReturnType<InferenceEngine['infer']>>): answer is StreamedTextGeneration {
  return 'deltas' in answer;
}

function isTextGeneration(answer: CompletedTextGeneration | CompletedEmbeddings): answer is CompletedTextGeneration {
  return 'text' in answer.output;
}

/** The engine answered another kind than was asked: a broken contract, never the client's fault. */
function contractBroken(what: string): AppError {
  return new AppError('internal', 'internal server error', { cause: new Error(`the inference engine answered ${what}`) });
}

/** One SSE event. */
function event(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

/** Mounts the OpenAI-compatible routes. Call once per app (it adds the model-list constraint to the app's router). */
export function registerOpenAiRoutes(app: FastifyInstance, deps: OpenAiRoutesDeps): void {
  const now = deps.now ?? Date.now;
  const callers = new WeakMap<FastifyRequest, InferenceCaller>();

  addModelListConstraint(app);
  for (const operation of openAiOperations(BASE)) documentOperation(app, operation);

  // Member-plane and executor tokens only, as on every member route (spec Authentication 6): before the body is
  // parsed, so an unauthenticated caller learns nothing about its body.
  const authenticate = async (request: FastifyRequest): Promise<void> => {
    const principal = requireMemberPlane(await deps.auth.authenticate(credentialsOf(request)));
    callers.set(request, { accountId: principal.accountId, humanId: principal.humanId, credentialId: principal.credentialId });
  };
  const callerOf = (request: FastifyRequest): InferenceCaller => {
    const caller = callers.get(request);
    if (!caller) throw new AppError('unauthorized', 'a valid credential is required');
    return caller;
  };

  const errorHandler = (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const classified = toAppError(error);
    if (classified.internal) request.log.error({ err: error, cause: classified.error.cause }, 'request failed');
    const answer = openAiErrorFromAppError(classified.error);
    for (const [name, value] of Object.entries(answer.headers)) void reply.header(name, value);
    void reply.status(answer.status).header('cache-control', 'no-store').send(answer.body);
  };

  /** A streamed generation as SSE: chunks as they come, the closing chunks once settled, then `[DONE]`. */
  async function* chatEvents(
    request: FastifyRequest,
    answer: StreamedTextGeneration,
    includeUsage: boolean,
    signal: AbortSignal,
  ): AsyncGenerator<string> {
    const translator = createChunkTranslator({ meta: answer.meta, createdSeconds: seconds(now()), includeUsage });
    yield event(translator.start());
    try {
      for await (const delta of answer.deltas) {
        const chunk = translator.delta(delta);
        if (chunk) yield event(chunk);
      }
      for (const chunk of translator.end(await answer.settled)) yield event(chunk);
      yield 'data: [DONE]\n\n';
    } catch (error) {
      if (signal.aborted) return;
      // Headers are gone: OpenAI reports a failure mid-stream as an error event, which its clients raise.
      const classified = toAppError(error);
      if (classified.internal) request.log.error({ err: error }, 'stream failed');
      yield event(openAiErrorFromAppError(classified.error).body);
    }
  }

  app.route({
    method: 'POST',
    url: `${BASE}/chat/completions`,
    bodyLimit: INFERENCE_BODY_LIMIT_BYTES,
    onRequest: async (request) => authenticate(request),
    errorHandler,
    handler: async (request, reply) => {
      const caller = callerOf(request);
      const parsed = parseChatRequest(request.body);
      const controller = abortOnDisconnect(reply);
      const answer = await deps.engine.infer(caller, parsed.request, controller.signal);
      void reply.header('cache-control', 'no-store');
      if (isStream(answer)) {
        if (!parsed.stream) throw contractBroken('a stream to a request without stream');
        void reply.header('content-type', 'text/event-stream; charset=utf-8').header('x-accel-buffering', 'no');
        return reply.send(Readable.from(chatEvents(request, answer, parsed.includeUsage, controller.signal), { objectMode: false }));
      }
      if (!isTextGeneration(answer)) throw contractBroken('embeddings to a chat request');
      if (parsed.stream) throw contractBroken('a completed answer to a stream request');
      return chatCompletionObject(answer, seconds(now()));
    },
  });

  app.route({
    method: 'POST',
    url: `${BASE}/embeddings`,
    bodyLimit: INFERENCE_BODY_LIMIT_BYTES,
    onRequest: async (request) => authenticate(request),
    errorHandler,
    handler: async (request, reply) => {
      const caller = callerOf(request);
      const parsed = parseEmbeddingsRequest(request.body);
      const controller = abortOnDisconnect(reply);
      const answer = await deps.engine.infer(caller, parsed.request, controller.signal);
      if (isStream(answer) || isTextGeneration(answer)) throw contractBroken('a text generation to an embeddings request');
      void reply.header('cache-control', 'no-store');
      return embeddingsListObject(answer, parsed.encoding);
    },
  });

  // OpenAI's list shape of the models an Agent may call now: visible and available. OpenAI's `created` is when the
  // model was published; the platform does not know it, so it is 0.
  app.route({
    method: 'GET',
    url: MODELS_PATH,
    constraints: { [OPENAI_CLIENT_CONSTRAINT]: 'yes' },
    onRequest: async (request) => authenticate(request),
    errorHandler,
    handler: async (request, reply) => {
      const caller = callerOf(request);
      const body = await deps.plane.memberModelsJson(caller.accountId, { available: true });
      const { models } = JSON.parse(body.json.toString('utf8')) as { models: { ref: string; provider_id: string }[] };
      void reply.header('cache-control', 'no-store');
      return { object: 'list', data: models.map((m) => ({ id: m.ref, object: 'model', created: 0, owned_by: m.provider_id })) };
    },
  });
}
