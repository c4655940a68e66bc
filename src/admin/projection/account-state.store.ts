import { CompiledQuery, type Kysely } from 'kysely';
import { preparedOnPostgres, type Dialect } from '../../core/db/database.ts';
import type { AdminTables } from '../admin.table.ts';
import type { AccountState } from './projection.ts';

// A transaction is a Kysely instance too, so one type takes both.
type Executor = Kysely<AdminTables>;

interface UnionRow {
  kind: 'p' | 'c' | 'a' | 'u';
  provider_id: string;
  n1: number | null;
  n2: number | null;
  t1: number | null;
  t2: number | null;
  s1: string | null;
  s2: string | null;
}

/**
 * Names one stored version of a policy document. Every policy write bumps `lock_version` and a policy row is
 * never deleted and recreated without a new `created_at`, so equal names mean equal documents.
 */
export function documentVersion(providerId: string, lockVersion: number, createdAt: number): string {
  return `${providerId}|${lockVersion}|${createdAt}`;
}

/**
 * The statement, written once per dialect. On PostgreSQL a policy document whose version the caller already holds
 * (a text array parameter) comes back as null: documents can reach 2 MiB each (spec: Limits), and the catalog read
 * should not move them over the network on every request. SQLite reads in-process, where the extra condition would
 * cost more than the copy it saves, so it always returns the documents.
 */
function stateSql(dialect: Dialect): string {
  const pg = dialect === 'postgres';
  const account = pg ? '$1' : '?';
  const document = pg
    ? `case when (provider_id || '|' || lock_version || '|' || created_at) = any($2::text[]) then null else document end`
    : 'document';
  return [
    `select 'p' as kind, provider_id, lock_version as n1, enabled as n2, created_at as t1, updated_at as t2,`,
    `       ${document} as s1, cast(null as text) as s2`,
    `  from model_provider_policies where account_id = ${account}`,
    `union all`,
    `select 'c', provider_id, generation, reauthorization_required, updated_at, null, material_kind, sealed`,
    `  from model_provider_credentials where account_id = ${account}`,
    `union all`,
    `select 'a', provider_id, null, null, unavailable_until, updated_at, null, null`,
    `  from model_provider_admission where account_id = ${account}`,
    `union all`,
    `select 'u', '', null, null, null, null, cost_unit, null`,
    `  from account_cost_units where account_id = ${account}`,
  ].join('\n');
}

// Prepared on PostgreSQL: planning the union was most of the statement's time (see preparedOnPostgres).
const SQL: Record<Dialect, string> = { postgres: preparedOnPostgres(stateSql('postgres')), sqlite: stateSql('sqlite') };

/** What `loadAccountState` returns: the state, with `document` null for each policy whose version was held. */
export interface LoadedState extends Omit<AccountState, 'policies'> {
  policies: (Omit<AccountState['policies'][number], 'document'> & { document: string | null })[];
}

const VERSION_SQL: Record<Dialect, string> = {
  postgres: preparedOnPostgres('select version from model_plane_versions where account_id = $1'),
  sqlite: 'select version from model_plane_versions where account_id = ?',
};

/**
 * The Account's model-plane version (migration 20261126_0014): it moves, by trigger and in the writing transaction,
 * with every write to the tables `loadAccountState` reads, and with nothing else. 0 before the first such write.
 */
export async function modelPlaneVersion(db: Executor, dialect: Dialect, accountId: string): Promise<number> {
  const result = await db.executeQuery<{ version: number | string }>(CompiledQuery.raw(VERSION_SQL[dialect], [accountId]));
  const row = result.rows[0];
  return row === undefined ? 0 : Number(row.version);
}

/**
 * Everything the projection reads for one Account (policies, credentials, admission facts, cost unit) in one statement: the
 * catalog read is the hot path, and one round trip instead of three is what keeps it close to an empty route on
 * PostgreSQL. The statement is written out per dialect and sent as a compiled query, so the hot path pays no
 * query-builder compilation. `held` lists the document versions (`documentVersion`) the caller has; on PostgreSQL
 * those documents are not sent again (their `document` is null). Columns are positional per table (see the select
 * lists).
 */
export async function loadAccountState(
  db: Executor,
  dialect: Dialect,
  accountId: string,
  held: readonly string[] = [],
): Promise<LoadedState> {
  const params = dialect === 'postgres' ? [accountId, [...held]] : [accountId, accountId, accountId, accountId];
  const result = await db.executeQuery<UnionRow>(CompiledQuery.raw(SQL[dialect], params));
  const state: LoadedState = { policies: [], credentials: [], admission: [], costUnit: null };
  for (const r of result.rows) {
    if (r.kind === 'p') {
      state.policies.push({
        account_id: accountId,
        provider_id: r.provider_id,
        lock_version: Number(r.n1),
        enabled: Number(r.n2),
        created_at: Number(r.t1),
        updated_at: Number(r.t2),
        document: r.s1,
      });
    } else if (r.kind === 'c') {
      state.credentials.push({
        account_id: accountId,
        provider_id: r.provider_id,
        generation: Number(r.n1),
        reauthorization_required: Number(r.n2),
        updated_at: Number(r.t1),
        material_kind: r.s1,
        sealed: r.s2,
      });
    } else if (r.kind === 'u') {
      state.costUnit = r.s1;
    } else {
      state.admission.push({
        account_id: accountId,
        provider_id: r.provider_id,
        unavailable_until: r.t1 === null ? null : Number(r.t1),
        updated_at: Number(r.t2),
      });
    }
  }
  return state;
}
