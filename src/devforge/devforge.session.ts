/**
 * Browser sessions of the dev forge: a random id in the `_gitlab_session` cookie (HttpOnly, SameSite=Lax), a
 * Rails-style authenticity token bound to each session, and rotation of the id on sign-in (no session fixation).
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DevForgeStore } from './devforge.store.ts';
import { secretsEqual } from './devforge.store.ts';
import type { SessionRecord } from './devforge.types.ts';

/** GitLab's session cookie name. */
const SESSION_COOKIE = '_gitlab_session';

/** Sessions kept at most; the oldest are dropped first (the forge is a dev stand-in, memory must stay bounded). */
const MAX_SESSIONS = 10_000;

/** Session handling over the store. */
export interface SessionManager {
  /** The session named by the request's cookie, if it exists. */
  current(request: FastifyRequest): SessionRecord | undefined;
  /** The current session, or a new anonymous one whose cookie is set on the reply. */
  ensure(request: FastifyRequest, reply: FastifyReply): SessionRecord;
  /** Replaces the session by a new one for `userId` (new id, new authenticity token), keeping `returnTo`. */
  signIn(reply: FastifyReply, previous: SessionRecord | undefined, userId: number): SessionRecord;
  /** Ends the session and clears the cookie. */
  signOut(reply: FastifyReply, session: SessionRecord): void;
  /** Whether a posted authenticity token belongs to the session (constant time). */
  verifyCsrf(session: SessionRecord | undefined, token: string | undefined): boolean;
}

/** Creates the session manager. */
export function createSessionManager(deps: { store: DevForgeStore; clock: () => number }): SessionManager {
  const { store } = deps;

  function create(reply: FastifyReply, fields: Partial<SessionRecord>): SessionRecord {
    while (store.sessions.size >= MAX_SESSIONS) {
      const oldest = store.sessions.keys().next();
      if (oldest.done) break;
      store.sessions.delete(oldest.value);
    }
    const session: SessionRecord = {
      ...fields,
      id: randomBytes(16).toString('hex'),
      csrfToken: randomBytes(32).toString('base64url'),
      createdAt: deps.clock(),
    };
    store.sessions.set(session.id, session);
    reply.setCookie(SESSION_COOKIE, session.id, { path: '/', httpOnly: true, sameSite: 'lax' });
    return session;
  }

  return {
    current(request) {
      const id = request.cookies[SESSION_COOKIE];
      return id ? store.sessions.get(id) : undefined;
    },
    ensure(request, reply) {
      return this.current(request) ?? create(reply, {});
    },
    signIn(reply, previous, userId) {
      if (previous) store.sessions.delete(previous.id);
      return create(reply, { userId, returnTo: previous?.returnTo });
    },
    signOut(reply, session) {
      store.sessions.delete(session.id);
      reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax' });
    },
    verifyCsrf(session, token) {
      return session !== undefined && token !== undefined && token !== '' && secretsEqual(token, session.csrfToken);
    },
  };
}
