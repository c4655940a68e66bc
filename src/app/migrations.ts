import type { Migration } from '../core/db/migrator.ts';
import { IDENTITY_MIGRATIONS } from '../core/identity/migrations/index.ts';
import { ADMIN_MIGRATIONS } from '../admin/migrations/index.ts';
import { DOCUMENTS_MIGRATIONS } from '../documents/migrations/index.ts';
import { OSV_MIGRATIONS } from '../osv/migrations/index.ts';

/**
 * Every migration of the platform: each service owns its own (`src/<service>/migrations/`), and this is the one
 * list `platform migrate`, `serve` and the tests apply, in name order: the name decides when a migration runs (a later
 * service's tables may reference `accounts`), so services interleave as their migrations landed. The names and the
 * content of each landed file are pinned in `migrations.pin.json` (see migrations.test.ts).
 */
export const PLATFORM_MIGRATIONS: readonly Migration[] = [
  ...IDENTITY_MIGRATIONS,
  ...ADMIN_MIGRATIONS,
  ...DOCUMENTS_MIGRATIONS,
  ...OSV_MIGRATIONS,
].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
