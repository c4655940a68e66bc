/**
 * The dev forge's browser routes outside OAuth: sign-in (Devise-like), sign-out and a minimal dashboard.
 */
import type { FastifyInstance } from 'fastify';
import { param, sendPage } from './devforge.http.ts';
import { csrfRejectedPage, homePage, signInPage } from './devforge.pages.ts';
import type { SessionManager } from './devforge.session.ts';
import { hashSecret, secretsEqual } from './devforge.store.ts';
import type { DevForgeStore } from './devforge.store.ts';

/** Devise's message for a failed sign-in (it never says which of the two was wrong). */
const INVALID_LOGIN_MESSAGE = 'Invalid login or password.';

/** Registers `/`, `GET|POST /users/sign_in` and `POST /users/sign_out`. */
export function registerWebRoutes(app: FastifyInstance, deps: { store: DevForgeStore; sessions: SessionManager }): void {
  const { store, sessions } = deps;

  const signedInUser = (userId: number | undefined) => (userId === undefined ? undefined : store.users.get(userId));

  app.get('/', async (request, reply) => {
    const session = sessions.current(request);
    const user = signedInUser(session?.userId);
    return sendPage(reply, homePage({ username: user?.username, csrfToken: session?.csrfToken }));
  });

  app.get('/users/sign_in', async (request, reply) => {
    const session = sessions.ensure(request, reply);
    if (signedInUser(session.userId)) {
      // Devise's `require_no_authentication`: a signed-in user is sent on to where they were going.
      const target = session.returnTo ?? '/';
      session.returnTo = undefined;
      return reply.redirect(target, 302);
    }
    const alert = session.flash;
    session.flash = undefined;
    return sendPage(reply, signInPage({ csrfToken: session.csrfToken, alert }));
  });

  app.post('/users/sign_in', async (request, reply) => {
    const session = sessions.current(request);
    if (!sessions.verifyCsrf(session, param(request.body, 'authenticity_token'))) {
      return sendPage(reply, csrfRejectedPage());
    }
    const login = param(request.body, 'user[login]') ?? '';
    const password = param(request.body, 'user[password]') ?? '';
    const user = login === '' ? undefined : store.findUserByLogin(login);
    // Compare even for an unknown login so timing does not reveal which logins exist.
    const passwordOk = secretsEqual(hashSecret(password), user?.passwordHash ?? hashSecret(`\u0000${password}`));
    if (!user || !passwordOk || !session) {
      if (session) session.flash = INVALID_LOGIN_MESSAGE;
      request.log.info({ event: 'devforge.sign_in.failed' }, 'sign-in refused');
      return reply.redirect('/users/sign_in', 302);
    }
    const fresh = sessions.signIn(reply, session, user.id);
    const target = fresh.returnTo ?? '/';
    fresh.returnTo = undefined;
    request.log.info({ event: 'devforge.sign_in', userId: user.id }, 'signed in');
    return reply.redirect(target, 302);
  });

  app.post('/users/sign_out', async (request, reply) => {
    const session = sessions.current(request);
    if (!sessions.verifyCsrf(session, param(request.body, 'authenticity_token')) || !session) {
      return sendPage(reply, csrfRejectedPage());
    }
    sessions.signOut(reply, session);
    return reply.redirect('/users/sign_in', 302);
  });
}
