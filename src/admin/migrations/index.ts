import type { Migration } from '../../core/db/migrator.ts';
import { adminMigration } from './20261121_0010_admin.ts';
import { modelTestWindowsMigration } from './20261126_0011_model_test_windows.ts';
import { inferenceUsageMigration } from './20261126_0012_inference_usage.ts';
import { inferenceLimitsMigration } from './20261126_0013_inference_limits.ts';
import { modelPlaneVersionsMigration } from './20261126_0014_model_plane_versions.ts';

/** The admin API's migrations, in the order they landed. Add new ones at the end; never edit one. */
export const ADMIN_MIGRATIONS: readonly Migration[] = [
  adminMigration,
  modelTestWindowsMigration,
  inferenceUsageMigration,
  inferenceLimitsMigration,
  modelPlaneVersionsMigration,
];
