import type { IdentityTables } from '../identity/identity.table.ts';

/**
 * Core's own tables (identity). Each service declares its tables in its own `*.table.ts` and types its stores with
 * them; the whole database type is composed by the application (src/app/database.ts), never here.
 * Conventions (both dialects): ids are text, times are epoch milliseconds in bigint columns, booleans are
 * integers 0/1, JSON is text, binary is blob/bytea.
 */
export type CoreTables = IdentityTables;
