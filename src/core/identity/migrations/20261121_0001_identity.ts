import { columnTypes } from '../../db/column-types.ts';
import type { Migration } from '../../db/migrator.ts';

export const identityMigration: Migration = {
  name: '20261121_0001_identity',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await db.schema
      .createTable('accounts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', t.bigint, (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('humans')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('created_at', t.bigint, (c) => c.notNull())
      .addColumn('updated_at', t.bigint, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('humans_account_idx').on('humans').column('account_id').execute();
    await db.schema
      .createTable('credentials')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
      .addColumn('human_id', 'text', (c) => c.notNull().references('humans.id'))
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('name', 'text')
      .addColumn('capabilities', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('created_at', t.bigint, (c) => c.notNull())
      .addColumn('expires_at', t.bigint)
      .addColumn('revoked_at', t.bigint)
      .execute();
    await db.schema.createIndex('credentials_human_idx').on('credentials').column('human_id').execute();
  },
};
