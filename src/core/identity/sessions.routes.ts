import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { defineRoute, registerApiRoutes, type AnyApiRoute } from '../http/api-route.ts';
import { SESSION_COOKIE, type Authenticator } from './auth.ts';
import { ROLES } from './identity.model.ts';
import type { IdentityService } from './identity.service.ts';

// The route-table machinery (auth boundary, input parsing, OpenAPI) in core/http is shared with the admin API; the
// credential reader moved there with it and is re-exported for existing callers.
export { credentialsOf } from '../http/api-route.ts';

/** Base path of the session routes. */
const SESSIONS_BASE = '/api/v1/sessions';

const signInBody = z.object({
  email: z.string().min(1).max(320),
  password: z.string().min(1).max(1024),
});

const humanSchema = z.object({ id: z.string(), email: z.string(), role: z.enum(ROLES) });

const sessionCreatedSchema = z.object({
  session: z.object({
    id: z.string(),
    token: z.string().describe('The API Session bearer; shown once, also set as the HttpOnly session cookie'),
    expires_at: z.string().nullable().describe('ISO 8601 expiry'),
    account_id: z.string(),
    human: humanSchema,
  }),
});

const currentSessionSchema = z.object({
  session: z.object({
    id: z.string(),
    account_id: z.string(),
    via: z.enum(['bearer', 'cookie']).describe('How the credential arrived'),
    human: humanSchema,
  }),
});

const sessionRevokedSchema = z.object({ session: z.object({ id: z.string(), revoked: z.literal(true) }) });

export interface SessionRouteDeps {
  identity: IdentityService;
  sessionTtlMs: number;
}

/**
 * `POST /api/v1/sessions` (email + password → API Session bearer and browser cookie), `GET` and
 * `DELETE /api/v1/sessions/current`, as a route table: the same declarations register the routes and describe
 * them in `/api/v1/openapi.json`.
 */
function sessionRoutes(deps: SessionRouteDeps): AnyApiRoute[] {
  const tag = 'sessions';
  return [
    defineRoute({
      method: 'POST',
      path: SESSIONS_BASE,
      operationId: 'createSession',
      summary: 'Sign in with email and password: an API Session bearer, also set as an HttpOnly SameSite=Lax cookie',
      tag,
      auth: 'public',
      body: signInBody,
      response: sessionCreatedSchema,
      // Wrong email and wrong password give the same 401, so neither tells which emails exist.
      errors: ['unauthorized', 'rate_limited'],
      rateLimit: { max: 30, timeWindow: 60_000 },
      handler: async ({ body, reply }) => {
        const session = await deps.identity.signIn(body.email, body.password);
        void reply.setCookie(SESSION_COOKIE, session.token, {
          httpOnly: true,
          sameSite: 'lax',
          secure: reply.request.protocol === 'https',
          path: '/',
          maxAge: Math.floor(deps.sessionTtlMs / 1000),
        });
        return {
          session: {
            id: session.id,
            token: session.token,
            expires_at: session.expires_at,
            account_id: session.human.account_id,
            human: { id: session.human.human_id, email: session.human.email, role: session.human.role },
          },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${SESSIONS_BASE}/current`,
      operationId: 'getCurrentSession',
      summary: 'The API Session of the request (bearer, or the cookie)',
      tag,
      auth: 'session',
      response: currentSessionSchema,
      errors: ['unauthorized'],
      handler: async ({ principal }) => ({
        session: {
          id: principal.credentialId,
          account_id: principal.accountId,
          via: principal.via,
          human: { id: principal.humanId, email: principal.email, role: principal.role },
        },
      }),
    }),
    defineRoute({
      method: 'DELETE',
      path: `${SESSIONS_BASE}/current`,
      operationId: 'deleteCurrentSession',
      summary: 'Sign out: revokes the API Session (a bearer is required; the cookie permits only GET and HEAD)',
      tag,
      auth: 'session',
      response: sessionRevokedSchema,
      errors: ['unauthorized'],
      handler: async ({ principal, reply }) => {
        await deps.identity.revoke(principal.credentialId);
        void reply.clearCookie(SESSION_COOKIE, { path: '/' });
        return { session: { id: principal.credentialId, revoked: true as const } };
      },
    }),
  ];
}

/** Registers the session routes (see `sessionRoutes`). */
export function registerSessionRoutes(app: FastifyInstance, deps: SessionRouteDeps & { auth: Authenticator }): void {
  registerApiRoutes(app, sessionRoutes(deps), { auth: deps.auth });
}
