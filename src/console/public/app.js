// The console shell: sign-in, navigation between pages (hash routes), sign-out and the expired-session message.
import { currentSession, onSessionExpired, signIn, signOut } from './api.js';
import { errorBox, focusMain, h, replace } from './ui.js';

const main = /** @type {HTMLElement} */ (document.getElementById('main'));
const nav = /** @type {HTMLElement} */ (document.getElementById('nav'));
const who = /** @type {HTMLElement} */ (document.getElementById('who'));
const whoEmail = /** @type {HTMLElement} */ (document.getElementById('who-email'));
const notice = /** @type {HTMLElement} */ (document.getElementById('notice'));

/** Pages, loaded on first visit so the first load carries only the shell and the models page. */
const PAGES = {
  models: () => import('./models.js'),
  providers: () => import('./providers.js'),
  provider: () => import('./provider.js'),
  usage: () => import('./usage.js'),
};

/** @param {string} hash */
function route(hash) {
  const path = hash.replace(/^#\/?/, '');
  const [page = '', ...rest] = path.split('/');
  if (page === 'providers' && rest.length > 0) return { page: 'provider', arg: decodeURIComponent(rest.join('/')) };
  if (page === 'providers' || page === 'usage' || page === 'models') return { page, arg: '' };
  return { page: 'models', arg: '' };
}

/** @param {string} text */
function say(text) {
  notice.textContent = text;
}

let renderCount = 0;

async function render() {
  const session = currentSession();
  if (!session) {
    showSignIn();
    return;
  }
  nav.hidden = false;
  who.hidden = false;
  whoEmail.textContent = `${session.email} (${session.role})`;
  const { page, arg } = route(location.hash);
  for (const link of nav.querySelectorAll('a')) {
    const current = link.dataset.page === (page === 'provider' ? 'providers' : page);
    if (current) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const ticket = ++renderCount;
  main.setAttribute('aria-busy', 'true');
  try {
    const module = await PAGES[/** @type {keyof typeof PAGES} */ (page)]();
    if (ticket !== renderCount) return;
    const view = h('div', { className: 'page', 'data-page': page });
    replace(main, view);
    await module.render(view, arg);
  } catch (error) {
    if (ticket === renderCount) replace(main, errorBox(error));
  } finally {
    if (ticket === renderCount) main.removeAttribute('aria-busy');
  }
}

/** @param {string} [message] */
function showSignIn(message) {
  // A page still loading must not draw over the form.
  renderCount++;
  nav.hidden = true;
  who.hidden = true;
  const status = h('div', { id: 'sign-in-status', 'aria-live': 'assertive' });
  if (message) status.append(h('div', { className: 'error', role: 'alert' }, message));
  const email = h('input', { id: 'email', name: 'email', type: 'email', autocomplete: 'username', required: true });
  const password = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    { className: 'card sign-in', 'aria-labelledby': 'sign-in-title', novalidate: true },
    h('h1', { id: 'sign-in-title' }, 'Sign in'),
    h('p', { className: 'hint' }, 'For owners and administrators of the Account.'),
    h('label', { for: 'email' }, 'Email'),
    email,
    h('label', { for: 'password' }, 'Password'),
    password,
    status,
    button,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const e = /** @type {HTMLInputElement} */ (email);
    const p = /** @type {HTMLInputElement} */ (password);
    if (!e.value || !p.value) {
      replace(status, h('div', { className: 'error', role: 'alert' }, 'Enter your email and password.'));
      return;
    }
    button.setAttribute('disabled', '');
    replace(status, h('p', { className: 'loading' }, 'Signing in…'));
    signIn(e.value, p.value).then(
      (session) => {
        p.value = '';
        say(`Signed in as ${session.email}.`);
        if (!location.hash.startsWith('#/')) location.hash = '#/models';
        void render().then(focusMain);
      },
      (error) => {
        button.removeAttribute('disabled');
        p.value = '';
        const wrong = /** @type {{ status?: number }} */ (error).status === 401;
        replace(status, wrong ? h('div', { className: 'error', role: 'alert' }, 'The email or password is not right.') : errorBox(error));
        p.focus();
      },
    );
  });
  document.title = 'Sign in · Platform console';
  replace(main, form);
  email.focus();
}

onSessionExpired(() => showSignIn('Your session has expired or was signed out. Please sign in again.'));

document.getElementById('sign-out')?.addEventListener('click', () => {
  signOut().then(
    () => {
      say('Signed out.');
      showSignIn();
    },
    () => {
      say('Signed out of this tab; the platform could not be told.');
      showSignIn();
    },
  );
});

document.getElementById('skip')?.addEventListener('click', (event) => {
  // The skip link must not change the route (routes live in the hash too).
  event.preventDefault();
  focusMain();
});

window.addEventListener('hashchange', () => {
  void render().then(focusMain);
});

void render();
