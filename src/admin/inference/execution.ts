import { AppError } from '../../core/errors.ts';
import type { Workload } from '../catalog/wires.ts';
import { classifyAnswer } from '../model-test/model-test.outcome.ts';
import type { UpstreamFailure } from '../upstream/upstream-client.ts';

/** The provider's wait when a 429 names none. */
export const DEFAULT_RATE_LIMIT_WAIT_MS = 30_000;
/** The longest admission floor one 429 can set: a provider's (or an impostor's) header cannot close a provider for days. */
export const MAX_RATE_LIMIT_WAIT_MS = 3_600_000;

/**
 * How long a rate-limited provider asks to be left alone, from its 429: `retry-after` (seconds or an HTTP date), else
 * Anthropic's `anthropic-ratelimit-*-reset` timestamps (the latest), else Gemini's RetryInfo `retryDelay` (`"30s"`,
 * `"1.5s"`), else 30 s; bounded to an hour.
 */
export function rateLimitWaitMs(headers: Record<string, string>, body: Uint8Array, now: number): number {
  const bounded = (ms: number) => Math.min(Math.max(Math.ceil(ms), 0), MAX_RATE_LIMIT_WAIT_MS);
  const retryAfter = headers['retry-after']?.trim();
  if (retryAfter !== undefined && retryAfter !== '') {
    if (/^\d+(\.\d+)?$/.test(retryAfter)) return bounded(Number(retryAfter) * 1000);
    const at = Date.parse(retryAfter);
    if (!Number.isNaN(at)) return bounded(at - now);
  }
  const resets = Object.entries(headers)
    .filter(([name]) => /^anthropic-ratelimit-[a-z-]+-reset$/.test(name))
    .map(([, value]) => Date.parse(value))
    .filter((at) => !Number.isNaN(at) && at > now);
  if (resets.length > 0) return bounded(Math.max(...resets) - now);
  const delay = geminiRetryDelay(body);
  if (delay !== undefined) return bounded(delay);
  return DEFAULT_RATE_LIMIT_WAIT_MS;
}

function geminiRetryDelay(body: Uint8Array): number | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    return undefined;
  }
  const details = (parsed as { error?: { details?: unknown } } | null)?.error?.details;
  if (!Array.isArray(details)) return undefined;
  for (const detail of details as unknown[]) {
    if (typeof detail !== 'object' || detail === null) continue;
    const { '@type': type, retryDelay } = detail as Record<string, unknown>;
    if (typeof type === 'string' && type.endsWith('RetryInfo') && typeof retryDelay === 'string') {
      const match = /^(\d+(?:\.\d+)?)s$/.exec(retryDelay.trim());
      if (match?.[1] !== undefined) return Number(match[1]) * 1000;
    }
  }
  return undefined;
}

/**
 * A provider's non-2xx answer as the contract's error, named by the model-test classification and the HTTP status.
 * The provider's body is never echoed (it can quote the request). 429 is handled by the caller (it sets the floor).
 *
 * A request the provider found invalid (400, 422; 413 too large) is the caller's 4xx, not the gateway's 502: its
 * content (an image, a tool schema, a parameter this model takes differently) is what was refused, sending it again
 * cannot help, and the OpenAI clients retry a 5xx on their own. Everything else (credentials, quota, a missing model,
 * the provider failing) is the platform's side: 502.
 */
export function upstreamRefusal(
  workload: Workload,
  providerId: string,
  answer: { status: number; headers: Record<string, string>; body: Uint8Array },
): AppError {
  const { outcome } = classifyAnswer(workload, { ...answer, body: Buffer.from(answer.body) });
  const said = `provider ${providerId} answered HTTP ${answer.status} (${outcome})`;
  if (outcome === 'request_invalid')
    return answer.status === 413
      ? new AppError('payload_too_large', `${said}: the request is too large for it`)
      : new AppError('parameter_invalid', `${said}: it refused the request's content as invalid; sending it again unchanged will not help`);
  return new AppError('provider_error', said);
}

/** A transport failure as the contract's error: the deadline is 504, anything else 502 (messages name the host at most). */
export function transportFailure(providerId: string, failure: UpstreamFailure): AppError {
  if (failure.kind === 'timed_out') return new AppError('deadline_exceeded', `provider ${providerId}: ${failure.message}`);
  return new AppError('provider_error', `provider ${providerId}: ${failure.message}`);
}

/** A 2xx answer this endpoint could not read. */
export function unreadableAnswer(providerId: string): AppError {
  return new AppError('provider_error', `provider ${providerId} sent an answer that is not its wire's format (invalid_response)`);
}
