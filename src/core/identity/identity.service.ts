import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Clock } from '../clock.ts';
import { hashPassword, randomPassword, randomToken, sha256Hex, verifyPassword } from '../crypto.ts';
import type { Dialect } from '../db/database.ts';
import type { IdentityTables } from './identity.table.ts';
import { AppError } from '../errors.ts';
import * as store from './identity.store.ts';
import type { CredentialRow, HumanRow } from './identity.table.ts';
import { CAPABILITIES, TOKEN_PREFIX, type Capability, type Plane, type Role, type TokenPlane } from './identity.model.ts';

export interface IdentityServiceDeps {
  db: Kysely<IdentityTables>;
  dialect: Dialect;
  /** scrypt cost as log2(N); 17 is OWASP's recommendation (tests may lower it). */
  passwordCost?: number;
  clock: Clock;
  /** Lifetime of API Sessions. */
  sessionTtlMs: number;
}

/** A Human as shown to operators (never the password hash). */
export interface HumanView {
  human_id: string;
  account_id: string;
  email: string;
  role: Role;
  active: boolean;
  created_at: string;
}

/** A credential as listed (never the token or its hash). */
export interface CredentialView {
  id: string;
  plane: Plane;
  account_id: string;
  human_id: string;
  name: string | null;
  capabilities: Capability[];
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

export interface CreatedToken extends CredentialView {
  /** Shown once; only its hash is stored. */
  token: string;
}

export interface BootstrapResult {
  account_id: string;
  human_id: string;
  email: string;
  password: string;
  session_bearer: string;
  platform_token: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function humanView(row: HumanRow): HumanView {
  return {
    human_id: row.id,
    account_id: row.account_id,
    email: row.email,
    role: row.role as Role,
    active: row.active === 1,
    created_at: new Date(row.created_at).toISOString(),
  };
}

function credentialView(row: CredentialRow): CredentialView {
  return {
    id: row.id,
    plane: row.kind as Plane,
    account_id: row.account_id,
    human_id: row.human_id,
    name: row.name,
    capabilities: JSON.parse(row.capabilities) as Capability[],
    created_at: new Date(row.created_at).toISOString(),
    expires_at: iso(row.expires_at),
    revoked_at: iso(row.revoked_at),
  };
}

function normalizeEmail(email: string): string {
  const value = email.trim().toLowerCase();
  if (!EMAIL.test(value) || value.length > 320) throw new AppError('parameter_invalid', 'email must be an email address');
  return value;
}

/**
 * Accounts, Humans and their credentials: the one place that creates, lists and revokes them. Used by the CLI,
 * `POST /api/v1/sessions` and the embedded bootstrap.
 */
export function createIdentityService(deps: IdentityServiceDeps) {
  const { db, clock } = deps;
  /** A hash of a random password, used to spend the same time when an email is unknown (no user enumeration). */
  let decoyHash: Promise<string> | undefined;

  async function issue(
    executor: Parameters<typeof store.insertCredential>[0],
    human: Pick<HumanRow, 'id' | 'account_id'>,
    plane: Plane,
    options: { name?: string | null; capabilities?: readonly Capability[]; expiresAt?: number | null },
  ): Promise<CreatedToken> {
    const token = randomToken(TOKEN_PREFIX[plane]);
    const now = clock.now();
    const row: CredentialRow = {
      id: randomUUID(),
      kind: plane,
      account_id: human.account_id,
      human_id: human.id,
      token_hash: sha256Hex(token),
      name: options.name ?? null,
      capabilities: JSON.stringify([...new Set(options.capabilities ?? [])].sort()),
      created_at: now,
      expires_at: options.expiresAt ?? null,
      revoked_at: null,
    };
    await store.insertCredential(executor, row);
    return { ...credentialView(row), token };
  }

  async function requireHuman(humanId: string): Promise<HumanRow> {
    const human = await store.findHuman(db, humanId);
    if (!human) throw new AppError('not_found', `no Human with id ${humanId}`);
    return human;
  }

  return {
    async createAccount(name: string): Promise<{ account_id: string; name: string }> {
      const trimmed = name.trim();
      if (trimmed === '' || trimmed.length > 200) throw new AppError('parameter_invalid', 'account name must be 1 to 200 characters');
      const id = randomUUID();
      await store.insertAccount(db, { id, name: trimmed, created_at: clock.now() });
      return { account_id: id, name: trimmed };
    },

    async listAccounts() {
      return (await store.listAccounts(db)).map((a) => ({
        account_id: a.id,
        name: a.name,
        created_at: new Date(a.created_at).toISOString(),
      }));
    },

    async countAccounts(): Promise<number> {
      return store.countAccounts(db);
    },

    /** Adds a Human; generates a password when none is given and returns it (shown once). */
    async addHuman(input: { accountId: string; email: string; role: Role; password?: string }): Promise<HumanView & { password: string }> {
      const email = normalizeEmail(input.email);
      if (!(await store.findAccount(db, input.accountId))) throw new AppError('not_found', `no Account with id ${input.accountId}`);
      if (await store.findHumanByEmail(db, email)) throw new AppError('conflict', `a Human with email ${email} already exists`);
      const password = input.password ?? randomPassword();
      if (password.length < 12) throw new AppError('parameter_invalid', 'password must be at least 12 characters');
      const now = clock.now();
      const row: HumanRow = {
        id: randomUUID(),
        account_id: input.accountId,
        email,
        password_hash: await hashPassword(password, deps.passwordCost),
        role: input.role,
        active: 1,
        created_at: now,
        updated_at: now,
      };
      await store.insertHuman(db, row);
      return { ...humanView(row), password };
    },

    async listHumans(accountId: string): Promise<HumanView[]> {
      if (!(await store.findAccount(db, accountId))) throw new AppError('not_found', `no Account with id ${accountId}`);
      return (await store.listHumans(db, accountId)).map(humanView);
    },

    async getHuman(humanId: string): Promise<HumanView> {
      return humanView(await requireHuman(humanId));
    },

    /**
     * The Human's id for an operator's argument: an email (anything with `@`, matched like sign-in) or an id. The
     * CLI takes either, so whoever lost the first-start banner can still name the owner (`owner@platform.local`).
     */
    async resolveHumanId(idOrEmail: string): Promise<string> {
      if (!idOrEmail.includes('@')) return idOrEmail;
      const human = await store.findHumanByEmail(db, normalizeEmail(idOrEmail));
      if (!human) throw new AppError('not_found', 'no Human with that email');
      return human.id;
    },

    /** Changes a role; the last active owner of an Account cannot be demoted. Applies to the next request. */
    async setRole(humanId: string, role: Role): Promise<HumanView> {
      return db.transaction().execute(async (trx) => {
        const found = await store.findHuman(trx, humanId);
        if (!found) throw new AppError('not_found', `no Human with id ${humanId}`);
        await store.lockAccountHumans(trx, found.account_id, deps.dialect);
        const human = (await store.findHuman(trx, humanId)) ?? found;
        if (
          human.role === 'owner' &&
          role !== 'owner' &&
          human.active === 1 &&
          (await store.countActiveOwners(trx, human.account_id)) <= 1
        ) {
          throw new AppError('conflict', 'cannot demote the last active owner of the Account');
        }
        await store.updateHuman(trx, humanId, { role }, clock.now());
        return humanView({ ...human, role });
      });
    },

    /** Deactivates a Human: every credential of theirs is revoked and stops working on the next request. */
    async deactivate(humanId: string): Promise<HumanView> {
      return db.transaction().execute(async (trx) => {
        const found = await store.findHuman(trx, humanId);
        if (!found) throw new AppError('not_found', `no Human with id ${humanId}`);
        await store.lockAccountHumans(trx, found.account_id, deps.dialect);
        const human = (await store.findHuman(trx, humanId)) ?? found;
        if (human.role === 'owner' && human.active === 1 && (await store.countActiveOwners(trx, human.account_id)) <= 1) {
          throw new AppError('conflict', 'cannot deactivate the last active owner of the Account');
        }
        const now = clock.now();
        await store.updateHuman(trx, humanId, { active: 0 }, now);
        // Reactivation must not revive old sessions and tokens: they end here, with the deactivation.
        await store.revokeCredentialsOf(trx, humanId, now);
        return humanView({ ...human, active: 0 });
      });
    },

    /**
     * Reactivates a deactivated Human (`platform humans activate`). Their old sessions and tokens stay revoked (the
     * deactivation ended them); they sign in again with their password, or get a new one with `resetPassword`.
     */
    async reactivate(humanId: string): Promise<HumanView> {
      const human = await requireHuman(humanId);
      await store.updateHuman(db, humanId, { active: 1 }, clock.now());
      return humanView({ ...human, active: 1 });
    },

    /**
     * Gives a Human a new random password (returned once; only its hash is stored) and revokes their API sessions,
     * since a session is what the old password bought: whoever held it is signed out on the next request.
     * Platform, member and executor tokens are separate credentials and stay valid (`platform tokens revoke` ends
     * them). A deactivated Human gets the password but still cannot sign in until activated.
     */
    async resetPassword(humanId: string): Promise<HumanView & { password: string; sessions_revoked: number }> {
      const human = await requireHuman(humanId);
      const password = randomPassword();
      // The slow hash runs before the transaction, which only swaps the hash and ends the sessions together.
      const passwordHash = await hashPassword(password, deps.passwordCost);
      return db.transaction().execute(async (trx) => {
        const now = clock.now();
        await store.updateHuman(trx, humanId, { password_hash: passwordHash }, now);
        const revoked = await store.revokeCredentialsOf(trx, humanId, now, ['session']);
        return { ...humanView(human), password, sessions_revoked: revoked };
      });
    },

    /**
     * Email + password sign-in. Unknown emails cost the same scrypt time as wrong passwords, and both give the
     * same refusal, so neither timing nor text tells which emails exist.
     */
    async signIn(emailInput: string, password: string): Promise<CreatedToken & { human: HumanView }> {
      const email = emailInput.trim().toLowerCase();
      const human = await store.findHumanByEmail(db, email);
      if (!human) {
        decoyHash ??= hashPassword(randomPassword(), deps.passwordCost);
        await verifyPassword(password, await decoyHash);
        throw new AppError('unauthorized', 'invalid email or password');
      }
      const valid = await verifyPassword(password, human.password_hash);
      if (!valid || human.active !== 1) throw new AppError('unauthorized', 'invalid email or password');
      const session = await issue(db, human, 'session', { expiresAt: clock.now() + deps.sessionTtlMs });
      return { ...session, human: humanView(human) };
    },

    /** Creates a token of a plane for a Human; capabilities only on the platform plane. */
    async createToken(input: {
      humanId: string;
      plane: TokenPlane;
      capabilities?: readonly Capability[];
      name?: string | null;
      expiresAt?: number | null;
    }): Promise<CreatedToken> {
      const human = await requireHuman(input.humanId);
      if (human.active !== 1) throw new AppError('conflict', 'the Human is deactivated');
      const capabilities = input.capabilities ?? [];
      if (input.plane !== 'platform' && capabilities.length > 0) {
        throw new AppError('parameter_invalid', `capabilities apply only to platform-plane tokens, not ${input.plane}`);
      }
      if (input.expiresAt != null && input.expiresAt <= clock.now())
        throw new AppError('parameter_invalid', 'expiry must be in the future');
      return issue(db, human, input.plane, { name: input.name ?? null, capabilities, expiresAt: input.expiresAt ?? null });
    },

    async listTokens(filter: { accountId?: string; humanId?: string }): Promise<CredentialView[]> {
      return (await store.listCredentials(db, { ...filter, kinds: ['platform', 'member', 'executor'] })).map(credentialView);
    },

    /** Revokes any credential by id (tokens and sessions); effective on the next request. */
    async revoke(credentialId: string): Promise<CredentialView> {
      const existing = await store.findCredential(db, credentialId);
      if (!existing) throw new AppError('not_found', `no credential with id ${credentialId}`);
      const now = clock.now();
      await store.revokeCredential(db, credentialId, now);
      return credentialView({ ...existing, revoked_at: existing.revoked_at ?? now });
    },

    /**
     * Creates an Account with an owner, a session bearer and an all-capability platform token (shown once), in one
     * transaction: a failure leaves no Account without an owner.
     */
    async bootstrap(input: { accountName: string; email: string; password?: string }): Promise<BootstrapResult> {
      const prepared = await prepareBootstrap(input);
      return db.transaction().execute((trx) => writeBootstrap(trx, prepared));
    },

    /**
     * The embedded first start: bootstraps only when no Account exists yet. Replicas starting together on
     * PostgreSQL serialise on an advisory lock, so exactly one of them creates (and prints) the owner.
     */
    async bootstrapIfEmpty(input: { accountName: string; email: string }): Promise<BootstrapResult | undefined> {
      if ((await store.countAccounts(db)) > 0) return undefined;
      const prepared = await prepareBootstrap(input);
      try {
        return await db.transaction().execute(async (trx) => {
          if (deps.dialect === 'postgres') await sql`select pg_advisory_xact_lock(7402120)`.execute(trx);
          if ((await store.countAccounts(trx)) > 0) return undefined;
          return writeBootstrap(trx, prepared);
        });
      } catch (error) {
        // Another process on the same SQLite file won the race: its owner stands.
        if ((await store.countAccounts(db)) > 0) return undefined;
        throw error;
      }
    },
  };

  interface PreparedBootstrap {
    accountName: string;
    email: string;
    password: string;
    passwordHash: string;
  }

  /** Validation and the slow password hash happen before the transaction opens. */
  async function prepareBootstrap(input: { accountName: string; email: string; password?: string }): Promise<PreparedBootstrap> {
    const accountName = input.accountName.trim();
    if (accountName === '' || accountName.length > 200) throw new AppError('parameter_invalid', 'account name must be 1 to 200 characters');
    const email = normalizeEmail(input.email);
    const password = input.password ?? randomPassword();
    if (password.length < 12) throw new AppError('parameter_invalid', 'password must be at least 12 characters');
    if (await store.findHumanByEmail(db, email)) throw new AppError('conflict', `a Human with email ${email} already exists`);
    return { accountName, email, password, passwordHash: await hashPassword(password, deps.passwordCost) };
  }

  async function writeBootstrap(trx: Transaction<IdentityTables>, p: PreparedBootstrap): Promise<BootstrapResult> {
    const now = clock.now();
    const accountId = randomUUID();
    await store.insertAccount(trx, { id: accountId, name: p.accountName, created_at: now });
    const human: HumanRow = {
      id: randomUUID(),
      account_id: accountId,
      email: p.email,
      password_hash: p.passwordHash,
      role: 'owner',
      active: 1,
      created_at: now,
      updated_at: now,
    };
    await store.insertHuman(trx, human);
    const session = await issue(trx, human, 'session', { expiresAt: now + deps.sessionTtlMs });
    const platform = await issue(trx, human, 'platform', { name: 'bootstrap', capabilities: CAPABILITIES });
    return {
      account_id: accountId,
      human_id: human.id,
      email: p.email,
      password: p.password,
      session_bearer: session.token,
      platform_token: platform.token,
    };
  }
}

export type IdentityService = ReturnType<typeof createIdentityService>;
