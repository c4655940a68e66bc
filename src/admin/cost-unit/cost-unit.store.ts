import { sql, type Kysely } from 'kysely';
import type { AdminTables } from '../admin.table.ts';

// A transaction is a Kysely instance too, so one type takes both.
type Executor = Kysely<AdminTables>;

/**
 * The Account's configured unit, or null. Read on every priced inference call of an Account without one, so it is
 * written as SQL text: the query builder's work (expression tree, compilation) was several times the read itself.
 */
export async function findCostUnit(db: Executor, accountId: string): Promise<string | null> {
  const { rows } = await sql<{ cost_unit: string }>`select cost_unit from account_cost_units where account_id = ${accountId}`.execute(db);
  return rows[0]?.cost_unit ?? null;
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
