/** Roles a Human can hold in an Account. */
export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

/**
 * Credential planes. `session` is an API Session (bearer or browser cookie); `platform` tokens carry capabilities
 * and reach the admin API and the gRPC services; `member` and `executor` tokens reach only `/agent_api/v1`.
 */
export const PLANES = ['session', 'platform', 'member', 'executor'] as const;
export type Plane = (typeof PLANES)[number];
export type TokenPlane = Exclude<Plane, 'session'>;
export const TOKEN_PLANES: readonly TokenPlane[] = ['platform', 'member', 'executor'];

export const CAPABILITIES = [
  'CAP_PLATFORM_DOCUMENTS_CREATE',
  'CAP_PLATFORM_DOCUMENTS_LIST',
  'CAP_PLATFORM_DOCUMENTS_DELETE',
  'CAP_PLATFORM_OSV_READ',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** Readable prefixes, so a leaked credential is recognisable (and scannable) by kind. */
export const TOKEN_PREFIX: Record<Plane, string> = {
  session: 'pses',
  platform: 'pplat',
  member: 'pmem',
  executor: 'pexec',
};

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export function isTokenPlane(value: string): value is TokenPlane {
  return (TOKEN_PLANES as readonly string[]).includes(value);
}

export function isCapability(value: string): value is Capability {
  return (CAPABILITIES as readonly string[]).includes(value);
}

/** Who a request acts as, once its credential has been resolved. */
export interface Principal {
  readonly accountId: string;
  readonly humanId: string;
  readonly email: string;
  readonly role: Role;
  readonly plane: Plane;
  readonly capabilities: ReadonlySet<Capability>;
  readonly credentialId: string;
  /** How the credential arrived: an `Authorization` header or the browser session cookie. */
  readonly via: 'bearer' | 'cookie';
}

/** Why a request could not be authenticated; never says more than this to the client. */
type AuthRefusalReason = 'missing' | 'malformed' | 'unknown' | 'expired' | 'revoked' | 'inactive';

export type AuthResult = { ok: true; principal: Principal } | { ok: false; reason: AuthRefusalReason };
