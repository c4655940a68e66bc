import type { Kysely } from 'kysely';
import { preparedOnPostgres } from '../db/database.ts';
import type { IdentityTables } from './identity.table.ts';
import type { AccountRow, CredentialRow, HumanRow, NewCredential } from './identity.table.ts';

/** SQL for accounts, humans and credentials. Every function takes the executor, so services own transactions. */
// A transaction is a Kysely instance too, so one type takes both.
type Db = Kysely<IdentityTables>;

export async function insertAccount(db: Db, row: AccountRow): Promise<void> {
  await db.insertInto('accounts').values(row).execute();
}

export async function findAccount(db: Db, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listAccounts(db: Db): Promise<AccountRow[]> {
  return db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function countAccounts(db: Db): Promise<number> {
  const row = await db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertHuman(db: Db, row: HumanRow): Promise<void> {
  await db.insertInto('humans').values(row).execute();
}

export async function findHuman(db: Db, id: string): Promise<HumanRow | undefined> {
  return db.selectFrom('humans').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findHumanByEmail(db: Db, email: string): Promise<HumanRow | undefined> {
  return db.selectFrom('humans').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function listHumans(db: Db, accountId: string): Promise<HumanRow[]> {
  return db.selectFrom('humans').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
}

export async function updateHuman(
  db: Db,
  id: string,
  patch: Partial<Pick<HumanRow, 'role' | 'active' | 'password_hash'>>,
  now: number,
): Promise<void> {
  await db
    .updateTable('humans')
    .set({ ...patch, updated_at: now })
    .where('id', '=', id)
    .execute();
}

export async function countActiveOwners(db: Db, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('humans')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('role', '=', 'owner')
    .where('active', '=', 1)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertCredential(db: Db, row: NewCredential): Promise<void> {
  await db.insertInto('credentials').values(row).execute();
}

function credentialByHashQuery(db: Db, tokenHash: string) {
  return db
    .selectFrom('credentials')
    .innerJoin('humans', 'humans.id', 'credentials.human_id')
    .select([
      'credentials.id as credential_id',
      'credentials.kind',
      'credentials.account_id',
      'credentials.human_id',
      'credentials.token_hash',
      'credentials.capabilities',
      'credentials.expires_at',
      'credentials.revoked_at',
      'humans.email',
      'humans.role',
      'humans.active',
    ])
    .where('credentials.token_hash', '=', tokenHash);
}

export type CredentialLookupRow = NonNullable<Awaited<ReturnType<ReturnType<typeof credentialByHashQuery>['executeTakeFirst']>>>;

/**
 * The same lookup compiled once: every authenticated request runs it, so the query builder's per-call compile is
 * worth skipping. The compiled statement has exactly one parameter, the hash.
 */
export function compileCredentialLookup(db: Kysely<IdentityTables>): (tokenHash: string) => Promise<CredentialLookupRow | undefined> {
  const compiled = credentialByHashQuery(db, '').compile();
  if (compiled.parameters.length !== 1) throw new Error('credential lookup must have exactly one parameter');
  // Prepared on PostgreSQL (a join, planned anew on every request otherwise).
  preparedOnPostgres(compiled.sql);
  return async (tokenHash) => {
    const result = await db.executeQuery<CredentialLookupRow>({ ...compiled, parameters: [tokenHash] });
    return result.rows[0];
  };
}

export async function findCredential(db: Db, id: string): Promise<CredentialRow | undefined> {
  return db.selectFrom('credentials').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listCredentials(
  db: Db,
  filter: { accountId?: string; humanId?: string; kinds?: string[] },
): Promise<CredentialRow[]> {
  let query = db.selectFrom('credentials').selectAll();
  if (filter.accountId !== undefined) query = query.where('account_id', '=', filter.accountId);
  if (filter.humanId !== undefined) query = query.where('human_id', '=', filter.humanId);
  if (filter.kinds !== undefined) query = query.where('kind', 'in', filter.kinds);
  return query.orderBy('created_at').orderBy('id').execute();
}

export async function revokeCredential(db: Db, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('credentials')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Revokes every live credential of a Human (on deactivation, so reactivation does not revive old secrets), or only
 * those of the given kinds (a password reset ends the sessions).
 */
export async function revokeCredentialsOf(db: Db, humanId: string, now: number, kinds?: readonly string[]): Promise<number> {
  let query = db.updateTable('credentials').set({ revoked_at: now }).where('human_id', '=', humanId).where('revoked_at', 'is', null);
  if (kinds !== undefined) query = query.where('kind', 'in', [...kinds]);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Locks the Humans of an Account for the rest of the transaction (PostgreSQL), so two concurrent demotions cannot
 * both see "another owner remains". SQLite transactions on one connection are already serial.
 */
export async function lockAccountHumans(db: Db, accountId: string, dialect: 'sqlite' | 'postgres'): Promise<void> {
  if (dialect !== 'postgres') return;
  await db.selectFrom('humans').select('id').where('account_id', '=', accountId).forUpdate().execute();
}
