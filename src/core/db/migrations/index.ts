import type { Migration } from '../migrator.ts';
import { identityMigration } from './20261121_0001_identity.ts';
import { adminMigration } from './20261121_0010_admin.ts';
import { documentsMigration } from './20261121_0020_documents.ts';
import { osvMigration } from './20261121_0030_osv.ts';
import { osvAnswersMigration } from './20261121_0040_osv_answers.ts';

/** Every migration of the platform, in any order (the migrator sorts by name). Add new ones at the end. */
export const MIGRATIONS: readonly Migration[] = [identityMigration, osvMigration, documentsMigration, adminMigration, osvAnswersMigration];
