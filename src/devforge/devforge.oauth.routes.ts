/**
 * The dev forge's OAuth endpoints with GitLab's shapes: `/oauth/authorize` (pages and redirects),
 * `/oauth/token`, `/oauth/token/info` and `/oauth/revoke` (forge-facts.md, "GitLab's OAuth (Doorkeeper)").
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { oauthError, oauthErrorHeaders, oauthErrorStatus } from './devforge.errors.ts';
import type { OAuthError } from './devforge.errors.ts';
import { bearerToken, clientCredentials, mergedParams, param, sendPage } from './devforge.http.ts';
import type { AuthorizeParams } from './devforge.oauth.authorize.ts';
import type { OAuthService } from './devforge.oauth.service.ts';
import { authorizePage, csrfRejectedPage, errorPage, redirectPage } from './devforge.pages.ts';
import type { SessionManager } from './devforge.session.ts';
import type { DevForgeStore } from './devforge.store.ts';
import type { DevForgeCounters } from './devforge.types.ts';

function authorizeParams(source: unknown): AuthorizeParams {
  const read = (name: keyof AuthorizeParams): string | undefined => param(source, name);
  return {
    client_id: read('client_id'),
    redirect_uri: read('redirect_uri'),
    response_type: read('response_type'),
    state: read('state'),
    scope: read('scope'),
    code_challenge: read('code_challenge'),
    code_challenge_method: read('code_challenge_method'),
  };
}

/** Doorkeeper's answer to a non-redirectable error on a posted authorize form: the error as JSON. */
function sendJsonError(reply: FastifyReply, err: OAuthError, state: string | undefined): FastifyReply {
  const body: Record<string, string> = { error: err.error, error_description: err.description };
  if (state) body.state = state;
  return reply.code(oauthErrorStatus(err.error)).headers(oauthErrorHeaders(err)).send(body);
}

/** Registers the OAuth routes in their own encapsulated scope (own body parsers and error handler). */
export async function registerOAuthRoutes(
  app: FastifyInstance,
  deps: { oauth: OAuthService; sessions: SessionManager; store: DevForgeStore; counters: DevForgeCounters },
): Promise<void> {
  const { oauth, sessions, store, counters } = deps;

  await app.register(async (scope) => {
    // Doorkeeper answers a body it cannot read like a missing parameter, never with a framework error.
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_req, _body, done) => done(null, {}));
    scope.setErrorHandler((error: { statusCode?: number }, request, reply) => {
      const status = error.statusCode ?? 500;
      if (status >= 500) {
        request.log.error({ err: error }, 'dev forge OAuth endpoint failed');
        const err = oauthError('server_error');
        return reply.code(500).headers(oauthErrorHeaders(err)).send({ error: err.error, error_description: err.description });
      }
      const err = oauthError('invalid_request');
      return reply.code(400).headers(oauthErrorHeaders(err)).send({ error: err.error, error_description: err.description });
    });

    // GitLab lets browser-based clients call the token and revoke endpoints from any origin, without cookies
    // (rack-cors in GitLab's config/application.rb).
    const corsPaths = new Set(['/oauth/token', '/oauth/revoke']);
    scope.addHook('onSend', async (request, reply, payload) => {
      if (request.headers.origin && corsPaths.has(request.url.split('?')[0] ?? '')) {
        reply.header('access-control-allow-origin', '*');
      }
      return payload;
    });
    for (const path of corsPaths) {
      scope.options(path, async (_request, reply) =>
        reply
          .code(200)
          .headers({
            'access-control-allow-origin': '*',
            'access-control-allow-methods': 'POST',
            'access-control-allow-headers': 'Authorization, Content-Type',
            'access-control-max-age': '7200',
          })
          .send(''),
      );
    }

    const signedInUser = (request: FastifyRequest) => {
      const session = sessions.current(request);
      const user = session?.userId === undefined ? undefined : store.users.get(session.userId);
      return { session, user };
    };

    scope.get('/oauth/authorize', async (request, reply) => {
      counters.authorize += 1;
      const params = authorizeParams(request.query);
      // The client and its redirect URI are checked before anything else: when either is wrong the answer is an
      // error page, never a redirect (and no detour through the sign-in page).
      const client = oauth.checkClient(params);
      if (client.kind === 'fatal') return sendPage(reply, errorPage(client.error.description));
      const { user } = signedInUser(request);
      if (!user) {
        const session = sessions.ensure(request, reply);
        session.returnTo = request.url;
        return reply.redirect('/users/sign_in', 302);
      }
      const result = oauth.preAuthorize(params);
      if (result.kind === 'fatal') return sendPage(reply, errorPage(result.error.description));
      if (result.kind === 'redirect') return reply.redirect(result.location, 302);
      const { preAuth } = result;
      if (oauth.canSkipConsent(preAuth, user.id)) {
        request.log.info({ event: 'devforge.authorize.skipped', application: preAuth.application.uid }, 'consent skipped');
        return sendPage(reply, redirectPage(oauth.approve(preAuth, user.id)));
      }
      const session = sessions.ensure(request, reply);
      return sendPage(
        reply,
        authorizePage({
          applicationName: preAuth.application.name,
          username: user.username,
          scopes: preAuth.scopes,
          csrfToken: session.csrfToken,
          fields: {
            client_id: preAuth.application.uid,
            redirect_uri: preAuth.redirectUri,
            state: preAuth.state,
            response_type: preAuth.responseType,
            scope: preAuth.scopes.join(' '),
            code_challenge: preAuth.codeChallenge,
            code_challenge_method: preAuth.codeChallengeMethod,
          },
        }),
      );
    });

    /** Authorize (POST) and Deny (DELETE, or POST with Rails' `_method=delete`). */
    const decide = async (request: FastifyRequest, reply: FastifyReply, decision: 'approve' | 'deny') => {
      counters.authorize += 1;
      const { session, user } = signedInUser(request);
      // Rails checks the authenticity token before authentication.
      if (!sessions.verifyCsrf(session, param(request.body, 'authenticity_token'))) {
        return sendPage(reply, csrfRejectedPage());
      }
      if (!user) return reply.redirect('/users/sign_in', 302);
      const params = authorizeParams(request.body);
      if (decision === 'deny') {
        const client = oauth.checkClient(params);
        if (client.kind === 'fatal') return sendJsonError(reply, client.error, params.state);
        request.log.info({ event: 'devforge.authorize.denied', application: client.application.uid }, 'authorization denied');
        return reply.redirect(oauth.denyLocation(client.redirectUri, params.state), 302);
      }
      const result = oauth.preAuthorize(params);
      if (result.kind === 'fatal') return sendJsonError(reply, result.error, params.state);
      if (result.kind === 'redirect') return reply.redirect(result.location, 302);
      request.log.info({ event: 'devforge.authorize.approved', application: result.preAuth.application.uid }, 'authorized');
      return reply.redirect(oauth.approve(result.preAuth, user.id), 302);
    };

    scope.post('/oauth/authorize', async (request, reply) =>
      decide(request, reply, param(request.body, '_method')?.toLowerCase() === 'delete' ? 'deny' : 'approve'),
    );
    scope.delete('/oauth/authorize', async (request, reply) => decide(request, reply, 'deny'));

    scope.post(
      '/oauth/token',
      {
        // Every answer of the token endpoint, errors included, must not be cached (RFC 6749 §5.1).
        onSend: async (_request, reply, payload) => {
          reply.header('cache-control', 'no-store');
          reply.header('pragma', 'no-cache');
          return payload;
        },
      },
      async (request, reply) => {
        counters.token += 1;
        const params = mergedParams(request);
        const answer = oauth.token(
          {
            grant_type: param(params, 'grant_type'),
            code: param(params, 'code'),
            redirect_uri: param(params, 'redirect_uri'),
            code_verifier: param(params, 'code_verifier'),
            refresh_token: param(params, 'refresh_token'),
            scope: param(params, 'scope'),
          },
          clientCredentials(request, params),
        );
        if (answer.status !== 200) {
          request.log.info({ event: 'devforge.token.refused', error: answer.body.error }, 'token request refused');
        }
        return reply.code(answer.status).headers(answer.headers).send(answer.body);
      },
    );

    scope.get('/oauth/token/info', async (request, reply) => {
      counters.tokenInfo += 1;
      // GitLab's `access_token_methods :from_access_token_param, :from_bearer_authorization, :from_bearer_param`.
      const token = param(request.query, 'access_token') || bearerToken(request) || param(request.query, 'bearer_token');
      const answer = oauth.tokenInfo(token);
      return reply.code(answer.status).headers(answer.headers).send(answer.body);
    });

    scope.post('/oauth/revoke', async (request, reply) => {
      counters.revoke += 1;
      const params = mergedParams(request);
      const answer = oauth.revoke(param(params, 'token'), param(params, 'token_type_hint'), clientCredentials(request, params));
      return reply.code(answer.status).headers(answer.headers).send(answer.body);
    });
  });
}
