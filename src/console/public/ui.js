// Small DOM helpers and the words the console uses for the platform's codes. No innerHTML anywhere: every text
// from the platform goes in as a text node, so a model name can never become markup.

/**
 * Creates an element. `attrs` keys starting with `on` add listeners; `false`/`null`/`undefined` values are skipped.
 * @param {string} tag
 * @param {Record<string, unknown> | null} [attrs]
 * @param {...(Node | string | number | null | undefined | false | (Node | string)[])} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    else if (name === 'className') el.className = String(value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

/**
 * @param {Element} el
 * @param {unknown[]} children
 */
function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** @param {Element} el @param {...(Node | string | null | undefined | false | (Node | string)[])} children */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

/** What each `unavailable_reason` means (spec "Model row"). */
export const REASONS = {
  provider_disabled: 'The provider lane is off',
  model_unavailable: 'Marked invalid (the provider no longer lists it, or an administrator invalidated it)',
  model_hidden: 'Hidden by an administrator',
  missing_credential: 'No API key or credential is installed',
  reauthorization_required: 'The provider needs to be authorized again',
  credential_unusable: 'The stored credential cannot be used',
};

/** @param {string | null | undefined} reason */
export function reasonInWords(reason) {
  if (!reason) return 'Available';
  return /** @type {Record<string, string>} */ (REASONS)[reason] ?? reason;
}

/** What each model test `outcome` means (spec "Endpoints" rule 8). */
export const OUTCOMES = {
  succeeded: 'The provider answered the test request: this connection works.',
  not_found: 'The model is not known to the platform.',
  provider_disabled: 'The provider lane is off, so no request was sent.',
  missing_credential: 'No credential is installed, so no request was sent.',
  reauthorization_required: 'The provider needs to be authorized again; no request was sent.',
  credential_unusable: 'The stored credential cannot be used; no request was sent.',
  model_plane_unavailable: 'The model catalog is unavailable right now.',
  test_input_unavailable: 'The definition lacks the input the fixed test needs (for example a speech voice).',
  request_invalid: 'The provider refused the request as invalid.',
  authentication_failed: 'The provider refused the API key.',
  quota_exceeded: 'The provider says the account is out of quota or credit.',
  rate_limited: 'The provider is rate limiting requests.',
  model_not_found: 'The provider does not know this model.',
  provider_error: 'The provider failed to answer (a server error on its side).',
  timed_out: 'The provider did not answer within 30 seconds.',
  connection_failed: 'The provider could not be reached.',
  invalid_response: 'The provider answered with something that is not a valid response.',
  request_rejected: 'The provider rejected the request.',
};

/** What each `availability_update` means (spec "Model test result"). */
export const AVAILABILITY_UPDATES = {
  unchanged: 'The model’s availability did not need to change.',
  applied: 'The model’s availability was updated from this result.',
  noop: 'The model’s availability already matched this result.',
  stale: 'Someone else changed the provider meanwhile, so this result was not saved. Reload before acting on it.',
  not_found: 'The model was gone by the time the result was saved.',
  invalid: 'The result could not be saved to the provider’s policy.',
};

/** @param {Record<string, string>} table @param {string} code */
export const words = (table, code) => table[code] ?? code;

const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
/** @param {number} n */
export const formatInt = (n) => integer.format(n);

/**
 * An alert box for a failed call, in words. A 403 `administrator_required` and an expired session get their own
 * sentences; a 409 `stale_object` offers a reload (never an automatic retry).
 * @param {unknown} error
 * @param {{ reload?: () => void }} [options]
 */
export function errorBox(error, options = {}) {
  const e = /** @type {{ status?: number, code?: string, message?: string, headers?: Headers }} */ (error);
  /** @type {(string | Node)[]} */
  let parts;
  switch (e.code) {
    case 'administrator_required':
      parts = ['Only owners and administrators can use the console. Your account is a member: ask an administrator to act for you.'];
      break;
    case 'unauthorized':
      parts = ['Your session has expired or was signed out. Please sign in again.'];
      break;
    case 'stale_object':
      parts = [
        'Someone else changed this provider since the page read it, so nothing was changed. Reload to see the current state, then try again.',
      ];
      if (options.reload) parts.push(' ', h('button', { type: 'button', onclick: options.reload, 'data-action': 'reload' }, 'Reload'));
      break;
    case 'rate_limited': {
      const wait = e.headers?.get('retry-after');
      parts = [`Too many requests. ${wait ? `Wait ${wait} seconds` : 'Wait a moment'} before trying again.`];
      break;
    }
    default:
      parts = [e.message ?? String(error)];
      if (e.code && e.code !== 'network_error') parts.push(h('span', { className: 'code' }, ` (${e.code})`));
  }
  return h('div', { className: 'error', role: 'alert', 'data-code': e.code ?? '' }, ...parts);
}

/** A page heading plus the element the page renders into. @param {string} title */
export function pageTitle(title) {
  document.title = `${title} · Platform console`;
  return h('h1', null, title);
}

/**
 * Moves focus to the main region after navigation, so keyboard and screen reader users start at the new page.
 */
export function focusMain() {
  document.getElementById('main')?.focus({ preventScroll: true });
}
