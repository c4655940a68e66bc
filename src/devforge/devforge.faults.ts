/**
 * Test hook: answers the next REST requests (`/api/v4/...`) with one of the failures a real GitLab, or what stands
 * in front of it, produces (forge-facts.md, mcp-facts.md 2.2), so the MCP server's error mapping is tested against
 * the documented shapes rather than against its own assumptions:
 *
 * - `rate_limit_throttle`: Rack::Attack's 429, `text/plain` `Retry later`, `Retry-After` and the `RateLimit-*` set;
 * - `rate_limit_application`: an application limit's 429, JSON `{"message":{"error":"This endpoint has been
 *   requested too many times. Try again later."}}`, no rate-limit headers;
 * - `server_error`: `500 {"message":"500 Internal Server Error"}`;
 * - `html`: a 200 HTML page, as a sign-in page or a captive proxy answers;
 * - `hang`: no answer for `delayMs` (the client's timeout is what is tested);
 * - `insufficient_scope`: the 403 of a token without the needed scope (no `WWW-Authenticate`).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export type DevForgeFaultKind = 'rate_limit_throttle' | 'rate_limit_application' | 'server_error' | 'html' | 'hang' | 'insufficient_scope';

export interface DevForgeFault {
  kind: DevForgeFaultKind;
  /** Only requests whose path (no query) matches; default: every REST request. */
  path?: RegExp;
  /** How many requests get the fault (default 1). */
  times?: number;
  /** `rate_limit_throttle`: the `Retry-After` seconds (default 30). `hang`: how long to hold the request (default 5000 ms). */
  retryAfterSeconds?: number;
  delayMs?: number;
}

export interface DevForgeFaults {
  add(fault: DevForgeFault): void;
  clear(): void;
  /** Answers the request when a fault applies; returns whether it did. */
  apply(request: FastifyRequest, reply: FastifyReply, nowMs: number): Promise<boolean>;
}

export function createDevForgeFaults(): DevForgeFaults {
  let pending: (DevForgeFault & { left: number })[] = [];
  return {
    add(fault) {
      pending.push({ ...fault, left: fault.times ?? 1 });
    },
    clear() {
      pending = [];
    },
    async apply(request, reply, nowMs) {
      const path = request.url.split('?')[0] ?? '';
      const fault = pending.find((f) => f.left > 0 && (!f.path || f.path.test(path)));
      if (!fault) return false;
      fault.left -= 1;
      pending = pending.filter((f) => f.left > 0);
      switch (fault.kind) {
        case 'rate_limit_throttle': {
          const wait = fault.retryAfterSeconds ?? 30;
          const reset = Math.floor(nowMs / 1000) + wait;
          await reply
            .code(429)
            .headers({
              'content-type': 'text/plain',
              'retry-after': String(wait),
              'ratelimit-name': 'throttle_authenticated_api',
              'ratelimit-limit': '7200',
              'ratelimit-observed': '7201',
              'ratelimit-remaining': '0',
              'ratelimit-reset': String(reset),
              'ratelimit-resettime': new Date(reset * 1000).toUTCString(),
            })
            .send('Retry later\n');
          return true;
        }
        case 'rate_limit_application':
          await reply.code(429).send({ message: { error: 'This endpoint has been requested too many times. Try again later.' } });
          return true;
        case 'server_error':
          await reply.code(500).send({ message: '500 Internal Server Error' });
          return true;
        case 'html':
          await reply
            .code(200)
            .type('text/html; charset=utf-8')
            .send(
              '<!DOCTYPE html><html><head><title>Sign in · GitLab</title></head><body><form action="/users/sign_in"></form></body></html>',
            );
          return true;
        case 'insufficient_scope':
          await reply.code(403).send({
            error: 'insufficient_scope',
            error_description: 'The request requires higher privileges than provided by the access token.',
            scope: 'api',
          });
          return true;
        case 'hang':
          await new Promise((resolve) => setTimeout(resolve, fault.delayMs ?? 5000));
          if (!reply.sent) await reply.code(504).send({ message: '504 Gateway Timeout' });
          return true;
      }
    },
  };
}
