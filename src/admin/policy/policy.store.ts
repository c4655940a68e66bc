import type { Kysely } from 'kysely';
import { preparedOnPostgres } from '../../core/db/database.ts';
import type { AdminTables } from '../admin.table.ts';
import type { PolicyRow } from '../admin.table.ts';

// A transaction is a Kysely instance too, so one type takes both.
type Executor = Kysely<AdminTables>;

/** Identifies one provider policy. */
export interface PolicyKey {
  accountId: string;
  providerId: string;
}

export async function findPolicy(db: Executor, key: PolicyKey): Promise<PolicyRow | undefined> {
  return db
    .selectFrom('model_provider_policies')
    .selectAll()
    .where('account_id', '=', key.accountId)
    .where('provider_id', '=', key.providerId)
    .executeTakeFirst();
}

/** Which stored version a policy is at: `lock_version` and the row's `created_at`. */
export interface PolicyVersion {
  lock_version: number;
  created_at: number;
}

/**
 * Reads only a policy's version, for the write-time check of a command that found nothing to change: compiled once
 * and prepared on PostgreSQL, and without the document (up to 2 MiB) that `findPolicy` moves.
 */
export function compilePolicyVersionLookup(db: Executor): (key: PolicyKey) => Promise<PolicyVersion | undefined> {
  const compiled = db
    .selectFrom('model_provider_policies')
    .select(['lock_version', 'created_at'])
    .where('account_id', '=', '')
    .where('provider_id', '=', '')
    .compile();
  preparedOnPostgres(compiled.sql);
  return async (key) => {
    const result = await db.executeQuery<PolicyVersion>({ ...compiled, parameters: [key.accountId, key.providerId] });
    const row = result.rows[0];
    return row && { lock_version: Number(row.lock_version), created_at: Number(row.created_at) };
  };
}

/**
 * Creates a policy at version 0 unless one exists. The primary key makes this race-safe: of two creators one
 * inserts and the other gets `false` (its caller answers 409 `stale_object`).
 */
export async function insertPolicyIfAbsent(
  db: Executor,
  key: PolicyKey,
  values: { enabled: boolean; document: string },
  now: number,
): Promise<boolean> {
  const result = await db
    .insertInto('model_provider_policies')
    .values({
      account_id: key.accountId,
      provider_id: key.providerId,
      lock_version: 0,
      enabled: values.enabled ? 1 : 0,
      document: values.document,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.columns(['account_id', 'provider_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/**
 * The optimistic-locking idiom (STYLE.md 5): `UPDATE … SET …, lock_version = lock_version + 1 WHERE … AND
 * lock_version = ?`. Returns false when no row matched; the caller re-reads to tell `not_found` from
 * `stale_object`. With `createdAt`, the row must also be the one created then (a caller that computed the new
 * document from a copy it read earlier names that copy's row exactly).
 */
export async function updatePolicyIfVersion(
  db: Executor,
  key: PolicyKey,
  expectedVersion: number,
  values: { enabled: boolean; document: string },
  now: number,
  createdAt?: number,
): Promise<boolean> {
  let query = db
    .updateTable('model_provider_policies')
    .set((eb) => ({
      enabled: values.enabled ? 1 : 0,
      document: values.document,
      updated_at: now,
      lock_version: eb('lock_version', '+', 1),
    }))
    .where('account_id', '=', key.accountId)
    .where('provider_id', '=', key.providerId)
    .where('lock_version', '=', expectedVersion);
  if (createdAt !== undefined) query = query.where('created_at', '=', createdAt);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Sets or clears a provider's admission-delay floor (written by admission, part 2); never touches the policy or its version. */
export async function setUnavailableUntil(db: Executor, key: PolicyKey, until: number | null, now: number): Promise<void> {
  await db
    .insertInto('model_provider_admission')
    .values({ account_id: key.accountId, provider_id: key.providerId, unavailable_until: until, updated_at: now })
    .onConflict((oc) => oc.columns(['account_id', 'provider_id']).doUpdateSet({ unavailable_until: until, updated_at: now }))
    .execute();
}
