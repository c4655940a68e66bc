import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentVersion, loadAccountState } from '../../src/admin/projection/account-state.store.ts';
import { emptyDocument, serializeDocument, withHidden } from '../../src/admin/policy/policy.document.ts';
import { insertPolicyIfAbsent, setUnavailableUntil, updatePolicyIfVersion } from '../../src/admin/policy/policy.store.ts';
import { insertCredentialIfAbsent } from '../../src/admin/credentials/credentials.store.ts';
import { dialects } from '../support/databases.ts';
import { openHarness, TEST_CATALOG, type Harness } from './admin-harness.ts';
import { narrowTables } from '../../src/core/db/database.ts';

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
});
