import type { Migration } from '../../db/migrator.ts';
import { identityMigration } from './20261121_0001_identity.ts';

/** Identity's migrations (core's own tables), in the order they landed. Add new ones at the end; never edit one. */
export const IDENTITY_MIGRATIONS: readonly Migration[] = [identityMigration];
