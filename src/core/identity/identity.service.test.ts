import { afterEach, describe, expect, it } from 'vitest';
import { dialects, openTestDatabase, type TestDatabase } from '../../../test/support/databases.ts';
import { fakeClock } from '../clock.ts';
import { sha256Hex } from '../crypto.ts';
import { createAuthenticator, requireAdministrator, requireCapability, requireMemberPlane } from './auth.ts';
import { createIdentityService } from './identity.service.ts';
import { narrowTables } from '../db/database.ts';

describe.each(dialects)('identity on %s', (dialect) => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  async function setup() {
    database = await openTestDatabase(dialect);
    const clock = fakeClock();
    const identity = createIdentityService({ db: narrowTables(database.db), dialect, clock, sessionTtlMs: 3_600_000, passwordCost: 14 });
    const auth = createAuthenticator({ db: narrowTables(database.db), clock });
    const boot = await identity.bootstrap({ accountName: 'Acme', email: 'Owner@Example.test' });
    return { db: database, clock, identity, auth, boot };
  }

  it('bootstraps an owner whose credentials are stored only as hashes', async () => {
    const { db, boot, auth } = await setup();
    expect(boot.email).toBe('owner@example.test');
    expect(boot.session_bearer).toMatch(/^pses_/);
    expect(boot.platform_token).toMatch(/^pplat_/);
    const rows = await db.db.selectFrom('credentials').selectAll().execute();
    expect(rows).toHaveLength(2);
    const stored = JSON.stringify(rows) + JSON.stringify(await db.db.selectFrom('humans').selectAll().execute());
    expect(stored).not.toContain(boot.session_bearer);
    expect(stored).not.toContain(boot.platform_token);
    expect(stored).not.toContain(boot.password);
    expect(rows.map((r) => r.token_hash).sort()).toEqual([sha256Hex(boot.session_bearer), sha256Hex(boot.platform_token)].sort());
    const result = await auth.authenticate({ authorization: `Bearer ${boot.platform_token}` });
    expect(result.ok && [...result.principal.capabilities].length).toBe(4);
  });

  it('signs in by email and password, refusing wrong passwords and deactivated Humans alike', async () => {
    const { identity, boot } = await setup();
    const session = await identity.signIn('OWNER@example.test', boot.password);
    expect(session.plane).toBe('session');
    await expect(identity.signIn(boot.email, 'wrong password!!')).rejects.toMatchObject({
      code: 'unauthorized',
      message: 'invalid email or password',
    });
    await expect(identity.signIn('nobody@example.test', 'whatever12345')).rejects.toMatchObject({
      code: 'unauthorized',
      message: 'invalid email or password',
    });
    const admin = await identity.addHuman({ accountId: boot.account_id, email: 'admin@example.test', role: 'admin' });
    await identity.deactivate(admin.human_id);
    await expect(identity.signIn(admin.email, admin.password)).rejects.toMatchObject({ code: 'unauthorized' });
  });

  it('applies revocation, deactivation, demotion and expiry on the next lookup', async () => {
    const { identity, auth, boot, clock } = await setup();
    const admin = await identity.addHuman({ accountId: boot.account_id, email: 'a@example.test', role: 'admin' });
    const session = await identity.signIn(admin.email, admin.password);
    const bearer = { authorization: `Bearer ${session.token}` };
    expect(requireAdministrator(await auth.authenticate(bearer), 'PUT').humanId).toBe(admin.human_id);

    await identity.setRole(admin.human_id, 'member');
    await expect(auth.authenticate(bearer).then((r) => requireAdministrator(r, 'GET'))).rejects.toMatchObject({
      code: 'administrator_required',
    });

    await identity.setRole(admin.human_id, 'admin');
    await identity.deactivate(admin.human_id);
    expect(await auth.authenticate(bearer)).toEqual({ ok: false, reason: 'revoked' });
    await identity.reactivate(admin.human_id);
    // Reactivation does not revive the credentials the deactivation ended.
    expect(await auth.authenticate(bearer)).toEqual({ ok: false, reason: 'revoked' });
    const fresh = await identity.signIn(admin.email, admin.password);
    const freshBearer = { authorization: `Bearer ${fresh.token}` };

    const token = await identity.createToken({ humanId: admin.human_id, plane: 'platform', capabilities: ['CAP_PLATFORM_OSV_READ'] });
    const tokenAuth = { authorization: `Bearer ${token.token}` };
    expect(requireCapability(await auth.authenticate(tokenAuth), 'CAP_PLATFORM_OSV_READ').plane).toBe('platform');
    await expect(auth.authenticate(tokenAuth).then((r) => requireCapability(r, 'CAP_PLATFORM_DOCUMENTS_CREATE'))).rejects.toMatchObject({
      code: 'permission_denied',
    });
    await identity.revoke(token.id);
    expect(await auth.authenticate(tokenAuth)).toEqual({ ok: false, reason: 'revoked' });

    clock.advance(3_600_001);
    expect(await auth.authenticate(freshBearer)).toEqual({ ok: false, reason: 'expired' });
  });

  it('keeps the planes apart', async () => {
    const { identity, auth, boot } = await setup();
    const member = await identity.createToken({ humanId: boot.human_id, plane: 'member' });
    const executor = await identity.createToken({ humanId: boot.human_id, plane: 'executor' });
    expect(member.token).toMatch(/^pmem_/);
    expect(executor.token).toMatch(/^pexec_/);
    for (const t of [member, executor]) {
      const result = await auth.authenticate({ authorization: `Bearer ${t.token}` });
      expect(requireMemberPlane(result).plane).toBe(t.plane);
      expect(() => requireAdministrator(result, 'GET')).toThrowError(/not accepted on the admin API/);
      expect(() => requireCapability(result, 'CAP_PLATFORM_OSV_READ')).toThrowError(/platform-plane access token/);
    }
    await expect(
      identity.createToken({ humanId: boot.human_id, plane: 'member', capabilities: ['CAP_PLATFORM_OSV_READ'] }),
    ).rejects.toMatchObject({ code: 'parameter_invalid' });
  });

  it('never lets a cookie carry a token, nor a bad header fall back to the cookie', async () => {
    const { auth, boot } = await setup();
    expect(await auth.authenticate({ cookie: boot.platform_token })).toEqual({ ok: false, reason: 'unknown' });
    expect(await auth.authenticate({ authorization: 'Bearer nope', cookie: boot.session_bearer })).toEqual({
      ok: false,
      reason: 'unknown',
    });
    expect(await auth.authenticate({ authorization: 'Basic abc', cookie: boot.session_bearer })).toEqual({
      ok: false,
      reason: 'malformed',
    });
    const viaCookie = await auth.authenticate({ cookie: boot.session_bearer });
    expect(viaCookie.ok && viaCookie.principal.via).toBe('cookie');
    expect(requireAdministrator(viaCookie, 'HEAD').role).toBe('owner');
    expect(() => requireAdministrator(viaCookie, 'POST')).toThrowError(/only GET and HEAD/);
  });

  it('bootstraps atomically and only once when asked to bootstrap an empty deployment', async () => {
    const { identity, db, boot } = await setup();
    expect(await identity.bootstrapIfEmpty({ accountName: 'Again', email: 'again@example.test' })).toBeUndefined();
    await expect(identity.bootstrap({ accountName: 'Dup', email: boot.email })).rejects.toMatchObject({ code: 'conflict' });
    await expect(identity.bootstrap({ accountName: 'Bad', email: 'not-an-email' })).rejects.toMatchObject({ code: 'parameter_invalid' });
    expect(await db.db.selectFrom('accounts').selectAll().execute()).toHaveLength(1);
    await expect(identity.listHumans('no-such-account')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('protects the last active owner and refuses duplicate emails', async () => {
    const { identity, boot, clock } = await setup();
    clock.advance(1000);
    await expect(identity.setRole(boot.human_id, 'admin')).rejects.toMatchObject({ code: 'conflict' });
    await expect(identity.deactivate(boot.human_id)).rejects.toMatchObject({ code: 'conflict' });
    await expect(identity.addHuman({ accountId: boot.account_id, email: 'OWNER@example.test', role: 'member' })).rejects.toMatchObject({
      code: 'conflict',
    });
    const second = await identity.addHuman({ accountId: boot.account_id, email: 'o2@example.test', role: 'owner' });
    await identity.setRole(boot.human_id, 'member');
    expect((await identity.listHumans(boot.account_id)).map((h) => [h.email, h.role])).toEqual([
      ['owner@example.test', 'member'],
      [second.email, 'owner'],
    ]);
    expect(await identity.listTokens({ accountId: boot.account_id })).toHaveLength(1);
  });
});
