import { columnTypes } from '../../core/db/column-types.ts';
import type { Migration } from '../../core/db/migrator.ts';

/**
 * The per-credential inference limits when no Redis is configured (issue 16 item 7,
 * src/admin/inference/inference.limits.db.ts): each credential's current minute and its request count, and its
 * stream slots, each held under a lease that expires so a crashed replica does not keep it.
 */
export const inferenceLimitsMigration: Migration = {
  name: '20261126_0013_inference_limits',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await db.schema
      .createTable('inference_rate_windows')
      .addColumn('credential_id', 'text', (c) => c.primaryKey())
      // Epoch ms of the minute being counted (a multiple of 60 000).
      .addColumn('window_start', t.bigint, (c) => c.notNull())
      .addColumn('requests', 'integer', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('inference_stream_slots')
      .addColumn('credential_id', 'text', (c) => c.notNull())
      .addColumn('slot', 'integer', (c) => c.notNull())
      .addColumn('lease_id', 'text', (c) => c.notNull())
      .addColumn('expires_at', t.bigint, (c) => c.notNull())
      .addPrimaryKeyConstraint('inference_stream_slots_pk', ['credential_id', 'slot'])
      .execute();
  },
};
