import { randomUUID } from 'node:crypto';
import { CompiledQuery, PostgresAdapter, sql, type Kysely } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { preparedOnPostgres } from '../../core/db/database.ts';
import type { AdminTables } from '../admin.table.ts';
import {
  rateRefusal,
  streamRefusal,
  windowStartOf,
  type InferenceLimiter,
  type LimitSettings,
  type StreamSlot,
} from './inference.limits.types.ts';

/** Rounds before a request gives up on a row other replicas keep changing (only in a tight race on one credential). */
const ATTEMPTS = 8;
/**
 * How often a process deletes rate rows of past minutes and expired stream slots. Rows of credentials that stopped
 * calling (revoked tokens among them) would otherwise stay forever; the sweep is one indexless delete per table, rare
 * enough not to matter and frequent enough that the tables hold about as many rows as credentials active lately.
 */
export const LIMITS_SWEEP_MS = 10 * 60_000;

/**
 * The limits in the database, for deployments without Redis; every replica on the database shares them.
 *
 * Rate: one row per credential holding its current fixed minute and the requests counted in it. One conditional
 * `UPDATE` either moves the row to the new minute (count 1) or adds one while the count is under the limit; the
 * statement is atomic on SQLite and PostgreSQL alike, so two replicas cannot both take the last request. A credential
 * seen for the first time is inserted (a conflicting insert means another replica did it first: count again).
 *
 * Streams: slots numbered 0..N-1 per credential, each a row with a lease (the holder's id and an expiry). A slot is
 * taken by an insert, or by an upsert that only overwrites an expired lease, so a slot has one holder at a time; it is
 * given back by deleting the row if the lease is still ours. A crashed replica's slot frees itself when its lease
 * expires (the inference deadline plus a grace, the longest a stream can run).
 */
export function createDatabaseLimits(deps: { db: Kysely<AdminTables>; clock: Clock; settings: LimitSettings }): InferenceLimiter {
  const { db, clock, settings } = deps;
  // PostgreSQL: the counter updates commit without waiting for their WAL flush (`synchronous_commit` off for that
  // one transaction, set by the statement itself). Atomicity and isolation, which keep two replicas from both taking
  // the last request, are untouched; only durability is relaxed: a database server crash may forget the last few
  // hundred milliseconds of counts, letting a credential send that many more requests in the current minute. A rate
  // counter is no ledger (usage rows keep their synchronous commit), and this saves a WAL flush on every request.
  // SQLite in WAL mode with synchronous NORMAL already commits without a flush.
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  let lastSweep = clock.now();
  /** A one-row FROM item evaluated with the statement, so the setting holds for that statement's own transaction. */
  const asyncCommit = () => sql<{ off: string }>`(select set_config('synchronous_commit', 'off', true) as off)`.as('async_commit');

  /** Deletes rows nobody can need any more (see LIMITS_SWEEP_MS); a failure waits for the next sweep. */
  async function sweep(now: number): Promise<void> {
    lastSweep = now;
    try {
      await db.deleteFrom('inference_rate_windows').where('window_start', '<', windowStartOf(now)).execute();
      await db.deleteFrom('inference_stream_slots').where('expires_at', '<=', now).execute();
    } catch {
      // Nothing depends on the sweep: a stale row is ignored by every statement above.
    }
  }

  // The counting statement, written out once per dialect and sent as is (prepared on PostgreSQL): it runs for every
  // request or group of requests, and building it through the query builder (expression trees, compilation) cost
  // more CPU than SQLite took to run it. It adds `n` requests at once, or none: a new minute starts at `n` when `n`
  // fits the limit, the current one counts on while `requests + n` does.
  const countText = postgres
    ? preparedOnPostgres(`update inference_rate_windows
          set requests = case when window_start < $1 then $4::integer else requests + $4::integer end,
              window_start = case when window_start < $1 then $1 else window_start end
         from (select set_config('synchronous_commit', 'off', true) as off) as async_commit
        where credential_id = $2 and ((window_start < $1 and $4::integer <= $3::integer) or requests + $4::integer <= $3::integer)`)
    : `update inference_rate_windows
          set requests = case when window_start < ? then ? else requests + ? end,
              window_start = case when window_start < ? then ? else window_start end
        where credential_id = ? and ((window_start < ? and ? <= ?) or requests + ? <= ?)`;

  /** Counts `n` requests of the credential in the minute starting at `windowStart`, all or none; true when counted. */
  async function countRequests(credentialId: string, windowStart: number, n: number): Promise<boolean> {
    // Both right-hand sides read the row as it was, so the new minute starts at n and the old one counts on.
    const limit = settings.ratePerMinute;
    // better-sqlite3 binds positional parameters only once each.
    const parameters = postgres
      ? [windowStart, credentialId, limit, n]
      : [windowStart, n, n, windowStart, windowStart, credentialId, windowStart, n, limit, n, limit];
    const updated = await db.executeQuery(CompiledQuery.raw(countText, parameters));
    return updated.numAffectedRows === 1n;
  }

  async function countRequest(credentialId: string, windowStart: number): Promise<boolean> {
    if (await countRequests(credentialId, windowStart, 1)) return true;
    const inserted = await db
      .insertInto('inference_rate_windows')
      .values({ credential_id: credentialId, window_start: windowStart, requests: 1 })
      .onConflict((oc) => oc.column('credential_id').doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  /** One request counted on its own: counted, refused with the minute's allowance spent, or retried on a race. */
  async function admitOne(credentialId: string): Promise<void> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const now = clock.now();
      const windowStart = windowStartOf(now);
      if (await countRequest(credentialId, windowStart)) return;
      const row = await db
        .selectFrom('inference_rate_windows')
        .select(['window_start', 'requests'])
        .where('credential_id', '=', credentialId)
        .executeTakeFirst();
      // PostgreSQL answers bigint columns as strings.
      const rowWindow = Number(row?.window_start);
      if (row && rowWindow >= windowStart && Number(row.requests) >= settings.ratePerMinute)
        throw rateRefusal(settings.ratePerMinute, Math.max(rowWindow, windowStart), now);
    }
    throw new AppError('rate_limited', 'requests of this credential are arriving too fast to count; try again', {
      headers: { 'retry-after': '1' },
    });
  }

  // Group counting. A credential's requests that arrive while its count is being written, or in the same turn of the
  // event loop, are counted together by one statement (`requests + n`, all or none), so under load one credential's
  // many requests share one write (on SQLite one commit, on PostgreSQL one round trip) instead of paying one each.
  // The shared guarantee is unchanged: each statement is one atomic conditional update of the row every replica
  // counts on, so replicas together never admit more than the limit. When the group does not fit (the allowance is
  // nearly spent, or the credential has no row yet), its requests are counted one by one as before, so exactly as
  // many are admitted as fit and the rest are refused. At most one count per credential is in flight; a lone request
  // waits one `setImmediate` longer than before.
  interface Waiter {
    resolve(): void;
    reject(error: unknown): void;
  }
  const waiting = new Map<string, Waiter[]>();
  const counting = new Set<string>();

  async function countGroup(credentialId: string): Promise<void> {
    const group = waiting.get(credentialId);
    if (!group || counting.has(credentialId)) return;
    waiting.delete(credentialId);
    counting.add(credentialId);
    try {
      if (group.length > 1 && (await countRequests(credentialId, windowStartOf(clock.now()), group.length).catch(() => false))) {
        for (const w of group) w.resolve();
        return;
      }
      for (const w of group)
        await admitOne(credentialId).then(
          () => w.resolve(),
          (error: unknown) => w.reject(error),
        );
    } finally {
      counting.delete(credentialId);
      void countGroup(credentialId);
    }
  }

  async function takeSlot(credentialId: string, slot: number, leaseId: string, now: number): Promise<boolean> {
    const expiresAt = now + settings.streamLeaseMs;
    const insert = db.insertInto('inference_stream_slots');
    const taken = await (
      postgres
        ? insert
            .columns(['credential_id', 'slot', 'lease_id', 'expires_at'])
            .expression(
              db
                .selectFrom(asyncCommit())
                .select([
                  sql<string>`cast(${credentialId} as text)`.as('credential_id'),
                  sql<number>`cast(${slot} as integer)`.as('slot'),
                  sql<string>`cast(${leaseId} as text)`.as('lease_id'),
                  sql<number>`cast(${expiresAt} as bigint)`.as('expires_at'),
                ]),
            )
        : insert.values({ credential_id: credentialId, slot, lease_id: leaseId, expires_at: expiresAt })
    )
      .onConflict((oc) =>
        oc
          .columns(['credential_id', 'slot'])
          .doUpdateSet((eb) => ({ lease_id: eb.ref('excluded.lease_id'), expires_at: eb.ref('excluded.expires_at') }))
          .where('inference_stream_slots.expires_at', '<=', now),
      )
      .executeTakeFirst();
    return Number(taken.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  return {
    admitRequest(credentialId) {
      if (clock.now() - lastSweep >= LIMITS_SWEEP_MS) void sweep(clock.now());
      return new Promise<void>((resolve, reject) => {
        const group = waiting.get(credentialId);
        if (group) return void group.push({ resolve, reject });
        waiting.set(credentialId, [{ resolve, reject }]);
        // The next turn, not now: the requests that arrived in this turn join the group. While a count is in flight,
        // its end starts the next one.
        if (!counting.has(credentialId)) setImmediate(() => void countGroup(credentialId));
      });
    },

    async openStream(credentialId) {
      const now = clock.now();
      const leaseId = randomUUID();
      // Most credentials hold few streams: slot 0 is tried blind first, and only when it is held are the held slots
      // read to skip them (one round trip instead of two for the common case).
      if (await takeSlot(credentialId, 0, leaseId, now)) return slotRelease(credentialId, 0, leaseId);
      const rows = await db
        .selectFrom('inference_stream_slots')
        .select(['slot', 'expires_at'])
        .where('credential_id', '=', credentialId)
        .execute();
      const held = new Set(rows.filter((r) => Number(r.expires_at) > now).map((r) => Number(r.slot)));
      for (let slot = 1; slot < settings.maxStreams; slot++) {
        if (held.has(slot) || !(await takeSlot(credentialId, slot, leaseId, now))) continue;
        return slotRelease(credentialId, slot, leaseId);
      }
      throw streamRefusal(settings.maxStreams);
    },
  };

  /** The held slot's release: deletes the row if the lease is still ours. */
  function slotRelease(credentialId: string, slot: number, leaseId: string): StreamSlot {
    let released = false;
    return {
      async release() {
        if (released) return;
        released = true;
        const remove = db
          .deleteFrom('inference_stream_slots')
          .where('credential_id', '=', credentialId)
          .where('slot', '=', slot)
          .where('lease_id', '=', leaseId);
        await (postgres ? remove.using(asyncCommit()).execute() : remove.execute())
          // A slot that cannot be given back frees itself when its lease expires.
          .catch(() => undefined);
      },
    };
  }
}
