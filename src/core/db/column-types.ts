import { sql, type RawBuilder } from 'kysely';
import type { Dialect } from './database.ts';

/** Column types that differ between the dialects, for migrations. */
export function columnTypes(dialect: Dialect): { blob: RawBuilder<unknown>; bigint: RawBuilder<unknown> } {
  return dialect === 'postgres' ? { blob: sql`bytea`, bigint: sql`bigint` } : { blob: sql`blob`, bigint: sql`integer` };
}
