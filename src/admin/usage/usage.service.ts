import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { Dialect } from '../../core/db/database.ts';
import { AppError } from '../../core/errors.ts';
import type { AdminTables } from '../admin.table.ts';
import { COST_SCALE, DAY_MS, usageByDayAndModel, type UsageGroup } from './usage.store.ts';

/** The range read when none is asked for: the last 30 days. */
export const DEFAULT_RANGE_DAYS = 30;
/** The longest range one read covers, so a read stays a bounded number of groups (days × models). */
export const MAX_RANGE_DAYS = 366;

/** What a caller may narrow the read to; timestamps are ISO-8601 text, checked here for every transport. */
export interface UsageQuery {
  from?: string | undefined;
  to?: string | undefined;
  model?: string | undefined;
  humanId?: string | undefined;
}

export interface UsageFigures {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  /** Exact decimal text in `cost_unit`; null when some request of the figure has no known cost. */
  cost: string | null;
}

export interface UsageDayModel extends UsageFigures {
  /** The UTC date, `YYYY-MM-DD`. */
  day: string;
  model: string;
  /** Requests whose outcome is not `succeeded` (an upstream failure, a client gone, a refusal). */
  failed: number;
}

/** The `GET /usage` answer's `usage` object (issue 16 item 6). */
export interface UsageReport {
  from: string;
  to: string;
  cost_unit: string | null;
  totals: UsageFigures;
  by_day_and_model: UsageDayModel[];
}

export interface UsageReadsDeps {
  db: Kysely<AdminTables>;
  dialect: Dialect;
  clock: Clock;
  costUnitOf(accountId: string): Promise<string | null>;
}

function instant(text: string | undefined, field: 'from' | 'to'): number | undefined {
  if (text === undefined) return undefined;
  // Date.parse accepts more than ISO-8601 (e.g. "March 7"); the shape check keeps the CLI as strict as the route.
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms))
    throw new AppError('parameter_invalid', `${field}: expected an ISO-8601 timestamp with a zone, such as 2026-01-31T00:00:00Z`);
  return ms;
}

/**
 * `[from, to)` in epoch ms: both given, or one end and the default span, or the last 30 days up to now. A `to`
 * before `from` or a span over 366 days is 400 `parameter_invalid` naming the field.
 */
export function usageRange(query: Pick<UsageQuery, 'from' | 'to'>, now: number): { from: number; to: number } {
  const askedFrom = instant(query.from, 'from');
  const askedTo = instant(query.to, 'to');
  const to = askedTo ?? (askedFrom === undefined ? now : Math.max(now, askedFrom));
  const from = askedFrom ?? to - DEFAULT_RANGE_DAYS * DAY_MS;
  if (to < from) throw new AppError('parameter_invalid', 'to: must not be before from');
  if (to - from > MAX_RANGE_DAYS * DAY_MS) throw new AppError('parameter_invalid', `to: the range is at most ${MAX_RANGE_DAYS} days`);
  return { from, to };
}

/** `digits / 10^COST_SCALE` as decimal text without trailing fraction zeros (`"0"` for zero). */
function decimalText(digits: bigint): string {
  const text = digits.toString().padStart(COST_SCALE + 1, '0');
  const whole = text.slice(0, -COST_SCALE);
  const fraction = text.slice(-COST_SCALE).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

const HALF = 10n ** BigInt(COST_SCALE / 2);

/** A group's cost in units of 10^-COST_SCALE, or null when unknown. */
function costDigits(group: UsageGroup): bigint | null {
  if (group.uncosted > 0) return null;
  return (group.costWhole * HALF + group.costHigh) * HALF + group.costLow;
}

/**
 * The usage reads (issue 16 item 6): an Account's requests, tokens and estimated cost per UTC day and model, and
 * their totals. Only the caller's Account is read. Costs are summed as exact integers (never floats); a figure whose
 * requests include one that reached the provider without a known cost is null rather than an undercount.
 */
export function createUsageReads(deps: UsageReadsDeps) {
  return {
    async report(accountId: string, query: UsageQuery): Promise<UsageReport> {
      const { from, to } = usageRange(query, deps.clock.now());
      const [groups, costUnit] = await Promise.all([
        usageByDayAndModel(deps.db, deps.dialect, { accountId, from, to, model: query.model, humanId: query.humanId }),
        deps.costUnitOf(accountId),
      ]);
      let total: bigint | null = 0n;
      const totals: UsageFigures = { requests: 0, input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, cost: null };
      const rows = groups.map((group): UsageDayModel => {
        const digits = costDigits(group);
        total = digits === null || total === null ? null : total + digits;
        totals.requests += group.requests;
        totals.input_tokens += group.inputTokens;
        totals.output_tokens += group.outputTokens;
        totals.cached_input_tokens += group.cachedInputTokens;
        return {
          day: new Date(group.day * DAY_MS).toISOString().slice(0, 10),
          model: group.model,
          requests: group.requests,
          input_tokens: group.inputTokens,
          output_tokens: group.outputTokens,
          cached_input_tokens: group.cachedInputTokens,
          cost: digits === null ? null : decimalText(digits),
          failed: group.failed,
        };
      });
      totals.cost = total === null ? null : decimalText(total);
      return {
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        cost_unit: costUnit,
        totals,
        by_day_and_model: rows,
      };
    },
  };
}

/** @public the reads' shape, for the routes and the CLI */
export type UsageReads = ReturnType<typeof createUsageReads>;
