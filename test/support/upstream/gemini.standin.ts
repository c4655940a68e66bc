import { json, Refusal, sse, tokenEstimate, vectorFor } from './answers.ts';
import { directoryAnswer, offsetOfToken, pageAt, pageToken, positiveInteger } from './directory-paging.ts';
import type { DialectModule, ErrorSpec, RawAnswer, RecordedRequest, StandinModel, StandinState } from './standin.types.ts';

/**
 * The Gemini API (`generativelanguage.googleapis.com/v1beta`): the key in `x-goog-api-key` or `?key=` (or an OAuth
 * bearer), errors as Google's `{"error":{"code","message","status","details"}}`, methods as `models/{id}:{method}`,
 * the directory `GET /v1beta/models?pageSize&pageToken` → `{models:[{name:"models/…"}], nextPageToken}`. Unknown JSON
 * fields are refused, as Google's proto-backed JSON parser refuses them.
 */

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 1000;
const TROUBLESHOOTING = 'https://developers.generativeai.google/guide/troubleshooting';
const QUOTA_MESSAGE =
  'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.';

/** The models of `catalog/gemini.yaml`, by upstream id. */
const DEFAULT_MODELS: readonly StandinModel[] = [
  { id: 'gemini-2.5-pro', display_name: 'Gemini 2.5 Pro' },
  { id: 'gemini-2.5-flash', display_name: 'Gemini 2.5 Flash' },
  { id: 'gemini-2.5-flash-lite', display_name: 'Gemini 2.5 Flash-Lite' },
  { id: 'gemini-embedding-001', display_name: 'Gemini Embedding 001' },
];

const err = (spec: Omit<ErrorSpec, 'dialect'>): ErrorSpec => ({ dialect: 'gemini', ...spec });

const quotaFailure = (quotaId: string, model: string) => ({
  '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
  violations: [
    {
      quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
      quotaId,
      quotaDimensions: { location: 'global', model },
      quotaValue: '10',
    },
  ],
});

/** Google's errors as the Gemini API gives them (google.rpc.Status with typed details), for `Standin.fail`. */
export const GEMINI_ERRORS = {
  invalidArgument: (message = 'Request contains an invalid argument.'): ErrorSpec =>
    err({ status: 400, type: 'INVALID_ARGUMENT', message }),
  /** An invalid key is HTTP 400 INVALID_ARGUMENT, not 401: only `details[].reason` says it is the key. */
  apiKeyInvalid: (): ErrorSpec =>
    err({
      status: 400,
      type: 'INVALID_ARGUMENT',
      message: 'API key not valid. Please pass a valid API key.',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'API_KEY_INVALID',
          domain: 'googleapis.com',
          metadata: { service: 'generativelanguage.googleapis.com' },
        },
        {
          '@type': 'type.googleapis.com/google.rpc.LocalizedMessage',
          locale: 'en-US',
          message: 'API key not valid. Please pass a valid API key.',
        },
      ],
    }),
  /** 400 FAILED_PRECONDITION: the API is not offered where the caller is. */
  locationNotSupported: (): ErrorSpec =>
    err({ status: 400, type: 'FAILED_PRECONDITION', message: 'User location is not supported for the API use.' }),
  /** 401 for an OAuth token that is not valid. */
  unauthenticated: (): ErrorSpec =>
    err({
      status: 401,
      type: 'UNAUTHENTICATED',
      message:
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
    }),
  permissionDenied: (): ErrorSpec => err({ status: 403, type: 'PERMISSION_DENIED', message: 'The caller does not have permission' }),
  notFound: (model: string, method = 'generateContent'): ErrorSpec =>
    err({
      status: 404,
      type: 'NOT_FOUND',
      message: `models/${model} is not found for API version v1beta, or is not supported for ${method}. Call ListModels to see the list of available models and their supported methods.`,
    }),
  /** 429 for a per-minute quota: RetryInfo says when to come back. */
  rateLimited: (retryDelaySeconds = 17, model = 'gemini-2.5-flash'): ErrorSpec =>
    err({
      status: 429,
      type: 'RESOURCE_EXHAUSTED',
      message: QUOTA_MESSAGE,
      details: [
        quotaFailure('GenerateRequestsPerMinutePerProjectPerModel-FreeTier', model),
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryDelaySeconds}s` },
      ],
    }),
  /** 429 for a per-day quota: the same status and message as the rate limit; only the quota id differs, and no RetryInfo. */
  quotaExhausted: (model = 'gemini-2.5-flash'): ErrorSpec =>
    err({
      status: 429,
      type: 'RESOURCE_EXHAUSTED',
      message: QUOTA_MESSAGE,
      details: [quotaFailure('GenerateRequestsPerDayPerProjectPerModel-FreeTier', model)],
    }),
  internal: (): ErrorSpec =>
    err({ status: 500, type: 'INTERNAL', message: `An internal error has occurred. Please retry or report in ${TROUBLESHOOTING}` }),
  unavailable: (): ErrorSpec => err({ status: 503, type: 'UNAVAILABLE', message: 'The model is overloaded. Please try again later.' }),
} as const;

function defaultsFor(status: number): { type: string; message: string } {
  if (status === 401) return { type: 'UNAUTHENTICATED', message: 'Request had invalid authentication credentials.' };
  if (status === 403) return { type: 'PERMISSION_DENIED', message: 'The caller does not have permission' };
  if (status === 404) return { type: 'NOT_FOUND', message: 'Requested entity was not found.' };
  if (status === 429) return { type: 'RESOURCE_EXHAUSTED', message: 'Resource has been exhausted (e.g. check quota).' };
  if (status === 503) return { type: 'UNAVAILABLE', message: 'The model is overloaded. Please try again later.' };
  if (status === 504) return { type: 'DEADLINE_EXCEEDED', message: 'Deadline expired before operation could complete.' };
  if (status >= 500) return { type: 'INTERNAL', message: `An internal error has occurred. Please retry or report in ${TROUBLESHOOTING}` };
  return { type: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument.' };
}

const JSON_TYPE = { 'content-type': 'application/json; charset=UTF-8' };

function error(spec: ErrorSpec, _state: StandinState): RawAnswer {
  const usual = defaultsFor(spec.status);
  const body = {
    error: {
      code: spec.status,
      message: spec.message ?? usual.message,
      status: spec.type ?? usual.type,
      ...(spec.details !== undefined ? { details: spec.details } : {}),
    },
  };
  return json(spec.status, body, { ...JSON_TYPE, ...spec.headers });
}

function refuse(spec: ErrorSpec, state: StandinState): never {
  throw new Refusal(error(spec, state));
}

const invalid = (message: string): ErrorSpec => ({ status: 400, type: 'INVALID_ARGUMENT', message });
const bare = (id: string) => id.replace(/^models\//, '');
const ok = (body: unknown) => json(200, body, JSON_TYPE);

/** The fields of GenerateContentRequest and GenerationConfig (v1beta); anything else is an unknown name. */
const REQUEST_FIELDS = new Set([
  'contents',
  'tools',
  'toolConfig',
  'safetySettings',
  'systemInstruction',
  'generationConfig',
  'cachedContent',
]);
const GENERATION_FIELDS = new Set([
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'responseModalities',
  'candidateCount',
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseLogprobs',
  'logprobs',
  'enableEnhancedCivicAnswers',
  'speechConfig',
  'thinkingConfig',
  'mediaResolution',
]);

function listEntry(model: StandinModel): Record<string, unknown> {
  const id = bare(model.id);
  const embedding = id.includes('embedding');
  const name = model.display_name === undefined ? id : model.display_name;
  return {
    name: `models/${id}`,
    version: '001',
    ...(name !== null ? { displayName: name } : {}),
    description: `Stand-in of ${id}`,
    inputTokenLimit: embedding ? 2048 : 1_048_576,
    outputTokenLimit: embedding ? 1 : 65_536,
    supportedGenerationMethods: embedding ? ['embedContent', 'countTextTokens', 'countTokens'] : ['generateContent', 'countTokens'],
  };
}

function directory(request: RecordedRequest, state: StandinState): RawAnswer {
  const asked = positiveInteger(request.query.pageSize);
  const size = Math.min(state.directory.pageSize ?? Infinity, asked === undefined ? DEFAULT_PAGE_SIZE : Math.min(asked, MAX_PAGE_SIZE));
  const token = request.query.pageToken;
  const offset = token === undefined || token === '' ? 0 : offsetOfToken(token);
  if (offset === undefined) refuse(invalid('Invalid page token.'), state);
  const outcome = pageAt(state.models, state.directory, offset, size);
  if (!outcome.ok) return error(outcome.error ?? { status: 500 }, state);
  const { rows, next } = outcome.page;
  // `missing` cannot reach here: the server refuses that fault for Gemini.
  const more = typeof next === 'number' ? { nextPageToken: pageToken(next) } : {};
  return directoryAnswer({ models: rows.map(listEntry), ...more }, state.directory, JSON_TYPE);
}

function jsonObject(request: RecordedRequest, state: StandinState): Record<string, unknown> {
  const body = request.json;
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
  return refuse(invalid('Invalid JSON payload received. Unexpected token.'), state);
}

function checkFields(body: Record<string, unknown>, state: StandinState): void {
  for (const name of Object.keys(body))
    if (!REQUEST_FIELDS.has(name)) refuse(invalid(`Invalid JSON payload received. Unknown name "${name}": Cannot find field.`), state);
  const config = body.generationConfig;
  if (typeof config === 'object' && config !== null)
    for (const name of Object.keys(config))
      if (!GENERATION_FIELDS.has(name))
        refuse(invalid(`Invalid JSON payload received. Unknown name "${name}" at 'generation_config': Cannot find field.`), state);
}

function generateContent(request: RecordedRequest, model: StandinModel, stream: boolean, state: StandinState): RawAnswer {
  const body = jsonObject(request, state);
  checkFields(body, state);
  if (!Array.isArray(body.contents) || body.contents.length === 0)
    refuse(invalid('* GenerateContentRequest.contents: contents is not specified\n'), state);
  const promptTokenCount = tokenEstimate(JSON.stringify([body.systemInstruction ?? '', body.contents]));
  const candidatesTokenCount = tokenEstimate(state.reply);
  const answer = {
    candidates: [{ content: { parts: [{ text: state.reply }], role: 'model' }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount, candidatesTokenCount, totalTokenCount: promptTokenCount + candidatesTokenCount },
    modelVersion: bare(model.id),
    responseId: state.nextId(),
  };
  if (!stream) return ok(answer);
  return request.query.alt === 'sse' ? sse([{ data: answer }]) : ok([answer]);
}

function contentText(content: unknown): string | undefined {
  const parts = (content as { parts?: unknown } | undefined)?.parts;
  if (!Array.isArray(parts)) return undefined;
  return parts.map((p: unknown) => ((p as { text?: unknown }).text ?? '') as string).join('');
}

function embedContent(request: RecordedRequest, state: StandinState): RawAnswer {
  const body = jsonObject(request, state);
  const text = contentText(body.content);
  if (text === undefined) refuse(invalid('* EmbedContentRequest.content: content is not specified\n'), state);
  const dimensions = typeof body.outputDimensionality === 'number' ? body.outputDimensionality : 8;
  return ok({ embedding: { values: vectorFor(text, dimensions) } });
}

function batchEmbedContents(request: RecordedRequest, model: StandinModel, state: StandinState): RawAnswer {
  const body = jsonObject(request, state);
  const requests = body.requests;
  if (!Array.isArray(requests) || requests.length === 0)
    refuse(invalid('* BatchEmbedContentsRequest.requests: requests is not specified\n'), state);
  const name = `models/${bare(model.id)}`;
  const values = requests.map((entry: unknown, i) => {
    const one = (entry ?? {}) as { model?: unknown; content?: unknown; outputDimensionality?: unknown };
    if (one.model !== name)
      refuse(invalid(`* BatchEmbedContentsRequest.requests[${i}].model: model must be the batch's model, ${name}\n`), state);
    const text = contentText(one.content);
    if (text === undefined) refuse(invalid(`* BatchEmbedContentsRequest.requests[${i}].content: content is not specified\n`), state);
    return { values: vectorFor(text, typeof one.outputDimensionality === 'number' ? one.outputDimensionality : 8) };
  });
  return ok({ embeddings: values });
}

function modelMethod(request: RecordedRequest, id: string, method: string, state: StandinState): RawAnswer {
  const model = state.models.find((m) => bare(m.id) === id);
  if (!model) return error(GEMINI_ERRORS.notFound(id, method), state);
  if (method === 'generateContent') return generateContent(request, model, false, state);
  if (method === 'streamGenerateContent') return generateContent(request, model, true, state);
  if (method === 'embedContent') return embedContent(request, state);
  if (method === 'batchEmbedContents') return batchEmbedContents(request, model, state);
  if (method === 'countTokens') {
    const body = jsonObject(request, state);
    return ok({ totalTokens: tokenEstimate(JSON.stringify(body.contents ?? body.generateContentRequest ?? '')) });
  }
  return notFound(request, state);
}

function notFound(_request: RecordedRequest, state: StandinState): RawAnswer {
  return error({ status: 404, type: 'NOT_FOUND', message: 'Requested entity was not found.' }, state);
}

function authenticate(request: RecordedRequest, apiKey: string, state: StandinState): RawAnswer | null {
  const key = request.headers['x-goog-api-key'] ?? request.query.key;
  const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
  if (key !== undefined) return key === apiKey ? null : error(GEMINI_ERRORS.apiKeyInvalid(), state);
  if (bearer !== undefined) return bearer === apiKey ? null : error(GEMINI_ERRORS.unauthenticated(), state);
  return error(
    {
      status: 403,
      type: 'PERMISSION_DENIED',
      message:
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    },
    state,
  );
}

function handle(request: RecordedRequest, route: string, state: StandinState): RawAnswer {
  if (request.method === 'GET' && route === 'models') return directory(request, state);
  const method = /^models\/([^/:]+):([A-Za-z]+)$/.exec(route);
  if (request.method === 'POST' && method) return modelMethod(request, decodeURIComponent(method[1] ?? ''), method[2] ?? '', state);
  if (request.method === 'GET' && /^models\/[^/:]+$/.test(route)) {
    const id = decodeURIComponent(route.slice('models/'.length));
    const model = state.models.find((m) => bare(m.id) === id);
    return model
      ? ok(listEntry(model))
      : error({ status: 404, type: 'NOT_FOUND', message: `models/${id} is not found for API version v1beta` }, state);
  }
  return notFound(request, state);
}

export const geminiDialect: DialectModule = {
  name: 'gemini',
  basePath: '/v1beta',
  defaultModels: DEFAULT_MODELS,
  error,
  authenticate,
  notFound,
  handle,
};
