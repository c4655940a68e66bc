import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import type { AdminTables } from '../admin.table.ts';
import { rateRefusal, streamRefusal, windowStartOf, type InferenceLimiter, type LimitSettings } from './inference.limits.types.ts';

/** Rounds before a request gives up on a row other replicas keep changing (only in a tight race on one credential). */
const ATTEMPTS = 8;

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

  async function countRequest(credentialId: string, windowStart: number): Promise<boolean> {
    const limit = settings.ratePerMinute;
    const updated = await db
      .updateTable('inference_rate_windows')
      .set({
        // Both right-hand sides read the row as it was, so the new minute starts at 1 and the old one counts on.
        requests: sql<number>`case when window_start < ${windowStart} then 1 else requests + 1 end`,
        window_start: sql<number>`case when window_start < ${windowStart} then ${windowStart} else window_start end`,
      })
      .where('credential_id', '=', credentialId)
      .where((eb) => eb.or([eb('window_start', '<', windowStart), eb('requests', '<', limit)]))
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 1) return true;
    const inserted = await db
      .insertInto('inference_rate_windows')
      .values({ credential_id: credentialId, window_start: windowStart, requests: 1 })
      .onConflict((oc) => oc.column('credential_id').doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  async function takeSlot(credentialId: string, slot: number, leaseId: string, now: number): Promise<boolean> {
    const taken = await db
      .insertInto('inference_stream_slots')
      .values({ credential_id: credentialId, slot, lease_id: leaseId, expires_at: now + settings.streamLeaseMs })
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
    async admitRequest(credentialId) {
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
    },

    async openStream(credentialId) {
      const now = clock.now();
      const rows = await db
        .selectFrom('inference_stream_slots')
        .select(['slot', 'expires_at'])
        .where('credential_id', '=', credentialId)
        .execute();
      const held = new Set(rows.filter((r) => Number(r.expires_at) > now).map((r) => Number(r.slot)));
      const leaseId = randomUUID();
      for (let slot = 0; slot < settings.maxStreams; slot++) {
        if (held.has(slot) || !(await takeSlot(credentialId, slot, leaseId, now))) continue;
        let released = false;
        return {
          async release() {
            if (released) return;
            released = true;
            await db
              .deleteFrom('inference_stream_slots')
              .where('credential_id', '=', credentialId)
              .where('slot', '=', slot)
              .where('lease_id', '=', leaseId)
              .execute()
              // A slot that cannot be given back frees itself when its lease expires.
              .catch(() => undefined);
          },
        };
      }
      throw streamRefusal(settings.maxStreams);
    },
  };
}
