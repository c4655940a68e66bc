import type { Workload } from '../catalog/wires.ts';

/** Spec Endpoints rule 8: every `outcome` of a model test. */
export const MODEL_TEST_OUTCOMES = [
  'succeeded',
  'not_found',
  'provider_disabled',
  'missing_credential',
  'reauthorization_required',
  'credential_unusable',
  'model_plane_unavailable',
  'test_input_unavailable',
  'request_invalid',
  'authentication_failed',
  'quota_exceeded',
  'rate_limited',
  'model_not_found',
  'provider_error',
  'timed_out',
  'connection_failed',
  'invalid_response',
  'request_rejected',
] as const;
export type ModelTestOutcome = (typeof MODEL_TEST_OUTCOMES)[number];

/** The classification of one upstream answer: the outcome, and whether it proves the model gone (marks it invalid). */
export interface Classified {
  outcome: ModelTestOutcome;
  marksInvalid: boolean;
}

/**
 * Upstream codes that say the model itself is gone (spec States: "marked invalid"). OpenAI-compatible vendors send
 * them as `error.code`; a bare `model_not_found`, or a 404 without one of these, only says the request missed and
 * leaves the mark alone (a mistyped base URL also answers 404).
 */
const MODEL_GONE_CODES = new Set(['model_not_exist', 'model_retired', 'model_decommissioned']);

/** Gemini quota ids that reset by the day or month: waiting minutes does not help, so it is quota, not rate. */
const PERIOD_QUOTA = /Per(Day|Month)/;

/**
 * The structured error of an upstream answer, whatever the dialect: OpenAI `{error:{code,type}}`, Anthropic
 * `{type:"error",error:{type,details:{error_code}}}`, Gemini `{error:{status,details:[{reason}|{violations}]}}`. Only
 * machine codes are read, plus two facts that only a dialect's wording or quota id carries (named `credit_balance`
 * and `period_quota` here); the message itself is never kept (it can quote the request, and the spec forbids
 * returning or storing raw errors).
 */
function upstreamCodes(body: unknown): Set<string> {
  const codes = new Set<string>();
  if (!isRecord(body) || !isRecord(body.error)) return codes;
  const { code, type, status, details, message } = body.error;
  for (const value of [code, type, status]) if (typeof value === 'string' && value !== '') codes.add(value);
  if (isRecord(details) && typeof details.error_code === 'string') codes.add(details.error_code);
  if (Array.isArray(details))
    for (const d of details) {
      if (!isRecord(d)) continue;
      if (typeof d.reason === 'string') codes.add(d.reason);
      if (
        Array.isArray(d.violations) &&
        d.violations.some((v) => isRecord(v) && typeof v.quotaId === 'string' && PERIOD_QUOTA.test(v.quotaId))
      )
        codes.add('period_quota');
    }
  // Anthropic reports used-up prepaid credit as a 400 invalid_request_error; only the wording tells it apart.
  if (typeof message === 'string' && /credit balance is too low/i.test(message)) codes.add('credit_balance');
  return codes;
}

const has = (codes: Set<string>, ...names: string[]) => names.some((n) => codes.has(n));

/** Classifies a non-2xx answer from its status and structured error (issue 15 §2; the order decides overlaps). */
function classifyRefusal(status: number, codes: Set<string>): Classified {
  const outcome = (o: ModelTestOutcome): Classified => ({ outcome: o, marksInvalid: false });
  if ([...codes].some((c) => MODEL_GONE_CODES.has(c))) return { outcome: 'model_not_found', marksInvalid: true };
  // A redirect is never followed (outbound safety): the provider did not answer this request.
  if (status >= 300 && status < 400) return outcome('request_rejected');
  if (status === 401 || has(codes, 'invalid_api_key', 'authentication_error', 'UNAUTHENTICATED', 'API_KEY_INVALID'))
    return outcome('authentication_failed');
  if (status === 402 || has(codes, 'insufficient_quota', 'billing_error', 'enforced_spend_limit_reached', 'credit_balance', 'period_quota'))
    return outcome('quota_exceeded');
  if (status === 429 || has(codes, 'rate_limit_exceeded', 'rate_limit_error', 'RESOURCE_EXHAUSTED')) return outcome('rate_limited');
  if (status === 404 || has(codes, 'model_not_found', 'not_found_error', 'NOT_FOUND')) return outcome('model_not_found');
  if (status === 403 || has(codes, 'permission_error', 'PERMISSION_DENIED')) return outcome('request_rejected');
  // The probe's own request refused (a parameter or budget this model does not take): never a success.
  if (status === 400 || status === 413 || status === 422) return outcome('request_invalid');
  return outcome('provider_error');
}

/** Whether a 2xx body is the answer this workload's endpoint gives (an HTML page from a proxy is not). */
function isExpectedAnswer(workload: Workload, contentType: string, body: Buffer): boolean {
  if (workload === 'speech') return body.length > 0 && !/^(text\/|application\/json)/i.test(contentType);
  const json = parseJson(body);
  if (!isRecord(json) || 'error' in json) return false;
  switch (workload) {
    case 'text_generation':
      return Array.isArray(json.choices) || Array.isArray(json.content) || Array.isArray(json.candidates);
    case 'embeddings':
      return Array.isArray(json.data) || isRecord(json.embedding) || Array.isArray(json.embeddings);
    case 'image_generation':
      return Array.isArray(json.data);
    case 'transcription':
      return typeof json.text === 'string';
  }
}

/** Classifies the answer of a probe that reached the provider. */
export function classifyAnswer(workload: Workload, answer: { status: number; headers: Record<string, string>; body: Buffer }): Classified {
  if (answer.status >= 200 && answer.status < 300) {
    const valid = isExpectedAnswer(workload, answer.headers['content-type'] ?? '', answer.body);
    return { outcome: valid ? 'succeeded' : 'invalid_response', marksInvalid: false };
  }
  return classifyRefusal(answer.status, upstreamCodes(parseJson(answer.body)));
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
