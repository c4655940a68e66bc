import { sql } from 'kysely';
import { columnTypes } from '../../core/db/column-types.ts';
import type { Migration } from '../../core/db/migrator.ts';

/**
 * The OSV corpus (src/osv/osv.table.ts). Id and name columns compare in byte order on both dialects: SQLite's
 * default BINARY collation, and `COLLATE "C"` on PostgreSQL, whose default collation follows the locale.
 */
export const osvMigration: Migration = {
  name: '20261121_0030_osv',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    const key = dialect === 'postgres' ? sql`text collate "C"` : sql`text`;
    await db.schema
      .createTable('osv_records')
      .addColumn('id', key, (c) => c.primaryKey())
      .addColumn('modified', 'text', (c) => c.notNull())
      .addColumn('modified_key', 'text', (c) => c.notNull())
      .addColumn('withdrawn', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('record', 'text', (c) => c.notNull())
      .addColumn('imported_at', t.bigint, (c) => c.notNull())
      .addColumn('generation', t.bigint, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('osv_records_generation_idx').on('osv_records').column('generation').execute();
    await db.schema
      .createTable('osv_affected')
      .addColumn('vuln_id', key, (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('ecosystem', 'text', (c) => c.notNull())
      .addColumn('name', key, (c) => c.notNull())
      .addColumn('coarse_min', 'text')
      .addColumn('coarse_max', 'text')
      .addColumn('data', 'text')
      .addPrimaryKeyConstraint('osv_affected_pk', ['vuln_id', 'seq'])
      .execute();
    await db.schema
      .createTable('osv_aliases')
      .addColumn('alias', key, (c) => c.notNull())
      .addColumn('vuln_id', key, (c) => c.notNull())
      .addPrimaryKeyConstraint('osv_aliases_pk', ['alias', 'vuln_id'])
      .execute();
    await db.schema.createIndex('osv_aliases_vuln_idx').on('osv_aliases').column('vuln_id').execute();
    await db.schema
      .createTable('osv_corpus')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('generation', t.bigint, (c) => c.notNull())
      .addColumn('updated_at', t.bigint, (c) => c.notNull())
      .execute();
    await db.insertInto('osv_corpus').values({ id: 1, generation: 0, updated_at: 0 }).execute();
  },
};
