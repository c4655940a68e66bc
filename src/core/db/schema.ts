import type { AdminTables } from '../../admin/admin.table.ts';
import type { DocumentsTables } from '../../documents/documents.table.ts';
import type { IdentityTables } from '../identity/identity.table.ts';
import type { OsvTables } from '../../osv/osv.table.ts';

/**
 * The database as Kysely sees it: every domain declares its tables in its own `*.table.ts` and is listed here.
 * Conventions (both dialects): ids are text, times are epoch milliseconds in bigint columns, booleans are
 * integers 0/1, JSON is text, binary is blob/bytea.
 */
export interface Database extends IdentityTables, OsvTables, DocumentsTables, AdminTables {}
