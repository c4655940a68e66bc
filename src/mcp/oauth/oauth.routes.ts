/**
 * HTTP of the OAuth endpoints (spec "Endpoints"): thin handlers that map requests to the OAuth service and write
 * its answers — redirects, the consent page, error pages, and RFC 6749 JSON with `Cache-Control: no-store`.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  consentPageHeaders,
  CONSENT_TTL_MS,
  cookieNames,
  csrfToken,
  formActionSources,
  isCsrfCookieValue,
  newCsrfCookieValue,
  renderConsentPage,
  renderErrorPage,
  verifyCsrfToken,
} from './oauth.consent.ts';
import {
  authorizationServerMetadata,
  authorizationServerPaths,
  isNarrowedMcpPath,
  narrowedResourcePrefixes,
  protectedResourceMetadata,
  protectedResourcePaths,
  type MetadataSettings,
} from './oauth.metadata.ts';
import { normalizeClientAddress } from './oauth.rate-limit.ts';
import { oauthError, sendOAuthJson, NO_STORE_HEADERS } from './oauth.errors.ts';
import { checkInput } from '../../core/validation.ts';
import { authorizeQuerySchema, callbackQuerySchema, consentFormSchema, revokeFormSchema, tokenFormSchema } from './oauth.schemas.ts';
import type { AuthorizeAnswer, OAuthService } from './oauth.service.ts';

export interface OAuthRouteDeps {
  service: OAuthService;
  metadata: MetadataSettings;
  forgeUrl: string;
  /** HMAC keys of the consent form's CSRF token: the first makes tokens, all are accepted (secret rotation). */
  csrfKeys: readonly Buffer[];
  /** Path prefixes to mount the endpoints under ('' and the path of `MCP_SERVER_URL`). */
  bases: readonly string[];
}

/** CORS for browser-based clients on metadata, `/register`, `/token`, `/revoke` and `/mcp` (issue 3 item 2). */
export function applyCors(reply: FastifyReply): void {
  void reply.header('access-control-allow-origin', '*');
  void reply.header('access-control-allow-methods', 'GET, POST, DELETE, OPTIONS');
  void reply.header('access-control-allow-headers', 'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id');
  void reply.header('access-control-expose-headers', 'www-authenticate, mcp-session-id, mcp-protocol-version');
  void reply.header('access-control-max-age', '86400');
}

function nonce(): string {
  return randomBytes(16).toString('base64');
}

export function registerOAuthRoutes(app: FastifyInstance, deps: OAuthRouteDeps): void {
  const { service } = deps;
  const serverUrl = deps.metadata.serverUrl;
  const names = cookieNames(serverUrl);
  const cookieBase = { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: names.secure };

  const csrfKey = deps.csrfKeys[0];
  if (csrfKey === undefined) throw new Error('no CSRF key');

  /** An error page; like every OAuth answer it is never cached. */
  const sendError = (
    reply: FastifyReply,
    status: number,
    title: string,
    message: string,
    headers: Record<string, string> = {},
  ): FastifyReply => {
    const n = nonce();
    for (const [name, value] of Object.entries({ ...consentPageHeaders(n, ["'none'"]), ...headers, ...NO_STORE_HEADERS }))
      void reply.header(name, value);
    return reply.status(status).send(renderErrorPage(title, message, n));
  };

  /**
   * The browser-facing endpoints (`/authorize`, its form, `/callback`) answer with a page or a redirect, never with
   * JSON: a failure nobody expected still gets a readable page instead of a dead end.
   */
  const browserRoute =
    (handler: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>) =>
    async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      try {
        return await handler(request, reply);
      } catch (error) {
        request.log.error({ err: error }, 'OAuth browser endpoint failed');
        return sendError(
          reply,
          500,
          'Something went wrong',
          'The sign-in could not continue. Start the connection again from your application in a few minutes.',
        );
      }
    };

  /** Writes an authorization answer; a consent page gets a CSRF cookie and a token bound to it. */
  const sendAuthorize = (request: FastifyRequest, reply: FastifyReply, answer: AuthorizeAnswer): FastifyReply => {
    for (const [name, value] of Object.entries(NO_STORE_HEADERS)) void reply.header(name, value);
    switch (answer.kind) {
      case 'redirect':
        if (answer.setConsentCookie)
          void reply.setCookie(names.consent, answer.setConsentCookie, { ...cookieBase, maxAge: Math.floor(CONSENT_TTL_MS / 1000) });
        return reply.redirect(answer.location, 302);
      case 'error_page':
        return sendError(reply, answer.status, answer.title, answer.message, answer.headers);
      case 'consent': {
        let csrfCookie = request.cookies[names.csrf];
        if (!isCsrfCookieValue(csrfCookie)) {
          csrfCookie = newCsrfCookieValue();
          void reply.setCookie(names.csrf, csrfCookie, cookieBase);
        }
        const n = nonce();
        const publisher = answer.client.kind === 'metadata_document' ? new URL(answer.client.clientId).host : undefined;
        for (const [name, value] of Object.entries(consentPageHeaders(n, formActionSources(deps.forgeUrl, answer.redirectUri))))
          void reply.header(name, value);
        return reply.status(200).send(
          renderConsentPage({
            clientName: answer.client.clientName,
            nameUnverified: answer.client.kind === 'virtual',
            ...(publisher ? { clientPublisher: publisher } : {}),
            redirectUri: answer.redirectUri,
            forgeHost: new URL(deps.forgeUrl).host,
            scope: answer.scope,
            formAction: `${serverUrl}/authorize`,
            sealedRequest: answer.sealedRequest,
            csrf: csrfToken(csrfKey, csrfCookie, answer.sealedRequest),
            nonce: n,
          }),
        );
      }
    }
  };

  const cors = { onRequest: async (_request: FastifyRequest, reply: FastifyReply) => applyCors(reply) };
  const preflight = async (_request: FastifyRequest, reply: FastifyReply) => reply.status(204).send();

  for (const path of protectedResourcePaths(serverUrl)) {
    app.get(path, cors, async () => protectedResourceMetadata(deps.metadata));
    app.options(path, cors, preflight);
  }
  // `/mcp/x/{toolsets}[/readonly]` is a resource of its own for a client that looks its document up from that URL
  // (the 401 challenge names `/mcp`'s, whose resource is a prefix of it; either document leads to the same sign-in).
  for (const prefix of narrowedResourcePrefixes(serverUrl)) {
    for (const suffix of ['/mcp/x/:toolsets', '/mcp/x/:toolsets/readonly']) {
      const path = `${prefix}${suffix}`;
      app.get(path, cors, async (request, reply) => {
        const resourcePath = `/mcp/x/${(request.params as { toolsets: string }).toolsets}${suffix.endsWith('/readonly') ? '/readonly' : ''}`;
        if (!isNarrowedMcpPath(resourcePath)) return sendOAuthJson(reply, oauthError(404, 'invalid_request', 'Unknown resource.'));
        return protectedResourceMetadata(deps.metadata, `${serverUrl}${resourcePath}`);
      });
      app.options(path, cors, preflight);
    }
  }
  for (const path of authorizationServerPaths(serverUrl)) {
    app.get(path, cors, async () => authorizationServerMetadata(deps.metadata));
    app.options(path, cors, preflight);
  }

  /** A browser request whose parameters do not fit the schema (not an object at all) gets a page, not JSON. */
  const malformedPage = (reply: FastifyReply): FastifyReply =>
    sendError(reply, 400, 'Invalid sign-in request', 'The sign-in request is malformed. Start the connection again from your application.');
  const malformedJson = (reply: FastifyReply): FastifyReply =>
    sendOAuthJson(reply, oauthError(400, 'invalid_request', 'Malformed request.'));

  for (const base of deps.bases) {
    app.post(`${base}/register`, cors, async (request, reply) =>
      sendOAuthJson(reply, await service.register(request.body, normalizeClientAddress(request.ip))),
    );
    app.options(`${base}/register`, cors, preflight);

    app.get(
      `${base}/authorize`,
      browserRoute(async (request, reply) => {
        const query = checkInput(authorizeQuerySchema, request.query, 'query');
        if (!query.ok) return malformedPage(reply);
        return sendAuthorize(
          request,
          reply,
          await service.authorize(query.value, request.cookies[names.consent], normalizeClientAddress(request.ip)),
        );
      }),
    );

    // The consent form posts here (same path as the page, so `form-action 'self'` covers it).
    app.post(
      `${base}/authorize`,
      browserRoute(async (request, reply) => {
        const form = checkInput(consentFormSchema, request.body ?? {}, 'body');
        const sealedRequest = form.ok ? form.value.request : '';
        if (!form.ok || !verifyCsrfToken(deps.csrfKeys, request.cookies[names.csrf], sealedRequest, form.value.csrf)) {
          request.log.warn('consent refused: CSRF token missing or wrong');
          return sendError(
            reply,
            403,
            'Request not accepted',
            'This approval did not come from the consent page. Start the connection again from your application.',
          );
        }
        return sendAuthorize(
          request,
          reply,
          await service.decideConsent({
            sealedRequest,
            decision: form.value.decision,
            consentCookie: request.cookies[names.consent],
            clientAddress: normalizeClientAddress(request.ip),
          }),
        );
      }),
    );

    app.get(
      `${base}/callback`,
      browserRoute(async (request, reply) => {
        const query = checkInput(callbackQuerySchema, request.query, 'query');
        if (!query.ok) return malformedPage(reply);
        return sendAuthorize(request, reply, await service.callback(query.value));
      }),
    );

    app.post(`${base}/token`, cors, async (request, reply) => {
      const form = checkInput(tokenFormSchema, request.body ?? {}, 'body');
      if (!form.ok) return malformedJson(reply);
      return sendOAuthJson(reply, await service.token(form.value, normalizeClientAddress(request.ip)));
    });
    app.options(`${base}/token`, cors, preflight);

    app.post(`${base}/revoke`, cors, async (request, reply) => {
      const form = checkInput(revokeFormSchema, request.body ?? {}, 'body');
      if (!form.ok) return malformedJson(reply);
      return sendOAuthJson(reply, await service.revoke(form.value));
    });
    app.options(`${base}/revoke`, cors, preflight);
  }
}
