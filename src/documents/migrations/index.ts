import type { Migration } from '../../core/db/migrator.ts';
import { documentsMigration } from './20261121_0020_documents.ts';

/** PlatformDocuments' migrations, in the order they landed. Add new ones at the end; never edit one. */
export const DOCUMENTS_MIGRATIONS: readonly Migration[] = [documentsMigration];
