import { sql } from 'kysely';
import { columnTypes } from '../../core/db/column-types.ts';
import type { Migration } from '../../core/db/migrator.ts';

/**
 * The answers of each OSV record, computed once after import (src/osv/osv.answer.ts): `answer_json`, the canonical
 * proto3 JSON text of `platform.v1.Vulnerability` (what HTTP answers carry), and `answer_wire`, its protobuf
 * encoding (what gRPC answers carry), and `answer_size`, the byte length of the JSON text (the response size limit
 * counts it on both transports, so pages end at the same record whichever one asks). A Query answer is then
 * spliced from stored bytes instead of converting hundreds of records per call. All are null until computed, and
 * cleared when an import replaces the record.
 */
export const osvAnswersMigration: Migration = {
  name: '20261121_0040_osv_answers',
  async up(db, dialect) {
    await db.schema.alterTable('osv_records').addColumn('answer_json', 'text').execute();
    await db.schema.alterTable('osv_records').addColumn('answer_wire', columnTypes(dialect).blob).execute();
    await db.schema.alterTable('osv_records').addColumn('answer_size', 'integer').execute();
    // The records still to encode: each pass after an import walks this (small) index, not the whole corpus.
    await db.schema
      .createIndex('osv_records_unanswered_idx')
      .on('osv_records')
      .column('id')
      .where(sql.ref('answer_wire'), 'is', null)
      .where(sql.ref('withdrawn'), '=', 0)
      .execute();
  },
};
