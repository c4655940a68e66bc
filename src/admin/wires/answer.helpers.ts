import type { SseEvent } from './sse-lines.ts';
import { isRecord } from './wire.helpers.ts';

/**
 * Reading upstream answers. Every refusal here names what is wrong and never quotes the body: an answer carries the
 * user's content, and these messages reach logs and the model test's outcome.
 */

/** An upstream name (an event type, an error type) fit to appear in an error message, or `?` when it is not a plain identifier. */
export function safeName(name: unknown): string {
  return typeof name === 'string' && /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name) ? name : '?';
}

/** The JSON of a stream event's data; throws without quoting it. */
export function eventJson(event: SseEvent): unknown {
  try {
    return JSON.parse(event.data);
  } catch {
    throw new Error(`a stream event${event.event ? ` (${safeName(event.event)})` : ''} is not JSON`);
  }
}

/** The error object of an SSE `error` event (`{error:{…}}` or the object itself), when its data is JSON. */
export function eventError(event: SseEvent): unknown {
  try {
    const value: unknown = JSON.parse(event.data);
    return isRecord(value) ? (value.error ?? value) : undefined;
  } catch {
    return undefined;
  }
}

/** A 2xx answer as the sender hands it to an adapter. */
export interface Answer {
  body: Uint8Array;
  headers: Record<string, string>;
}

/** The error an upstream reported inside a 2xx body or a stream, named by its type or status when it has a plain one. */
export function upstreamError(error: unknown): Error {
  const kind = isRecord(error) ? (error.type ?? error.status ?? error.code) : undefined;
  const name = safeName(typeof kind === 'number' ? String(kind) : kind);
  return new Error(`the upstream reported an error${name === '?' ? '' : ` (${name})`}`);
}

/** Throws when `value` is an error envelope: OpenAI's and Gemini's `{error:{…}}`, Anthropic's `{type:"error", error}`. */
export function refuseErrorEnvelope(value: Record<string, unknown>): void {
  if (value.type === 'error' || isRecord(value.error)) throw upstreamError(value.error);
}

/** The JSON object of a 2xx answer; throws when the body is not UTF-8 JSON, not an object, or an error envelope. */
export function answerObject(answer: Answer): Record<string, unknown> {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(answer.body);
  } catch {
    throw new Error('the answer is not UTF-8 text');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('the answer is not JSON');
  }
  if (!isRecord(value)) throw new Error('the answer is not a JSON object');
  refuseErrorEnvelope(value);
  return value;
}

/** A header's value by case-insensitive name. */
export function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

/** A token count: a non-negative integer, else a refusal naming `field`. */
export function tokenCount(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new Error(`${field} is not a token count`);
  return value;
}

/** A token count the provider may leave out: absent (or null) is null. */
export function optionalTokenCount(value: unknown, field: string): number | null {
  return value === undefined || value === null ? null : tokenCount(value, field);
}

/** The list at `value`, else a refusal naming `field`. */
export function listAt(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`${field} is not a list`);
  return value;
}

/** The object at `value`, else a refusal naming `field`. */
export function objectAt(value: unknown, field: string): Record<string, unknown> {
  if (!isRecord(value)) throw new Error(`${field} is not an object`);
  return value;
}

/** The string at `value`, else a refusal naming `field`. */
export function stringAt(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new Error(`${field} is not a string`);
  return value;
}

/** Tool arguments as JSON text: a string as given, an object (some compatible servers send one) serialised. */
export function argumentsText(value: unknown, field: string): string {
  if (typeof value === 'string') return value;
  if (isRecord(value)) return JSON.stringify(value);
  if (value === undefined || value === null) return '{}';
  throw new Error(`${field} is neither JSON text nor an object`);
}
