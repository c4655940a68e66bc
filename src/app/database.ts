import type { AdminTables } from '../admin/admin.table.ts';
import type { CoreTables } from '../core/db/schema.ts';
import type { DocumentsTables } from '../documents/documents.table.ts';
import type { OsvTables } from '../osv/osv.table.ts';

/**
 * The whole database as Kysely sees it, composed here because only the composition root knows every service. Each
 * service types its stores with its own tables (`Kysely<AdminTables>`, …) and receives the connection narrowed to
 * them (`narrowTables` in core/db/database.ts).
 */
export interface PlatformDatabase extends CoreTables, AdminTables, DocumentsTables, OsvTables {}
