import type { FastifyError } from 'fastify';
import { AppError, INTERNAL_MESSAGE, isAppError } from '../../core/errors.ts';
import { frameworkErrorToAppError } from '../../core/http/server.ts';

/**
 * OpenAI's error body, which its clients parse into typed errors (`APIError.status`, `.code`, `.param`, `.type`).
 * `code` carries the platform's stable code, so a client can still tell `model_unavailable` from `not_found`.
 */
export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

/** An error ready to send on the OpenAI-compatible surface. */
export interface OpenAiErrorAnswer {
  status: number;
  /** Headers the error carries (`retry-after` on 429). */
  headers: Record<string, string>;
  body: OpenAiErrorBody;
}

/** OpenAI's `type` for a status: the classes its SDKs and dashboards know. */
function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/**
 * Input messages name the offending field first (`body.messages.0.content: …`, see core/validation.ts); OpenAI
 * reports that field separately as `param`, which clients show next to the message.
 */
const FIELD_PREFIX = /^(?:body\.)?([a-z_][a-z0-9_]*(?:\.[a-z0-9_<>]+)*):/;

function paramOf(error: AppError): string | null {
  if (error.code !== 'parameter_invalid' && error.code !== 'parameter_missing' && error.code !== 'validation_failed') return null;
  const match = FIELD_PREFIX.exec(error.message);
  return match?.[1] ?? null;
}

/** The OpenAI-shaped answer for an `AppError`: the status from the platform's error table, the code kept. */
export function openAiErrorFromAppError(error: AppError): OpenAiErrorAnswer {
  const status = error.httpStatus;
  return {
    status,
    headers: { ...error.headers },
    body: { error: { message: error.message, type: errorType(status), param: paramOf(error), code: error.code } },
  };
}

/**
 * Any error a handler or Fastify raised on this surface, as the platform's error handler would classify it: our
 * `AppError`s as they are, the framework's (malformed JSON, body limit, content type) by its mapping, anything else
 * an internal error whose cause stays in the log. `internal` tells the caller to log it.
 */
export function toAppError(error: unknown): { error: AppError; internal: boolean } {
  if (isAppError(error)) return { error, internal: error.httpStatus >= 500 };
  const mapped = typeof error === 'object' && error !== null ? frameworkErrorToAppError(error as FastifyError) : undefined;
  if (mapped) return { error: mapped, internal: false };
  return { error: new AppError('internal', INTERNAL_MESSAGE, { cause: error }), internal: true };
}
