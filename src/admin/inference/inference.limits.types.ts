import { AppError } from '../../core/errors.ts';

/** Issue 16 item 7: what the limiter and its two backends share. */

/** `PLATFORM_INFERENCE_RATE_PER_MINUTE` default: requests per credential per minute (0 disables the limit). */
export const DEFAULT_RATE_PER_MINUTE = 600;
/** `PLATFORM_INFERENCE_MAX_STREAMS` default: concurrent streamed calls per credential (0 disables the limit). */
export const DEFAULT_MAX_STREAMS = 16;
/** The rate window: fixed, aligned to the clock's minutes, the same on every replica. */
export const RATE_WINDOW_MS = 60_000;
/** How long a stream slot outlives the inference deadline before another replica may take it over. */
export const STREAM_LEASE_GRACE_MS = 10_000;

/** A held stream slot; `release` is idempotent and never throws. */
export interface StreamSlot {
  release(): Promise<void>;
}

/**
 * Issue 16 item 7: per-credential limits, counted where every replica sees them (Redis when `PLATFORM_REDIS_URL` is
 * set, the database otherwise). Both refuse with 429 `rate_limited` and `Retry-After` in seconds.
 */
export interface InferenceLimiter {
  /** Counts one request of `credentialId` in the current minute; throws when the minute's allowance is spent. */
  admitRequest(credentialId: string): Promise<void>;
  /** Takes one of the credential's stream slots until released; throws when all are held. */
  openStream(credentialId: string): Promise<StreamSlot>;
}

/** What both backends share: the limits (0: that limit is off) and how long a slot may be held at most. */
export interface LimitSettings {
  ratePerMinute: number;
  maxStreams: number;
  /**
   * The longest a stream can run: the inference deadline covers the whole streamed answer, so a slot whose holder
   * crashed is free again after this plus `STREAM_LEASE_GRACE_MS`, without any renewal traffic.
   */
  streamLeaseMs: number;
}

export const NO_SLOT: StreamSlot = { release: async () => {} };

/** The refusal of a full minute: wait until the window ends (at least 1 s). */
export function rateRefusal(limit: number, windowStart: number, now: number): AppError {
  const wait = Math.max(1, Math.ceil((windowStart + RATE_WINDOW_MS - now) / 1000));
  return new AppError('rate_limited', `at most ${limit} inference requests per credential per minute; try again in ${wait} s`, {
    headers: { 'retry-after': String(wait) },
  });
}

/**
 * The refusal of a stream beyond the limit. When a slot frees cannot be known (streams end when they end), so the
 * client is told to retry after a second.
 */
export function streamRefusal(limit: number): AppError {
  return new AppError('rate_limited', `at most ${limit} concurrent streamed inference requests per credential; try again in 1 s`, {
    headers: { 'retry-after': '1' },
  });
}

export function windowStartOf(now: number): number {
  return now - (now % RATE_WINDOW_MS);
}
