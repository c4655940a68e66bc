import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { parseInput } from '../http/validate.ts';
import { SESSION_COOKIE, requireSession, type Authenticator } from './auth.ts';
import type { IdentityService } from './identity.service.ts';

const signInBody = z.object({
  email: z.string().min(1).max(320),
  password: z.string().min(1).max(1024),
});

/** Reads the credential parts of a request for the authenticator. */
export function credentialsOf(request: FastifyRequest): { authorization: string | undefined; cookie: string | undefined } {
  return { authorization: request.headers.authorization, cookie: request.cookies[SESSION_COOKIE] };
}

/**
 * `POST /api/v1/sessions` (email + password → API Session bearer and browser cookie), `GET` and
 * `DELETE /api/v1/sessions/current`.
 */
export function registerSessionRoutes(app: FastifyInstance, deps: { identity: IdentityService; auth: Authenticator; sessionTtlMs: number }): void {
  app.post('/api/v1/sessions', {
    config: { rateLimit: { max: 30, timeWindow: 60_000 } },
    handler: async (request, reply) => {
      const body = parseInput(signInBody, request.body ?? {}, 'body');
      const session = await deps.identity.signIn(body.email, body.password);
      void reply.setCookie(SESSION_COOKIE, session.token, {
        httpOnly: true,
        sameSite: 'lax',
        secure: request.protocol === 'https',
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
  });

  app.get('/api/v1/sessions/current', async (request) => {
    const principal = requireSession(await deps.auth.authenticate(credentialsOf(request)), request.method);
    return {
      session: {
        id: principal.credentialId,
        account_id: principal.accountId,
        via: principal.via,
        human: { id: principal.humanId, email: principal.email, role: principal.role },
      },
    };
  });

  app.delete('/api/v1/sessions/current', async (request, reply) => {
    const principal = requireSession(await deps.auth.authenticate(credentialsOf(request)), request.method);
    await deps.identity.revoke(principal.credentialId);
    void reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return { session: { id: principal.credentialId, revoked: true } };
  });
}
