import type { Kysely } from 'kysely';
import type { AdminTables } from '../admin.table.ts';
import type { CredentialMaterialRow } from '../admin.table.ts';
import type { PolicyKey } from '../policy/policy.store.ts';

// A transaction is a Kysely instance too, so one type takes both.
type Executor = Kysely<AdminTables>;

/** The material columns a write sets. */
export interface MaterialValues {
  material_kind: string | null;
  sealed: string | null;
  generation: number;
}

export async function findCredentialRow(db: Executor, key: PolicyKey): Promise<CredentialMaterialRow | undefined> {
  return db
    .selectFrom('model_provider_credentials')
    .selectAll()
    .where('account_id', '=', key.accountId)
    .where('provider_id', '=', key.providerId)
    .executeTakeFirst();
}

/** Inserts the first credential row of a provider; false when another writer created it first. */
export async function insertCredentialIfAbsent(db: Executor, key: PolicyKey, values: MaterialValues, now: number): Promise<boolean> {
  const result = await db
    .insertInto('model_provider_credentials')
    .values({ account_id: key.accountId, provider_id: key.providerId, ...values, reauthorization_required: 0, updated_at: now })
    .onConflict((oc) => oc.columns(['account_id', 'provider_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/**
 * Writes material only if the row still has the generation and sealed value the caller read (compare-and-set);
 * false when another writer changed it in between.
 */
export async function updateCredentialIfUnchanged(
  db: Executor,
  key: PolicyKey,
  expected: { generation: number; sealed: string | null },
  values: MaterialValues,
  now: number,
): Promise<boolean> {
  let query = db
    .updateTable('model_provider_credentials')
    .set({ ...values, updated_at: now })
    .where('account_id', '=', key.accountId)
    .where('provider_id', '=', key.providerId)
    .where('generation', '=', expected.generation);
  query = expected.sealed === null ? query.where('sealed', 'is', null) : query.where('sealed', '=', expected.sealed);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A page of rows holding material, for key rotation, in key order after `after`. */
export async function listSealedPage(
  db: Executor,
  after: { accountId: string; providerId: string } | null,
  limit: number,
): Promise<CredentialMaterialRow[]> {
  let query = db.selectFrom('model_provider_credentials').selectAll().where('sealed', 'is not', null);
  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb('account_id', '>', after.accountId),
        eb.and([eb('account_id', '=', after.accountId), eb('provider_id', '>', after.providerId)]),
      ]),
    );
  }
  return query.orderBy('account_id').orderBy('provider_id').limit(limit).execute();
}

/** Replaces one sealed value by its re-encryption, only if it is still the value that was read. */
export async function resealIfUnchanged(db: Executor, key: PolicyKey, previous: string, next: string): Promise<boolean> {
  const result = await db
    .updateTable('model_provider_credentials')
    .set({ sealed: next })
    .where('account_id', '=', key.accountId)
    .where('provider_id', '=', key.providerId)
    .where('sealed', '=', previous)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
