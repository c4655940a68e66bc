/**
 * Small HTTP helpers shared by the dev forge's routes: reading parameters the way Rails does, client credentials
 * from HTTP Basic, bearer tokens, and sending rendered pages.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RenderedPage } from './devforge.pages.ts';
import type { ClientCredentials } from './devforge.oauth.tokens.ts';

/** A string parameter from a parsed query or body; for a repeated key the last value wins, like Rails' params. */
export function param(source: unknown, name: string): string | undefined {
  if (source === null || typeof source !== 'object') return undefined;
  const value = (source as Record<string, unknown>)[name];
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const last: unknown = value[value.length - 1];
    return typeof last === 'string' ? last : undefined;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** Rails merges query and body parameters (the body wins); Doorkeeper reads from the merged set. */
export function mergedParams(request: FastifyRequest): Record<string, unknown> {
  const query = request.query !== null && typeof request.query === 'object' ? request.query : {};
  const body = request.body !== null && typeof request.body === 'object' && !Array.isArray(request.body) ? request.body : {};
  return { ...query, ...body };
}

/**
 * Client credentials as Doorkeeper reads them (`client_credentials :from_basic, :from_params`): an HTTP Basic
 * header wins over `client_id`/`client_secret` parameters.
 */
export function clientCredentials(request: FastifyRequest, params: Record<string, unknown>): ClientCredentials {
  const header = request.headers.authorization;
  if (header && /^basic\s+/i.test(header)) {
    const decoded = Buffer.from(header.replace(/^basic\s+/i, ''), 'base64').toString('utf8');
    const sep = decoded.indexOf(':');
    if (sep > 0) {
      const decode = (s: string): string => {
        try {
          return decodeURIComponent(s.replaceAll('+', ' '));
        } catch {
          return s;
        }
      };
      return { clientId: decode(decoded.slice(0, sep)), clientSecret: decode(decoded.slice(sep + 1)) };
    }
  }
  return { clientId: param(params, 'client_id') || undefined, clientSecret: param(params, 'client_secret') || undefined };
}

/** The token of an `Authorization: Bearer …` header. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/** Sends a rendered HTML page with its headers. */
export function sendPage(reply: FastifyReply, page: RenderedPage): FastifyReply {
  return reply.code(page.status).headers(page.headers).send(page.html);
}

/** The forge's own base URL as the client sees it (scheme and Host of the request). */
export function baseUrl(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}
