import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { AdminTables } from '../admin.table.ts';
import { AppError } from '../../core/errors.ts';
import { findCostUnit, insertCostUnitIfAbsent } from './cost-unit.store.ts';

/** A cost unit: a currency code such as `USD` or a unit name such as `credits`. */
export const COST_UNIT_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,31}$/;

/**
 * The Account's cost unit (spec: Endpoints rule 10). Accounts here are created by operators (bootstrap, CLI), the
 * spec's "advanced" Accounts, so there is no default: null until configured. Configure-once: a second `PUT` with
 * the same unit is an idempotent success, a different unit is 409 `conflict`.
 */
export function createCostUnitService(deps: { db: Kysely<AdminTables>; clock: Clock }) {
  return {
    async get(accountId: string): Promise<{ cost_unit: string | null }> {
      return { cost_unit: await findCostUnit(deps.db, accountId) };
    },

    async configure(accountId: string, costUnit: string): Promise<{ cost_unit: string }> {
      if (await insertCostUnitIfAbsent(deps.db, accountId, costUnit, deps.clock.now())) return { cost_unit: costUnit };
      const existing = await findCostUnit(deps.db, accountId);
      if (existing === costUnit) return { cost_unit: costUnit };
      throw new AppError('conflict', `the Account's cost unit is already configured (${existing ?? 'unknown'}) and cannot be replaced`);
    },
  };
}

/** @public the service's shape, for callers that hold one */
export type CostUnitService = ReturnType<typeof createCostUnitService>;
