/**
 * OAuth answers in JSON (RFC 6749 §5.1–5.2, RFC 7009, RFC 7591 §3.2): the error codes this server may send, the
 * one constructor of error bodies, and the one writer, which always adds `Cache-Control: no-store` and
 * `Pragma: no-cache` (RFC 6749 §5.1), so no endpoint can forget them.
 */
import type { FastifyReply } from 'fastify';

/**
 * Error codes this server sends: RFC 6749 §4.1.2.1 and §5.2, RFC 8707 (`invalid_target`), RFC 7591 §3.2.2, and
 * `too_many_requests` for the per-address limits (spec "Errors").
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'access_denied'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'too_many_requests';

/** An RFC 6749 / RFC 7591 JSON answer; {@link sendOAuthJson} writes it. */
export interface JsonAnswer {
  kind: 'json';
  status: number;
  body: Record<string, unknown>;
  /** Extra headers (`retry-after`); the no-store headers are added by the writer, always. */
  headers?: Record<string, string>;
}

/** What every OAuth JSON answer and every sign-in page carries: tokens and codes must never be cached. */
export const NO_STORE_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'cache-control': 'no-store', pragma: 'no-cache' });

/** An RFC 6749 §5.2 error body: `{ error, error_description }`. */
export function oauthError(status: number, error: OAuthErrorCode, description: string, headers: Record<string, string> = {}): JsonAnswer {
  return { kind: 'json', status, body: { error, error_description: description }, headers };
}

/** A successful JSON answer (token response, registration, revocation). */
export function oauthJson(status: number, body: Record<string, unknown>): JsonAnswer {
  return { kind: 'json', status, body };
}

/** Writes a JSON answer; `Cache-Control: no-store` and `Pragma: no-cache` are set whatever the answer says. */
export function sendOAuthJson(reply: FastifyReply, answer: JsonAnswer): FastifyReply {
  for (const [name, value] of Object.entries({ ...answer.headers, ...NO_STORE_HEADERS })) void reply.header(name, value);
  return reply.status(answer.status).type('application/json').send(answer.body);
}
