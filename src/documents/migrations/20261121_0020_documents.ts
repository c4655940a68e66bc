import { columnTypes } from '../../core/db/column-types.ts';
import type { Migration } from '../../core/db/migrator.ts';

/** PlatformDocuments (src/documents): client-side encrypted documents of an Account. */
export const documentsMigration: Migration = {
  name: '20261121_0020_documents',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await db.schema
      .createTable('documents')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
      .addColumn('creator_human_id', 'text', (c) => c.notNull().references('humans.id'))
      .addColumn('size_bytes', t.bigint, (c) => c.notNull())
      .addColumn('ciphertext', t.blob, (c) => c.notNull())
      .addColumn('algorithm', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('nonce', t.blob, (c) => c.notNull())
      .addColumn('encrypted_metadata', t.blob, (c) => c.notNull())
      .addColumn('metadata_bytes', 'integer', (c) => c.notNull())
      .addColumn('request_id', 'text')
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('created_at', t.bigint, (c) => c.notNull())
      .execute();
    // Keyset pagination walks an Account's documents in (created_at, id) order.
    await db.schema.createIndex('documents_account_page_idx').on('documents').columns(['account_id', 'created_at', 'id']).execute();
    // Idempotent create: one document per (Account, request_id); NULLs (no request id) do not collide.
    await db.schema.createIndex('documents_account_request_idx').on('documents').columns(['account_id', 'request_id']).unique().execute();
  },
};
