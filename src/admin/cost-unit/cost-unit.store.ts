import type { Kysely } from 'kysely';
import type { AdminTables } from '../admin.table.ts';

// A transaction is a Kysely instance too, so one type takes both.
type Executor = Kysely<AdminTables>;

export async function findCostUnit(db: Executor, accountId: string): Promise<string | null> {
  const row = await db.selectFrom('account_cost_units').select('cost_unit').where('account_id', '=', accountId).executeTakeFirst();
  return row?.cost_unit ?? null;
}

/** Configure-once: inserts unless a unit exists (the primary key settles races); true when this call set it. */
export async function insertCostUnitIfAbsent(db: Executor, accountId: string, costUnit: string, now: number): Promise<boolean> {
  const result = await db
    .insertInto('account_cost_units')
    .values({ account_id: accountId, cost_unit: costUnit, configured_at: now })
    .onConflict((oc) => oc.column('account_id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}
