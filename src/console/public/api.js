// The console's one door to the platform: the public session and admin routes, with the session bearer.

/** sessionStorage key: the bearer lives for this tab only and never in localStorage (issue 19 item 2). */
const SESSION_KEY = 'platform-console-session';

/** @typedef {{ token: string, email: string, role: string, expires_at: string | null }} Session */

/** An answer in the platform's error envelope, with its HTTP status. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   * @param {Headers | undefined} headers
   */
  constructor(status, code, message, headers) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

/** @returns {Session | null} */
export function currentSession() {
  const text = sessionStorage.getItem(SESSION_KEY);
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** @param {Session | null} session */
function storeSession(session) {
  if (session) sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
  else sessionStorage.removeItem(SESSION_KEY);
}

/** Listeners told when the platform refuses the bearer (expired, revoked): the shell shows the sign-in again. */
const expiredListeners = new Set();
/** @param {() => void} listener */
export function onSessionExpired(listener) {
  expiredListeners.add(listener);
}

/**
 * Calls a platform route. The bearer goes on every request (the cookie alone never mutates, spec Authentication 5).
 * Success gives the parsed body; an error answer throws an ApiError; nothing is ever retried.
 * @param {string} method
 * @param {string} path
 * @param {{ body?: unknown, query?: Record<string, string | undefined> }} [options]
 */
export async function api(method, path, options = {}) {
  const session = currentSession();
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  if (session) headers.authorization = `Bearer ${session.token}`;
  let url = path;
  if (options.query) {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(options.query)) if (value !== undefined && value !== '') params.set(name, value);
    const text = params.toString();
    if (text) url += `?${text}`;
  }
  /** @type {RequestInit} */
  const init = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(options.body);
  }
  let response;
  try {
    response = await fetch(url, init);
  } catch {
    throw new ApiError(0, 'network_error', 'The platform could not be reached. Check that it is running, then try again.', undefined);
  }
  const text = await response.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!response.ok) {
    const code = body?.error?.code ?? `http_${response.status}`;
    const message = body?.error?.message ?? `The platform answered HTTP ${response.status}.`;
    if (response.status === 401 && session && path !== '/api/v1/sessions') {
      storeSession(null);
      for (const listener of expiredListeners) listener();
    }
    throw new ApiError(response.status, code, message, response.headers);
  }
  return body;
}

/**
 * Signs in (POST /api/v1/sessions) and keeps the bearer for this tab.
 * @param {string} email
 * @param {string} password
 * @returns {Promise<Session>}
 */
export async function signIn(email, password) {
  storeSession(null);
  const answer = await api('POST', '/api/v1/sessions', { body: { email, password } });
  const s = answer.session;
  /** @type {Session} */
  const session = { token: s.token, email: s.human.email, role: s.human.role, expires_at: s.expires_at };
  storeSession(session);
  return session;
}

/** Signs out (DELETE /api/v1/sessions/current) and forgets the bearer even when the platform cannot be reached. */
export async function signOut() {
  try {
    if (currentSession()) await api('DELETE', '/api/v1/sessions/current');
  } finally {
    storeSession(null);
  }
}

/** Admin API paths. */
export const ADMIN = '/api/v1/admin';
/** @param {string} providerId @param {string} [suffix] */
export const providerPath = (providerId, suffix = '') => `${ADMIN}/model_providers/${encodeURIComponent(providerId)}${suffix}`;
