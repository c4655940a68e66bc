import type { Migration } from '../../core/db/migrator.ts';
import { osvMigration } from './20261121_0030_osv.ts';
import { osvAnswersMigration } from './20261121_0040_osv_answers.ts';

/** PlatformOSV's migrations, in the order they landed. Add new ones at the end; never edit one. */
export const OSV_MIGRATIONS: readonly Migration[] = [osvMigration, osvAnswersMigration];
