import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../../core/db/database.ts';
import type { AdminTables } from '../admin.table.ts';

/** One UTC day in milliseconds: `started_at / DAY_MS` is the day number since the epoch in both dialects. */
export const DAY_MS = 86_400_000;

/**
 * Fraction digits the cost sum carries: the pricing grammar allows 12 fraction digits per million tokens, so a
 * stored cost has at most 12 + 6 (see ../inference/cost.ts). A row with more is counted as uncosted, never truncated.
 */
export const COST_SCALE = 18;

export interface UsageFilter {
  accountId: string;
  /** Epoch ms, inclusive. */
  from: number;
  /** Epoch ms, exclusive. */
  to: number;
  model?: string | undefined;
  humanId?: string | undefined;
}

/**
 * One (UTC day, model) group. The cost sum comes as three exact integer parts — the whole units and the fraction's
 * two nine-digit halves, each summed on its own — so neither database adds decimals in floating point.
 */
export interface UsageGroup {
  /** Days since 1970-01-01 (UTC). */
  day: number;
  model: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  /** Rows whose outcome is not `succeeded`. */
  failed: number;
  /** Rows that may have cost something but carry no cost, which makes the group's cost unknown. */
  uncosted: number;
  costWhole: bigint;
  costHigh: bigint;
  costLow: bigint;
}

/** PostgreSQL answers `count` and `sum(bigint)` as strings (bigint, numeric); SQLite as numbers. */
type Counted = number | string | bigint | null;

const toNumber = (value: Counted): number => (value === null ? 0 : Number(value));
const toBigInt = (value: Counted): bigint => (value === null ? 0n : BigInt(value));

/**
 * An Account's usage rows in `[from, to)` grouped by UTC day and model, ordered by day then model; the grouping and
 * every sum happen in SQL, so the answer has one row per group however many requests there were. The day is integer
 * division of the epoch-ms `started_at` (the same in both dialects, no date functions); the cost string is split at
 * its decimal point with the dialect's string search. Served by the (account_id, started_at) index.
 *
 * A row counts as uncosted when it has no cost and the call reached the provider (`succeeded`, `failed`, `aborted`);
 * a refusal (any other outcome, an error code) was never billed and adds nothing.
 */
export async function usageByDayAndModel(db: Kysely<AdminTables>, dialect: Dialect, filter: UsageFilter): Promise<UsageGroup[]> {
  const point = dialect === 'postgres' ? sql<number>`strpos(cost, '.')` : sql<number>`instr(cost, '.')`;
  const rows = db
    .selectFrom('inference_usage')
    .select([
      sql<number>`started_at / ${sql.lit(DAY_MS)}`.as('day'),
      'model',
      'outcome',
      'cost',
      'input_tokens',
      'output_tokens',
      'cached_input_tokens',
      sql<string | null>`case when ${point} = 0 then cost else substr(cost, 1, ${point} - 1) end`.as('whole'),
      sql<string | null>`case when ${point} = 0 then '' else substr(cost, ${point} + 1) end`.as('fraction'),
    ])
    .where('account_id', '=', filter.accountId)
    .where('started_at', '>=', filter.from)
    .where('started_at', '<', filter.to)
    .$if(filter.model !== undefined, (q) => q.where('model', '=', filter.model ?? ''))
    .$if(filter.humanId !== undefined, (q) => q.where('human_id', '=', filter.humanId ?? ''));
  const padded = sql`(fraction || ${sql.lit('0'.repeat(COST_SCALE))})`;
  const half = COST_SCALE / 2;
  const groups = await db
    .selectFrom(rows.as('u'))
    .select([
      'day',
      'model',
      sql<Counted>`count(*)`.as('requests'),
      sql<Counted>`sum(input_tokens)`.as('input_tokens'),
      sql<Counted>`sum(output_tokens)`.as('output_tokens'),
      sql<Counted>`sum(cached_input_tokens)`.as('cached_input_tokens'),
      sql<Counted>`sum(case when outcome <> 'succeeded' then 1 else 0 end)`.as('failed'),
      sql<Counted>`sum(case when (cost is null and outcome in ('succeeded', 'failed', 'aborted')) or length(fraction) > ${sql.lit(COST_SCALE)} then 1 else 0 end)`.as(
        'uncosted',
      ),
      sql<Counted>`sum(cast(whole as bigint))`.as('cost_whole'),
      sql<Counted>`sum(cast(substr(${padded}, 1, ${sql.lit(half)}) as bigint))`.as('cost_high'),
      sql<Counted>`sum(cast(substr(${padded}, ${sql.lit(half + 1)}, ${sql.lit(half)}) as bigint))`.as('cost_low'),
    ])
    .groupBy(['day', 'model'])
    .orderBy('day')
    .orderBy('model')
    .execute();
  return groups.map((g) => ({
    day: Number(g.day),
    model: g.model,
    requests: toNumber(g.requests),
    inputTokens: toNumber(g.input_tokens),
    outputTokens: toNumber(g.output_tokens),
    cachedInputTokens: toNumber(g.cached_input_tokens),
    failed: toNumber(g.failed),
    uncosted: toNumber(g.uncosted),
    costWhole: toBigInt(g.cost_whole),
    costHigh: toBigInt(g.cost_high),
    costLow: toBigInt(g.cost_low),
  }));
}
