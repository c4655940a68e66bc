import { columnTypes } from '../../core/db/column-types.ts';
import type { Migration } from '../../core/db/migrator.ts';

/**
 * The model-test rate limit (spec Limits: 10 per Human per three minutes), kept in the database so every replica
 * counts the same attempts (src/admin/model-test/model-test.rate-limit.ts).
 */
export const modelTestAttemptsMigration: Migration = {
  name: '20261126_0011_model_test_attempts',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await db.schema
      .createTable('model_test_attempts')
      .addColumn('human_id', 'text', (c) => c.notNull())
      .addColumn('attempted_at', t.bigint, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('model_test_attempts_human_idx').on('model_test_attempts').columns(['human_id', 'attempted_at']).execute();
  },
};
