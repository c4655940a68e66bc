import { silentWav } from '../../../src/admin/wires/openai-transcription.wire.ts';
import { json, Refusal, silentMp3, sse, TINY_PNG_BASE64, tokenEstimate, vectorFor } from './answers.ts';
import { directoryAnswer, idBefore, offsetAfterId, pageAt, positiveInteger } from './directory-paging.ts';
import type { DialectModule, ErrorSpec, RawAnswer, RecordedRequest, StandinModel, StandinState } from './standin.types.ts';

/**
 * The OpenAI API (and the compatible servers that copy it): `Authorization: Bearer`, errors as
 * `{"error":{"message","type","param","code"}}`, the directory `GET /v1/models` as one `{"object":"list","data":[…]}`.
 */

/** 2025-01-01T00:00:00Z: the `created` of models that name none. */
const DEFAULT_CREATED = 1_735_689_600;

const KEYS_PAGE = 'https://platform.openai.com/account/api-keys';

/** The models of `catalog/openai.yaml`, by upstream id, so every shipped probe finds its model. */
const DEFAULT_MODELS: readonly StandinModel[] = [
  { id: 'gpt-5', rejectsMaxTokens: true },
  { id: 'gpt-5-mini', rejectsMaxTokens: true },
  { id: 'gpt-4.1' },
  { id: 'gpt-4.1-mini' },
  { id: 'gpt-4o-2024-11-20' },
  { id: 'text-embedding-3-small' },
  { id: 'text-embedding-3-large' },
  { id: 'gpt-image-1' },
  { id: 'whisper-1' },
  { id: 'tts-1' },
];

const err = (spec: Omit<ErrorSpec, 'dialect'>): ErrorSpec => ({ dialect: 'openai', ...spec });

/** OpenAI's documented errors (and the model codes other compatible vendors use), for `Standin.fail`. */
export const OPENAI_ERRORS = {
  /** 401 for a key that is not valid; the message echoes the key masked, as OpenAI's does. */
  invalidApiKey: (key = 'sk-wrong-key-0000'): ErrorSpec =>
    err({
      status: 401,
      type: 'invalid_request_error',
      code: 'invalid_api_key',
      message: `Incorrect API key provided: ${maskKey(key)}. You can find your API key at ${KEYS_PAGE}.`,
    }),
  /** 403 from an unsupported country, region or territory. */
  unsupportedRegion: (): ErrorSpec =>
    err({
      status: 403,
      type: 'request_forbidden',
      code: 'unsupported_country_region_territory',
      message: 'Country, region, or territory not supported',
    }),
  /** 403 with the code `model_not_found`: the project may not use the model (the model itself exists). */
  projectLacksModel: (model: string, project = 'proj_standin'): ErrorSpec =>
    err({
      status: 403,
      type: 'invalid_request_error',
      code: 'model_not_found',
      message: `Project \`${project}\` does not have access to model \`${model}\``,
    }),
  /** 404 `model_not_found`: what OpenAI answers for a model it does not know or the key may not see. */
  modelNotFound: (model: string): ErrorSpec =>
    err({
      status: 404,
      type: 'invalid_request_error',
      code: 'model_not_found',
      message: `The model \`${model}\` does not exist or you do not have access to it.`,
    }),
  /** `model_not_exist`, as some compatible vendors answer an unknown model. */
  modelNotExist: (model: string, status = 404): ErrorSpec =>
    err({ status, type: 'invalid_request_error', code: 'model_not_exist', message: `Model ${model} does not exist.` }),
  /** `model_retired`, as some compatible vendors answer a withdrawn model. */
  modelRetired: (model: string, status = 404): ErrorSpec =>
    err({ status, type: 'invalid_request_error', code: 'model_retired', message: `The model \`${model}\` has been retired.` }),
  /** `model_decommissioned`, as Groq answers a withdrawn model (HTTP 400 there). */
  modelDecommissioned: (model: string, status = 400): ErrorSpec =>
    err({
      status,
      type: 'invalid_request_error',
      code: 'model_decommissioned',
      message: `The model \`${model}\` has been decommissioned and is no longer supported.`,
    }),
  /** 400 `unsupported_parameter`, as reasoning models answer `max_tokens`. */
  unsupportedParameter: (param = 'max_tokens', instead = 'max_completion_tokens'): ErrorSpec =>
    err({
      status: 400,
      type: 'invalid_request_error',
      param,
      code: 'unsupported_parameter',
      message: `Unsupported parameter: '${param}' is not supported with this model. Use '${instead}' instead.`,
    }),
  /** 400 `invalid_request_error` about one parameter. */
  invalidRequest: (message: string, param: string | null = null, code: string | null = null): ErrorSpec =>
    err({ status: 400, type: 'invalid_request_error', param, code, message }),
  /** 429 rate limit (`requests` or `tokens` per minute) with `retry-after` and the `x-ratelimit-*` headers. */
  rateLimited: (kind: 'requests' | 'tokens' = 'requests', retryAfterSeconds = 1): ErrorSpec =>
    err({
      status: 429,
      type: kind,
      code: 'rate_limit_exceeded',
      message: `Rate limit reached for gpt-4o in organization org-standin on ${kind} per min (${kind === 'requests' ? 'RPM' : 'TPM'}): Limit 3, Used 3, Requested 1. Please try again in ${retryAfterSeconds}s.`,
      headers: {
        'retry-after': String(retryAfterSeconds),
        [`x-ratelimit-limit-${kind}`]: '3',
        [`x-ratelimit-remaining-${kind}`]: '0',
        [`x-ratelimit-reset-${kind}`]: `${retryAfterSeconds}s`,
      },
    }),
  /** 429 `insufficient_quota`: the account's credit or plan is used up; waiting does not help. */
  insufficientQuota: (): ErrorSpec =>
    err({
      status: 429,
      type: 'insufficient_quota',
      code: 'insufficient_quota',
      message:
        'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.',
    }),
  serverError: (): ErrorSpec => err({ status: 500 }),
  overloaded: (): ErrorSpec => err({ status: 503 }),
} as const;

function maskKey(key: string): string {
  return key.length <= 8 ? '*'.repeat(key.length) : `${key.slice(0, 3)}${'*'.repeat(key.length - 7)}${key.slice(-4)}`;
}

/** The dialect's usual type, code and message for a status. */
function defaultsFor(status: number): { type: string; code: string | null; message: string } {
  if (status === 401) return { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' };
  if (status === 403) return { type: 'invalid_request_error', code: null, message: 'You are not allowed to sample from this model' };
  if (status === 404) return { type: 'invalid_request_error', code: null, message: 'Not found.' };
  if (status === 429) return { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests' };
  if (status === 503) return { type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later' };
  if (status >= 500)
    return { type: 'server_error', code: null, message: 'The server had an error while processing your request. Sorry about that!' };
  return { type: 'invalid_request_error', code: null, message: 'Invalid request.' };
}

function error(spec: ErrorSpec, state: StandinState): RawAnswer {
  const usual = defaultsFor(spec.status);
  const body = {
    error: {
      message: spec.message ?? usual.message,
      type: spec.type ?? usual.type,
      param: spec.param ?? null,
      code: spec.code === undefined ? usual.code : spec.code,
    },
  };
  return json(spec.status, body, { 'x-request-id': state.nextId(), ...spec.headers });
}

function refuse(spec: ErrorSpec, state: StandinState): never {
  throw new Refusal(error(spec, state));
}

const missing = (param: string): ErrorSpec => ({
  status: 400,
  type: 'invalid_request_error',
  param,
  code: 'missing_required_parameter',
  message: `Missing required parameter: '${param}'.`,
});

function jsonObject(request: RecordedRequest, state: StandinState): Record<string, unknown> {
  const body = request.json;
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
  return refuse(
    {
      status: 400,
      message:
        "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
    },
    state,
  );
}

/** The served model a request names, or the refusal OpenAI gives. */
function modelOf(name: unknown, state: StandinState): StandinModel {
  if (name === undefined || name === '') refuse({ status: 400, message: 'you must provide a model parameter' }, state);
  if (typeof name !== 'string') refuse({ status: 400, param: 'model', message: `Invalid type for 'model': expected a string.` }, state);
  const model = state.models.find((m) => m.id === name);
  return model ?? refuse(OPENAI_ERRORS.modelNotFound(name), state);
}

const now = () => Math.floor(Date.now() / 1000);
const ok = (body: unknown, state: StandinState) => json(200, body, { 'x-request-id': state.nextId(), 'openai-processing-ms': '1' });

function listEntry(model: StandinModel): Record<string, unknown> {
  return { id: model.id, object: 'model', created: model.created ?? DEFAULT_CREATED, owned_by: 'system' };
}

function directory(request: RecordedRequest, state: StandinState): RawAnswer {
  const options = state.directory;
  const headers = { 'x-request-id': state.nextId() };
  if (options.pageSize === undefined) return directoryAnswer({ object: 'list', data: state.models.map(listEntry) }, options, headers);
  const size = Math.min(options.pageSize, positiveInteger(request.query.limit) ?? Infinity);
  const after = request.query.after;
  const offset = after === undefined ? 0 : offsetAfterId(state.models, after);
  if (offset === undefined) refuse({ status: 400, param: 'after', message: `Invalid 'after': no model with id '${after}'.` }, state);
  const outcome = pageAt(state.models, options, offset, size);
  if (!outcome.ok) return error(outcome.error ?? { status: 500 }, state);
  const { rows, next } = outcome.page;
  const lastId = next === 'missing' ? null : next === null ? (rows.at(-1)?.id ?? null) : idBefore(state.models, next);
  return directoryAnswer(
    {
      object: 'list',
      data: rows.map(listEntry),
      first_id: rows[0]?.id ?? null,
      ...(lastId !== null ? { last_id: lastId } : {}),
      has_more: next !== null,
    },
    options,
    headers,
  );
}

function chatCompletions(request: RecordedRequest, state: StandinState): RawAnswer {
  const body = jsonObject(request, state);
  const model = modelOf(body.model, state);
  if (!Array.isArray(body.messages) || body.messages.length === 0) refuse(missing('messages'), state);
  if (model.rejectsMaxTokens && body.max_tokens !== undefined) refuse(OPENAI_ERRORS.unsupportedParameter(), state);
  const id = `chatcmpl-${state.nextId()}`;
  const created = now();
  const usage = { prompt_tokens: tokenEstimate(JSON.stringify(body.messages)), completion_tokens: tokenEstimate(state.reply) };
  const usageBlock = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
  if (body.stream === true) {
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
      data: { id, object: 'chat.completion.chunk', created, model: model.id, choices, ...extra },
    });
    const options = body.stream_options as { include_usage?: unknown } | undefined;
    return sse(
      [
        chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
        chunk([{ index: 0, delta: { content: state.reply }, finish_reason: null }]),
        chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
        ...(options?.include_usage === true ? [chunk([], { usage: usageBlock })] : []),
      ],
      'data: [DONE]\n\n',
    );
  }
  return ok(
    {
      id,
      object: 'chat.completion',
      created,
      model: model.id,
      choices: [{ index: 0, message: { role: 'assistant', content: state.reply, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: usageBlock,
      system_fingerprint: null,
    },
    state,
  );
}

function embeddings(request: RecordedRequest, state: StandinState): RawAnswer {
  const body = jsonObject(request, state);
  const model = modelOf(body.model, state);
  const input = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(input) || input.length === 0 || !input.every((t) => typeof t === 'string')) refuse(missing('input'), state);
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : 8;
  const encode = (vector: number[]) =>
    body.encoding_format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
  const tokens = input.reduce((sum: number, text: string) => sum + tokenEstimate(text), 0);
  return ok(
    {
      object: 'list',
      data: input.map((text: string, index) => ({ object: 'embedding', index, embedding: encode(vectorFor(text, dimensions)) })),
      model: model.id,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    },
    state,
  );
}

function imageGenerations(request: RecordedRequest, state: StandinState): RawAnswer {
  const body = jsonObject(request, state);
  modelOf(body.model, state);
  if (typeof body.prompt !== 'string' || body.prompt === '') refuse(missing('prompt'), state);
  const n = typeof body.n === 'number' ? body.n : 1;
  return ok({ created: now(), data: Array.from({ length: n }, () => ({ b64_json: TINY_PNG_BASE64 })) }, state);
}

const AUDIO_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  pcm: 'audio/pcm',
};

/** Speech answers audio bytes. Only mp3 and wav bytes are real files; the other formats carry the mp3 bytes under their type. */
function speech(request: RecordedRequest, state: StandinState): RawAnswer {
  const body = jsonObject(request, state);
  modelOf(body.model, state);
  if (typeof body.input !== 'string' || body.input === '') refuse(missing('input'), state);
  if (typeof body.voice !== 'string' || body.voice === '') refuse(missing('voice'), state);
  const format = typeof body.response_format === 'string' ? body.response_format : 'mp3';
  const type = AUDIO_TYPES[format];
  if (!type)
    refuse(
      {
        status: 400,
        param: 'response_format',
        message: `Invalid value: '${format}'. Supported values are: ${Object.keys(AUDIO_TYPES).join(', ')}.`,
      },
      state,
    );
  const audio = format === 'wav' ? Buffer.from(silentWav(250)) : silentMp3();
  return { status: 200, headers: { 'content-type': type, 'x-request-id': state.nextId() }, body: audio };
}

function transcriptions(request: RecordedRequest, state: StandinState): RawAnswer {
  const form = request.form;
  if (!form)
    refuse(
      { status: 400, message: `Invalid Content-Type header (${request.headers['content-type'] ?? 'none'}), expected multipart/form-data.` },
      state,
    );
  const file = form.file;
  if (file === undefined || typeof file === 'string') refuse(missing('file'), state);
  modelOf(form.model, state);
  const format = typeof form.response_format === 'string' ? form.response_format : 'json';
  if (format === 'text' || format === 'srt' || format === 'vtt')
    return {
      status: 200,
      headers: { 'content-type': 'text/plain; charset=utf-8', 'x-request-id': state.nextId() },
      body: `${state.reply}\n`,
    };
  if (format === 'verbose_json')
    return ok({ task: 'transcribe', language: 'english', duration: 0.25, text: state.reply, segments: [] }, state);
  return ok({ text: state.reply, usage: { type: 'duration', seconds: 1 } }, state);
}

function notFound(request: RecordedRequest, state: StandinState): RawAnswer {
  return error({ status: 404, message: `Invalid URL (${request.method} ${request.path})` }, state);
}

function authenticate(request: RecordedRequest, apiKey: string, state: StandinState): RawAnswer | null {
  const match = /^Bearer (.+)$/.exec(request.headers.authorization ?? '');
  if (!match)
    return error(
      {
        status: 401,
        code: null,
        message: `You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY). You can obtain an API key from ${KEYS_PAGE}.`,
      },
      state,
    );
  return match[1] === apiKey ? null : error(OPENAI_ERRORS.invalidApiKey(match[1]), state);
}

function handle(request: RecordedRequest, route: string, state: StandinState): RawAnswer {
  const endpoint = `${request.method} ${route}`;
  if (endpoint === 'GET models') return directory(request, state);
  if (request.method === 'GET' && route.startsWith('models/')) {
    const id = decodeURIComponent(route.slice('models/'.length));
    const model = state.models.find((m) => m.id === id);
    return model ? ok(listEntry(model), state) : error(OPENAI_ERRORS.modelNotFound(id), state);
  }
  if (endpoint === 'POST chat/completions') return chatCompletions(request, state);
  if (endpoint === 'POST embeddings') return embeddings(request, state);
  if (endpoint === 'POST images/generations') return imageGenerations(request, state);
  if (endpoint === 'POST audio/speech') return speech(request, state);
  if (endpoint === 'POST audio/transcriptions') return transcriptions(request, state);
  return notFound(request, state);
}

export const openAiDialect: DialectModule = {
  name: 'openai',
  basePath: '/v1',
  defaultModels: DEFAULT_MODELS,
  error,
  authenticate,
  notFound,
  handle,
};
