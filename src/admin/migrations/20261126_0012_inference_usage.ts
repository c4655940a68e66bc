import { columnTypes } from '../../core/db/column-types.ts';
import type { Migration } from '../../core/db/migrator.ts';

/**
 * One row per inference request (issue 16 item 6): who called which model, the usage the provider reported, the
 * estimated cost and how the call ended. Rows carry no prompt or output content. The index serves the usage reads
 * (an Account's rows by time).
 */
export const inferenceUsageMigration: Migration = {
  name: '20261126_0012_inference_usage',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await db.schema
      .createTable('inference_usage')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('human_id', 'text', (c) => c.notNull())
      .addColumn('credential_id', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('model_identity', 'text')
      .addColumn('workload', 'text', (c) => c.notNull())
      .addColumn('input_tokens', t.bigint)
      .addColumn('output_tokens', t.bigint)
      .addColumn('cached_input_tokens', t.bigint)
      .addColumn('cost', 'text')
      .addColumn('cost_unit', 'text')
      .addColumn('started_at', t.bigint, (c) => c.notNull())
      .addColumn('duration_ms', t.bigint, (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('streamed', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('inference_usage_account_idx').on('inference_usage').columns(['account_id', 'started_at']).execute();
  },
};
