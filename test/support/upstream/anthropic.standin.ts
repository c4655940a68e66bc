import { json, Refusal, sse, tokenEstimate } from './answers.ts';
import { directoryAnswer, idBefore, offsetAfterId, pageAt, positiveInteger } from './directory-paging.ts';
import type { DialectModule, ErrorSpec, RawAnswer, RecordedRequest, StandinModel, StandinState } from './standin.types.ts';

/**
 * Anthropic's API: `x-api-key` (or an OAuth bearer) and a required `anthropic-version` header, errors as
 * `{"type":"error","error":{"type","message"},"request_id"}` with a `request-id` header, the directory
 * `GET /v1/models?limit&after_id` → `{data, has_more, first_id, last_id}`.
 */

const VERSIONS = new Set(['2023-06-01', '2023-01-01']);
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 1000;

const day = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** The models of `catalog/anthropic.yaml`, by upstream id. */
const DEFAULT_MODELS: readonly StandinModel[] = [
  { id: 'claude-opus-4-1-20250805', display_name: 'Claude Opus 4.1', created: day('2025-08-05') },
  { id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5', created: day('2025-09-29') },
  { id: 'claude-haiku-4-5-20251001', display_name: 'Claude Haiku 4.5', created: day('2025-10-01') },
  { id: 'claude-3-5-haiku-20241022', display_name: 'Claude Haiku 3.5', created: day('2024-10-22') },
];

const err = (spec: Omit<ErrorSpec, 'dialect'>): ErrorSpec => ({ dialect: 'anthropic', ...spec });

/** Anthropic's documented errors (docs "Errors": one `error.type` per status), for `Standin.fail`. */
export const ANTHROPIC_ERRORS = {
  invalidRequest: (message = 'Invalid request'): ErrorSpec => err({ status: 400, type: 'invalid_request_error', message }),
  /** 400, not 402 or 429: the organisation's prepaid credit is used up. */
  creditBalanceTooLow: (): ErrorSpec =>
    err({
      status: 400,
      type: 'invalid_request_error',
      message: 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
    }),
  invalidApiKey: (): ErrorSpec => err({ status: 401, type: 'authentication_error', message: 'invalid x-api-key' }),
  permissionDenied: (): ErrorSpec =>
    err({ status: 403, type: 'permission_error', message: 'Your API key does not have permission to use the specified resource.' }),
  notFound: (model: string): ErrorSpec => err({ status: 404, type: 'not_found_error', message: `model: ${model}` }),
  requestTooLarge: (): ErrorSpec =>
    err({ status: 413, type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' }),
  /** 429 with `retry-after` and the `anthropic-ratelimit-*` headers. */
  rateLimited: (retryAfterSeconds = 1): ErrorSpec =>
    err({
      status: 429,
      type: 'rate_limit_error',
      message:
        'This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.',
      headers: {
        'retry-after': String(retryAfterSeconds),
        'anthropic-ratelimit-requests-limit': '50',
        'anthropic-ratelimit-requests-remaining': '0',
        'anthropic-ratelimit-requests-reset': new Date(Date.now() + retryAfterSeconds * 1000).toISOString(),
      },
    }),
  /** 429 `rate_limit_error` that waiting does not cure: the monthly spend limit, marked in `error.details`, no `retry-after`. */
  spendLimitReached: (): ErrorSpec =>
    err({
      status: 429,
      type: 'rate_limit_error',
      message: 'You have reached your specified API usage limits. You will regain access on the first day of next month at 00:00 UTC.',
      details: { error_code: 'enforced_spend_limit_reached' },
    }),
  apiError: (): ErrorSpec => err({ status: 500, type: 'api_error', message: 'Internal server error' }),
  overloaded: (): ErrorSpec => err({ status: 529, type: 'overloaded_error', message: 'Overloaded' }),
} as const;

function defaultsFor(status: number): { type: string; message: string } {
  if (status === 401) return { type: 'authentication_error', message: 'invalid x-api-key' };
  if (status === 403) return { type: 'permission_error', message: 'Your API key does not have permission to use the specified resource.' };
  if (status === 404) return { type: 'not_found_error', message: 'Not found' };
  if (status === 413) return { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' };
  if (status === 429) return { type: 'rate_limit_error', message: 'Rate limited' };
  if (status === 529) return { type: 'overloaded_error', message: 'Overloaded' };
  if (status >= 500) return { type: 'api_error', message: 'Internal server error' };
  return { type: 'invalid_request_error', message: 'Invalid request' };
}

function error(spec: ErrorSpec, state: StandinState): RawAnswer {
  const usual = defaultsFor(spec.status);
  const id = state.nextId();
  const inner = {
    type: spec.type ?? usual.type,
    message: spec.message ?? usual.message,
    ...(spec.details !== undefined ? { details: spec.details } : {}),
  };
  return json(spec.status, { type: 'error', error: inner, request_id: id }, { 'request-id': id, ...spec.headers });
}

function refuse(spec: ErrorSpec, state: StandinState): never {
  throw new Refusal(error(spec, state));
}

const invalid = (message: string): ErrorSpec => ({ status: 400, type: 'invalid_request_error', message });

function listEntry(model: StandinModel): Record<string, unknown> {
  const name = model.display_name === undefined ? model.id : model.display_name;
  return {
    type: 'model',
    id: model.id,
    ...(name !== null ? { display_name: name } : {}),
    created_at: new Date((model.created ?? day('2025-01-01')) * 1000).toISOString(),
  };
}

function directory(request: RecordedRequest, state: StandinState): RawAnswer {
  const { limit: limitText, after_id: afterId, before_id: beforeId } = request.query;
  if (beforeId !== undefined) refuse(invalid('before_id: the stand-in pages forward only (after_id)'), state);
  const limit = limitText === undefined ? DEFAULT_LIMIT : positiveInteger(limitText);
  if (limit === undefined || limit > MAX_LIMIT)
    refuse(invalid(`limit: Input should be greater than or equal to 1 and less than or equal to ${MAX_LIMIT}`), state);
  const size = Math.min(state.directory.pageSize ?? Infinity, limit);
  const offset = afterId === undefined ? 0 : offsetAfterId(state.models, afterId);
  if (offset === undefined) refuse(invalid(`after_id: no model with id '${afterId}'`), state);
  const outcome = pageAt(state.models, state.directory, offset, size);
  if (!outcome.ok) return error(outcome.error ?? { status: 500 }, state);
  const { rows, next } = outcome.page;
  const lastId = next === 'missing' ? null : next === null ? (rows.at(-1)?.id ?? null) : idBefore(state.models, next);
  return directoryAnswer(
    { data: rows.map(listEntry), has_more: next !== null, first_id: rows[0]?.id ?? null, last_id: lastId },
    state.directory,
    { 'request-id': state.nextId() },
  );
}

function messages(request: RecordedRequest, state: StandinState): RawAnswer {
  const body = request.json;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    refuse(invalid('There was an error parsing the body of your request'), state);
  const fields = body as Record<string, unknown>;
  if (fields.model === undefined) refuse(invalid('model: Field required'), state);
  if (typeof fields.model !== 'string') refuse(invalid('model: Input should be a valid string'), state);
  if (fields.max_tokens === undefined) refuse(invalid('max_tokens: Field required'), state);
  if (!Number.isInteger(fields.max_tokens) || (fields.max_tokens as number) < 1)
    refuse(invalid('max_tokens: Input should be a valid integer greater than or equal to 1'), state);
  if (!Array.isArray(fields.messages)) refuse(invalid('messages: Field required'), state);
  if (fields.messages.length === 0) refuse(invalid('messages: at least one message is required'), state);
  const model = state.models.find((m) => m.id === fields.model);
  if (!model) refuse(ANTHROPIC_ERRORS.notFound(fields.model), state);
  const id = `msg_${state.nextId()}`;
  const usage = {
    input_tokens: tokenEstimate(JSON.stringify([fields.system ?? '', fields.messages])),
    output_tokens: tokenEstimate(state.reply),
  };
  const message = { id, type: 'message', role: 'assistant', model: model.id };
  if (fields.stream === true) {
    return sse([
      {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
        },
      },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: state.reply } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      {
        event: 'message_delta',
        data: {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: usage.output_tokens },
        },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
  }
  return json(
    200,
    {
      ...message,
      content: [{ type: 'text', text: state.reply }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { ...usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
    { 'request-id': state.nextId() },
  );
}

function notFound(_request: RecordedRequest, state: StandinState): RawAnswer {
  return error({ status: 404, message: 'Not Found' }, state);
}

function authenticate(request: RecordedRequest, apiKey: string, state: StandinState): RawAnswer | null {
  const key = request.headers['x-api-key'];
  const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
  if (key === undefined && bearer === undefined) return error({ status: 401, message: 'x-api-key header is required' }, state);
  if (key !== undefined) return key === apiKey ? null : error(ANTHROPIC_ERRORS.invalidApiKey(), state);
  return bearer === apiKey ? null : error({ status: 401, message: 'Invalid bearer token' }, state);
}

function handle(request: RecordedRequest, route: string, state: StandinState): RawAnswer {
  const version = request.headers['anthropic-version'];
  if (version === undefined) return error(invalid('anthropic-version: header is required'), state);
  if (!VERSIONS.has(version)) return error(invalid(`anthropic-version: invalid version '${version}'`), state);
  const endpoint = `${request.method} ${route}`;
  if (endpoint === 'GET models') return directory(request, state);
  if (request.method === 'GET' && route.startsWith('models/')) {
    const id = decodeURIComponent(route.slice('models/'.length));
    const model = state.models.find((m) => m.id === id);
    return model ? json(200, listEntry(model), { 'request-id': state.nextId() }) : error(ANTHROPIC_ERRORS.notFound(id), state);
  }
  if (endpoint === 'POST messages') return messages(request, state);
  return notFound(request, state);
}

export const anthropicDialect: DialectModule = {
  name: 'anthropic',
  basePath: '/v1',
  defaultModels: DEFAULT_MODELS,
  error,
  authenticate,
  notFound,
  handle,
};
