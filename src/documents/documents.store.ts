import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../core/db/database.ts';
import type { DocumentsTables } from './documents.table.ts';
import type { DocumentRow, NewDocumentRow } from './documents.table.ts';

// A transaction is a Kysely instance too, so one type takes both.
type Executor = Kysely<DocumentsTables>;

/** Where a page starts: after this (created_at, id). */
export interface PageCursor {
  created_at: number;
  id: string;
}

/** The parts of a row needed to plan a page, without its blobs. */
export interface DocumentPageEntry {
  id: string;
  created_at: number;
  size_bytes: number;
  metadata_bytes: number;
}

/** True for a unique-constraint violation on either dialect (SQLite and PostgreSQL report them differently). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown } | null;
  return e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || e?.code === '23505';
}

export async function insertDocument(db: Executor, row: NewDocumentRow): Promise<void> {
  await db.insertInto('documents').values(row).execute();
}

export async function findDocumentByRequestId(db: Executor, accountId: string, requestId: string): Promise<DocumentRow | undefined> {
  return db.selectFrom('documents').selectAll().where('account_id', '=', accountId).where('request_id', '=', requestId).executeTakeFirst();
}

/**
 * Up to `limit` documents of an Account after `after`, in (created_at, id) order, without their blobs: the
 * service decides from the sizes how many fit the page before reading any ciphertext.
 */
export async function listDocumentPage(
  db: Executor,
  accountId: string,
  after: PageCursor | undefined,
  limit: number,
): Promise<DocumentPageEntry[]> {
  let query = db.selectFrom('documents').select(['id', 'created_at', 'size_bytes', 'metadata_bytes']).where('account_id', '=', accountId);
  if (after) {
    query = query.where((eb) =>
      eb.or([eb('created_at', '>', after.created_at), eb.and([eb('created_at', '=', after.created_at), eb('id', '>', after.id)])]),
    );
  }
  return query.orderBy('created_at').orderBy('id').limit(limit).execute();
}

/** The full rows of `ids` (all of one Account), in (created_at, id) order. */
export async function getDocuments(db: Executor, accountId: string, ids: readonly string[]): Promise<DocumentRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('documents')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', 'in', [...ids])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/**
 * Deletes a document of an Account; false when there is none (or it belongs to another Account). On SQLite,
 * `secure_delete` makes the freed pages be overwritten with zeros; in WAL mode the older page images (with the
 * ciphertext) stay in the `-wal` file until `checkpointDeleted` runs.
 */
export async function deleteDocument(db: Executor, dialect: Dialect, accountId: string, id: string): Promise<boolean> {
  if (dialect === 'sqlite') await sql`PRAGMA secure_delete = ON`.execute(db);
  const result = await db.deleteFrom('documents').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * SQLite in WAL mode keeps every page image written since the last checkpoint in the `-wal` file, including the
 * ones that still hold a deleted ciphertext. A `TRUNCATE` checkpoint copies the current (zeroed) pages into the
 * database file and empties the `-wal` file. Best effort: with a reader in another process the checkpoint may be
 * partial (busy), and the next one finishes it; errors are ignored because the delete itself has succeeded.
 * PostgreSQL: nothing to do here (dead row versions stay until VACUUM; see docs/documents.md).
 */
export async function checkpointDeleted(db: Kysely<DocumentsTables>, dialect: Dialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  try {
    await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
  } catch {
    // Best effort (see above).
  }
}
