import { sql } from 'kysely';
import { columnTypes } from '../../core/db/column-types.ts';
import type { Migration } from '../../core/db/migrator.ts';

/** Model-provider admin API: provider policies, credentials, admission facts and cost units (src/admin/admin.table.ts). */
export const adminMigration: Migration = {
  name: '20261121_0010_admin',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await db.schema
      .createTable('model_provider_policies')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
      .addColumn('provider_id', 'text', (c) => c.notNull())
      // 32-bit on PostgreSQL: the spec's 0..2147483647 range is the column's own range.
      .addColumn('lock_version', 'integer', (c) => c.notNull().check(sqlCheck('lock_version')))
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('document', 'text', (c) => c.notNull())
      .addColumn('created_at', t.bigint, (c) => c.notNull())
      .addColumn('updated_at', t.bigint, (c) => c.notNull())
      // The unique key that makes insert-if-absent race-safe: a second creator conflicts instead of duplicating.
      .addPrimaryKeyConstraint('model_provider_policies_pk', ['account_id', 'provider_id'])
      .execute();
    await db.schema
      .createTable('model_provider_credentials')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
      .addColumn('provider_id', 'text', (c) => c.notNull())
      .addColumn('material_kind', 'text')
      .addColumn('sealed', 'text')
      .addColumn('generation', 'integer', (c) => c.notNull())
      .addColumn('reauthorization_required', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('updated_at', t.bigint, (c) => c.notNull())
      .addPrimaryKeyConstraint('model_provider_credentials_pk', ['account_id', 'provider_id'])
      .execute();
    await db.schema
      .createTable('model_provider_admission')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
      .addColumn('provider_id', 'text', (c) => c.notNull())
      .addColumn('unavailable_until', t.bigint)
      .addColumn('updated_at', t.bigint, (c) => c.notNull())
      .addPrimaryKeyConstraint('model_provider_admission_pk', ['account_id', 'provider_id'])
      .execute();
    await db.schema
      .createTable('account_cost_units')
      .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
      .addColumn('cost_unit', 'text', (c) => c.notNull())
      .addColumn('configured_at', t.bigint, (c) => c.notNull())
      .execute();
  },
};

function sqlCheck(column: string) {
  return sql`${sql.ref(column)} >= 0 and ${sql.ref(column)} <= 2147483647`;
}
