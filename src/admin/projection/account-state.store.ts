import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../core/db/schema.ts';
import type { AccountState } from './projection.ts';

type Executor = Kysely<Database> | Transaction<Database>;

interface UnionRow {
  kind: 'p' | 'c' | 'a';
  provider_id: string;
  n1: number | null;
  n2: number | null;
  t1: number | null;
  t2: number | null;
  s1: string | null;
  s2: string | null;
}

/**
 * Everything the projection reads for one Account (policies, credentials, admission facts) in one statement: the
 * catalog read is the hot path, and one round trip instead of three is what keeps it close to an empty route on
 * PostgreSQL. Columns are positional per table (see the select lists).
 */
export async function loadAccountState(db: Executor, accountId: string): Promise<AccountState> {
  const result = await sql<UnionRow>`
    select 'p' as kind, provider_id, lock_version as n1, enabled as n2, created_at as t1, updated_at as t2, document as s1, cast(null as text) as s2
      from model_provider_policies where account_id = ${accountId}
    union all
    select 'c', provider_id, generation, reauthorization_required, updated_at, null, material_kind, sealed
      from model_provider_credentials where account_id = ${accountId}
    union all
    select 'a', provider_id, null, null, unavailable_until, updated_at, null, null
      from model_provider_admission where account_id = ${accountId}
  `.execute(db);
  const state: AccountState = { policies: [], credentials: [], admission: [] };
  for (const r of result.rows) {
    if (r.kind === 'p') {
      state.policies.push({ account_id: accountId, provider_id: r.provider_id, lock_version: Number(r.n1), enabled: Number(r.n2), created_at: Number(r.t1), updated_at: Number(r.t2), document: r.s1 ?? '' });
    } else if (r.kind === 'c') {
      state.credentials.push({ account_id: accountId, provider_id: r.provider_id, generation: Number(r.n1), reauthorization_required: Number(r.n2), updated_at: Number(r.t1), material_kind: r.s1, sealed: r.s2 });
    } else {
      state.admission.push({ account_id: accountId, provider_id: r.provider_id, unavailable_until: r.t1 === null ? null : Number(r.t1), updated_at: Number(r.t2) });
    }
  }
  return state;
}
