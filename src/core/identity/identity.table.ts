import type { Insertable, Selectable } from 'kysely';

export interface AccountTable {
  id: string;
  name: string;
  created_at: number;
}

export interface HumanTable {
  id: string;
  account_id: string;
  /** Lower-cased; unique across the deployment because sign-in is by email. */
  email: string;
  password_hash: string;
  role: string;
  /** 1 active, 0 deactivated. */
  active: number;
  created_at: number;
  updated_at: number;
}

/** Every credential (session bearers and the three token planes) lives here, stored only as a SHA-256 hash. */
export interface CredentialTable {
  id: string;
  kind: string;
  account_id: string;
  human_id: string;
  token_hash: string;
  name: string | null;
  /** JSON array of capability names (platform plane only). */
  capabilities: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

export interface IdentityTables {
  accounts: AccountTable;
  humans: HumanTable;
  credentials: CredentialTable;
}

export type AccountRow = Selectable<AccountTable>;
export type HumanRow = Selectable<HumanTable>;
export type CredentialRow = Selectable<CredentialTable>;
export type NewCredential = Insertable<CredentialTable>;
