import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentVersion, loadAccountState, modelPlaneVersion } from '../../src/admin/projection/account-state.store.ts';
import { emptyDocument, serializeDocument, withHidden } from '../../src/admin/policy/policy.document.ts';
import { insertPolicyIfAbsent, setUnavailableUntil, updatePolicyIfVersion } from '../../src/admin/policy/policy.store.ts';
import { insertCredentialIfAbsent } from '../../src/admin/credentials/credentials.store.ts';
import { insertCostUnitIfAbsent } from '../../src/admin/cost-unit/cost-unit.store.ts';
import { insertUsage } from '../../src/admin/inference/usage.store.ts';
import { dialects } from '../support/databases.ts';
import { openHarness, TEST_CATALOG, type Harness } from './admin-harness.ts';
import { narrowTables } from '../../src/core/db/database.ts';
import type { AdminTables } from '../../src/admin/admin.table.ts';
import type { PlatformDatabase } from '../../src/app/database.ts';

describe.each(dialects)('the account-state snapshot on %s', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness(dialect, { catalog: TEST_CATALOG });
  });
  afterAll(async () => h.close());

  it('[ADM-READ-5] reads policies, credentials and admission facts in one statement and resends only documents the caller does not hold', async () => {
    const db = h.platform.ctx.database.db;
    const accountId = h.accountId;
    const hidden = serializeDocument(withHidden(emptyDocument(), 'alpha/a-1', true));
    await insertPolicyIfAbsent(narrowTables(db), { accountId, providerId: 'alpha' }, { enabled: true, document: hidden }, 1_000);
    await insertPolicyIfAbsent(
      narrowTables(db),
      { accountId, providerId: 'local' },
      { enabled: false, document: serializeDocument(emptyDocument()) },
      2_000,
    );
    await insertCredentialIfAbsent(
      narrowTables(db),
      { accountId, providerId: 'alpha' },
      { material_kind: 'api_key', sealed: 'v1.k.iv.body', generation: 1 },
      3_000,
    );
    await setUnavailableUntil(narrowTables(db), { accountId, providerId: 'alpha' }, 9_000, 4_000);

    const full = await loadAccountState(narrowTables(db), dialect, accountId);
    const policies = [...full.policies].sort((a, b) => a.provider_id.localeCompare(b.provider_id));
    expect(policies).toEqual([
      { account_id: accountId, provider_id: 'alpha', lock_version: 0, enabled: 1, created_at: 1_000, updated_at: 1_000, document: hidden },
      {
        account_id: accountId,
        provider_id: 'local',
        lock_version: 0,
        enabled: 0,
        created_at: 2_000,
        updated_at: 2_000,
        document: serializeDocument(emptyDocument()),
      },
    ]);
    expect(full.credentials).toEqual([
      {
        account_id: accountId,
        provider_id: 'alpha',
        generation: 1,
        reauthorization_required: 0,
        updated_at: 3_000,
        material_kind: 'api_key',
        sealed: 'v1.k.iv.body',
      },
    ]);
    expect(full.admission).toEqual([{ account_id: accountId, provider_id: 'alpha', unavailable_until: 9_000, updated_at: 4_000 }]);

    // On PostgreSQL held versions come back without their document; others (and versions of other rows) still carry
    // it. SQLite reads in-process and always returns documents.
    const held = [documentVersion('alpha', 0, 1_000), documentVersion('local', 7, 2_000)];
    const partial = await loadAccountState(narrowTables(db), dialect, accountId, held);
    expect(Object.fromEntries(partial.policies.map((p) => [p.provider_id, p.document]))).toEqual({
      alpha: dialect === 'postgres' ? null : hidden,
      local: serializeDocument(emptyDocument()),
    });
    // A write bumps the version, so the held one no longer matches and the new document is sent.
    const shown = serializeDocument(emptyDocument());
    expect(
      await updatePolicyIfVersion(narrowTables(db), { accountId, providerId: 'alpha' }, 0, { enabled: true, document: shown }, 5_000),
    ).toBe(true);
    const after = await loadAccountState(narrowTables(db), dialect, accountId, held);
    expect(after.policies.find((p) => p.provider_id === 'alpha')).toMatchObject({ lock_version: 1, document: shown });
    // Another Account's rows are never included.
    expect((await loadAccountState(narrowTables(db), dialect, 'acct-nobody')).policies).toEqual([]);
  });

  it('[ADM-READ-5] the model-plane version moves with every write to the tables the state is read from, and with nothing else', async () => {
    const db = narrowTables<PlatformDatabase, AdminTables>(h.platform.ctx.database.db);
    const accountId = h.accountId;
    const key = { accountId, providerId: 'gamma' };
    let last = await modelPlaneVersion(db, dialect, accountId);
    /** Runs `write` and checks whether the version moved, and that it never goes back. */
    const moves = async (write: () => Promise<unknown>, expected: boolean) => {
      await write();
      const now = await modelPlaneVersion(db, dialect, accountId);
      expect(now > last, `version ${last} -> ${now}`).toBe(expected);
      expect(now).toBeGreaterThanOrEqual(last);
      last = now;
    };
    const document = serializeDocument(emptyDocument());
    await moves(() => insertPolicyIfAbsent(db, key, { enabled: true, document }, 10_000), true);
    await moves(() => updatePolicyIfVersion(db, key, 0, { enabled: false, document }, 11_000), true);
    await moves(() => insertCredentialIfAbsent(db, key, { material_kind: 'api_key', sealed: 'v1.k.iv.x', generation: 1 }, 12_000), true);
    await moves(() => setUnavailableUntil(db, key, 20_000, 13_000), true);
    await moves(() => insertCostUnitIfAbsent(db, accountId, 'credits', 14_000), true);
    await moves(
      () => db.deleteFrom('model_provider_credentials').where('account_id', '=', accountId).where('provider_id', '=', 'gamma').execute(),
      true,
    );
    // A usage row (written on every inference call) leaves the version alone.
    await moves(
      () =>
        insertUsage(db, {
          id: `usage-${dialect}`,
          accountId,
          humanId: 'h',
          credentialId: 'c',
          model: 'gamma/m',
          modelIdentity: null,
          workload: 'text_generation',
          inputTokens: 1,
          outputTokens: 1,
          cachedInputTokens: null,
          cost: null,
          startedAt: 15_000,
          durationMs: 1,
          outcome: 'succeeded',
          streamed: false,
        }),
      false,
    );
    expect(await modelPlaneVersion(db, dialect, 'acct-nobody')).toBe(0);
  });
});
