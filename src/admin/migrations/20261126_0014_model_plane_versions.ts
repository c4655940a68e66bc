import { sql } from 'kysely';
import { columnTypes } from '../../core/db/column-types.ts';
import type { Migration } from '../../core/db/migrator.ts';

/** The tables whose rows define what an Account's model plane is: its catalog state and its cost unit. */
const DEFINING_TABLES = ['model_provider_policies', 'model_provider_credentials', 'model_provider_admission', 'account_cost_units'];

/**
 * A change counter per Account for the tables that define its model plane (src/admin/model-plane.ts): every insert,
 * update or delete of one of their rows adds one to the Account's `version`, by trigger, in the writing transaction.
 * A reader that took the version before reading the state can keep that state while the version stays equal, on any
 * replica and whoever wrote (a CLI command, another process): the counter moves with the very commit of the write,
 * and with nothing else (usage rows and rate counters live in other tables, so they no longer invalidate a cache
 * keyed on the whole database's change stamp). No foreign key: a row is never deleted, so a version never repeats.
 */
export const modelPlaneVersionsMigration: Migration = {
  name: '20261126_0014_model_plane_versions',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await db.schema
      .createTable('model_plane_versions')
      .addColumn('account_id', 'text', (c) => c.primaryKey())
      .addColumn('version', t.bigint, (c) => c.notNull())
      .execute();
    if (dialect === 'postgres') {
      await sql
        .raw(
          `create function model_plane_version_bump() returns trigger language plpgsql as $$
           begin
             insert into model_plane_versions (account_id, version)
               values (case when tg_op = 'DELETE' then old.account_id else new.account_id end, 1)
               on conflict (account_id) do update set version = model_plane_versions.version + 1;
             return null;
           end $$`,
        )
        .execute(db);
      for (const table of DEFINING_TABLES)
        await sql
          .raw(
            `create trigger ${table}_version after insert or update or delete on ${table}
             for each row execute function model_plane_version_bump()`,
          )
          .execute(db);
      return;
    }
    for (const table of DEFINING_TABLES)
      for (const [event, row] of [
        ['insert', 'new'],
        ['update', 'new'],
        ['delete', 'old'],
      ] as const)
        // An update never moves a row to another Account (account_id is part of every key), so `new` names it.
        await sql
          .raw(
            `create trigger ${table}_version_${event} after ${event} on ${table}
             begin
               insert into model_plane_versions (account_id, version) values (${row}.account_id, 1)
                 on conflict (account_id) do update set version = version + 1;
             end`,
          )
          .execute(db);
  },
};
