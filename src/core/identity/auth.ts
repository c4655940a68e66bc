import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import { sha256Hex } from '../crypto.ts';
import type { IdentityTables } from './identity.table.ts';
import { createFreshCoalescer } from '../coalesce.ts';
import { AppError } from '../errors.ts';
import { compileCredentialLookup } from './identity.store.ts';
import { isCapability, type AuthResult, type Capability, type Plane, type Principal, type Role } from './identity.model.ts';

/** Name of the browser session cookie set by `POST /api/v1/sessions`. */
export const SESSION_COOKIE = 'platform_session';

/** What a transport hands to the authenticator: the raw `Authorization` value and the session cookie, if any. */
export interface CredentialInput {
  authorization?: string | undefined;
  cookie?: string | undefined;
}

const BEARER = /^Bearer +([A-Za-z0-9._~+/=-]+) *$/i;
/** Tokens are `<prefix>_<43 base64url>`; anything far from that shape is refused before touching the database. */
const MAX_TOKEN_LENGTH = 128;

/**
 * Resolves credentials to a Principal on every request (no cache), so revocation, deactivation and demotion apply
 * to the very next request. Lookup is by SHA-256 of the presented token through a unique index: the comparison is
 * on a hash of the secret, so its timing reveals nothing usable about a valid token.
 */
export function createAuthenticator(deps: { db: Kysely<IdentityTables>; clock: Clock }) {
  // Concurrent requests presenting the same token share one lookup, but only one that started after they arrived
  // (see ../coalesce.ts), so this is not a cache: a revocation committed before a request arrived still refuses it.
  const lookups = createFreshCoalescer(compileCredentialLookup(deps.db));
  const findCredentialByHash = (hash: string) => lookups.get(hash);
  async function resolve(token: string, via: Principal['via']): Promise<AuthResult> {
    if (token.length > MAX_TOKEN_LENGTH) return { ok: false, reason: 'malformed' };
    const row = await findCredentialByHash(sha256Hex(token));
    if (!row) return { ok: false, reason: 'unknown' };
    if (row.revoked_at !== null) return { ok: false, reason: 'revoked' };
    if (row.expires_at !== null && row.expires_at <= deps.clock.now()) return { ok: false, reason: 'expired' };
    if (row.active !== 1) return { ok: false, reason: 'inactive' };
    const capabilities = (JSON.parse(row.capabilities) as string[]).filter(isCapability);
    return {
      ok: true,
      principal: {
        accountId: row.account_id,
        humanId: row.human_id,
        email: row.email,
        role: row.role as Role,
        plane: row.kind as Plane,
        capabilities: new Set(capabilities),
        credentialId: row.credential_id,
        via,
      },
    };
  }

  return {
    /**
     * An `Authorization` header, when present, is the only credential considered: an invalid or wrong-plane
     * header never falls back to the cookie (admin spec, Authentication 5). Cookies carry session bearers only.
     */
    async authenticate(input: CredentialInput): Promise<AuthResult> {
      // Present but empty still counts as present: it never falls back to the cookie.
      if (input.authorization !== undefined) {
        const match = BEARER.exec(input.authorization);
        if (!match?.[1]) return { ok: false, reason: 'malformed' };
        return resolve(match[1], 'bearer');
      }
      if (input.cookie !== undefined && input.cookie !== '') {
        const result = await resolve(input.cookie, 'cookie');
        if (result.ok && result.principal.plane !== 'session') return { ok: false, reason: 'unknown' };
        return result;
      }
      return { ok: false, reason: 'missing' };
    },
  };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;

const SAFE_METHODS = new Set(['GET', 'HEAD']);

function unauthorized(message = 'a valid credential is required'): AppError {
  return new AppError('unauthorized', message);
}

/**
 * The admin API boundary: an active owner/admin through an API Session or a platform-plane token. A cookie permits
 * only GET and HEAD; member-plane and executor tokens are 401 even for administrators; other Humans are 403.
 */
export function requireAdministrator(result: AuthResult, method: string): Principal {
  if (!result.ok) throw unauthorized();
  const p = result.principal;
  if (p.plane !== 'session' && p.plane !== 'platform') throw unauthorized('this credential is not accepted on the admin API');
  if (p.via === 'cookie' && !SAFE_METHODS.has(method.toUpperCase()))
    throw unauthorized('the session cookie permits only GET and HEAD; send an Authorization bearer');
  if (p.role !== 'owner' && p.role !== 'admin') throw new AppError('administrator_required', 'an owner or administrator is required');
  return p;
}

/** The member plane (`/agent_api/v1`): member-plane and executor tokens only. */
export function requireMemberPlane(result: AuthResult): Principal {
  if (!result.ok) throw unauthorized();
  const p = result.principal;
  if (p.plane !== 'member' && p.plane !== 'executor') throw unauthorized('this credential is not accepted on the member plane');
  return p;
}

/**
 * The gRPC services and their HTTP mappings: a platform-plane token carrying `capability`. A missing or bad
 * credential is `unauthorized` (gRPC UNAUTHENTICATED); a missing capability is `permission_denied`.
 */
export function requireCapability(result: AuthResult, capability: Capability): Principal {
  if (!result.ok) throw unauthorized();
  const p = result.principal;
  if (p.plane !== 'platform' || p.via !== 'bearer') throw unauthorized('a platform-plane access token is required');
  if (!p.capabilities.has(capability)) throw new AppError('permission_denied', `the token lacks ${capability}`);
  return p;
}

/** Any valid API Session (bearer, or cookie for GET/HEAD), for the session routes themselves. */
export function requireSession(result: AuthResult, method: string): Principal {
  if (!result.ok) throw unauthorized();
  const p = result.principal;
  if (p.plane !== 'session') throw unauthorized('an API Session is required');
  if (p.via === 'cookie' && !SAFE_METHODS.has(method.toUpperCase()))
    throw unauthorized('the session cookie permits only GET and HEAD; send an Authorization bearer');
  return p;
}
