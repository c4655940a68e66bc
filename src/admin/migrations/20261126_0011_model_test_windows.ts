import type { Migration } from '../../core/db/migrator.ts';

/**
 * The model-test rate limit (spec Limits: 10 per Human per three minutes), kept in the database so every replica
 * counts the same attempts (src/admin/model-test/model-test.rate-limit.ts): one row per Human holding the times of
 * its recent attempts, replaced by compare-and-set.
 */
export const modelTestWindowsMigration: Migration = {
  name: '20261126_0011_model_test_windows',
  async up(db) {
    await db.schema
      .createTable('model_test_windows')
      .addColumn('human_id', 'text', (c) => c.primaryKey())
      // JSON array of epoch-ms times, oldest first, at most ten within the window.
      .addColumn('attempts', 'text', (c) => c.notNull())
      .execute();
  },
};
