import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../support/databases.ts';
import { openHarness, TEST_CATALOG, type Harness } from '../admin/admin-harness.ts';

/**
 * Bad input at the REST boundary (issue 12 item 6): a clear 4xx in the envelope on both databases, never a 500
 * from deep in SQL, and nothing changed. Each case is named after the bug it pins.
 */
describe.each(dialects)('REST input boundary on %s', (dialect) => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const PROVIDER = '/api/v1/admin/model_providers/alpha';

  async function start(): Promise<Harness> {
    h = await openHarness(dialect, { catalog: TEST_CATALOG });
    return h;
  }

  /** The provider as an administrator sees it: `configured` and `lock_version` show whether a refused write landed. */
  async function provider(harness: Harness): Promise<unknown> {
    const res = await harness.call('GET', PROVIDER, { token: harness.token });
    expect(res.status).toBe(200);
    return res.body;
  }

  function messageOf(res: { body: unknown }): unknown {
    return (res.body as { error?: { message?: unknown } }).error?.message;
  }

  function expectRefused(res: { status: number; body: unknown }, status: number, code: string): void {
    expect(res.status).toBe(status);
    expect(Object.keys(res.body as object)).toEqual(['error']);
    expect(res.body).toMatchObject({ error: { code } });
    expect(typeof messageOf(res)).toBe('string');
  }

  it('regression: PostgreSQL answered 500 for a NUL character in the login email (SQLite 401)', async () => {
    const harness = await start();
    const { email, password } = harness.platform.owner;
    const nulEmail = await harness.call('POST', '/api/v1/sessions', { body: { email: `${email}\u0000`, password } });
    expectRefused(nulEmail, 400, 'parameter_invalid');
    expect(messageOf(nulEmail)).toMatch(/^body\.email: /);
    expect(nulEmail.text).not.toContain(email);
    expectRefused(
      await harness.call('POST', '/api/v1/sessions', { body: { email, password: `${password}\u0000` } }),
      400,
      'parameter_invalid',
    );
    // An unpaired surrogate cannot be stored as sent either (a driver would write U+FFFD).
    expectRefused(
      await harness.call('POST', '/api/v1/sessions', { rawBody: `{"email":"a\\ud800@example.test","password":"x"}` }),
      400,
      'parameter_invalid',
    );
    expectRefused(
      await harness.call('POST', '/api/v1/sessions', { rawBody: `{"email":"a@example.test","password":"x","\\u0000":1}` }),
      400,
      'parameter_invalid',
    );
    // The boundary refuses only what cannot be stored: the owner still signs in.
    expect((await harness.call('POST', '/api/v1/sessions', { body: { email, password } })).status).toBe(200);
  });

  it('regression: a NUL in a path parameter, a query string or the session cookie reached SQL', async () => {
    const harness = await start();
    const { token } = harness;
    const before = await provider(harness);
    const path = await harness.call('GET', '/api/v1/admin/model_providers/alpha%00', { token });
    expectRefused(path, 400, 'parameter_invalid');
    expect(messageOf(path)).toMatch(/^params\.provider_id: /);
    expectRefused(
      await harness.call('PUT', '/api/v1/admin/model_providers/alpha%00/api_key', { token, body: { command: { api_key: 'sk-x' } } }),
      400,
      'parameter_invalid',
    );
    expectRefused(await harness.call('DELETE', '/api/v1/admin/model_providers/%00/api_key', { token }), 400, 'parameter_invalid');
    expectRefused(await harness.call('GET', '/api/v1/admin/models?workload=%00', { token }), 400, 'parameter_invalid');
    expectRefused(await harness.call('GET', '/api/v1/admin/models?%00=1', { token }), 400, 'parameter_invalid');
    const cookie = await harness.call('GET', '/api/v1/sessions/current', { headers: { cookie: 'platform_session=pses_%00x' } });
    expectRefused(cookie, 400, 'parameter_invalid');
    // The gRPC services' HTTP mappings sit behind the same boundary (their error body is the RPC's own style).
    const osv = await harness.call('GET', '/platform/v1/osv/vulns/GHSA-%00', { token });
    expect(osv.status).toBe(400);
    expect(await provider(harness)).toEqual(before);
  });

  it('regression: text/plain and other non-JSON types got 400 instead of the documented 415', async () => {
    const harness = await start();
    const before = await provider(harness);
    const body = JSON.stringify({ command: { api_key: 'sk-plain' } });
    for (const type of [
      'text/plain',
      'text/plain; charset=utf-8',
      'application/x-www-form-urlencoded',
      'application/xml',
      'multipart/form-data; boundary=x',
      'application/json-patch+json',
    ]) {
      const res = await harness.call('PUT', `${PROVIDER}/api_key`, {
        token: harness.token,
        rawBody: body,
        headers: { 'content-type': type },
      });
      expectRefused(res, 415, 'unsupported_media_type');
    }
    expectRefused(
      await harness.call('POST', '/api/v1/sessions', { rawBody: '{}', headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
    expect(await provider(harness)).toEqual(before);
  });

  it('regression: application/json; charset=latin1 was accepted (only UTF-8, any case, quoted or not)', async () => {
    const harness = await start();
    const { email, password } = harness.platform.owner;
    const body = JSON.stringify({ email, password });
    for (const type of [
      'application/json; charset=latin1',
      'application/json; charset=ISO-8859-1',
      'application/json; charset=utf-16',
      'application/json; charset=utf8',
      'application/json; charset=""',
      'application/json; charset=utf-8; charset=latin1',
    ]) {
      expectRefused(
        await harness.call('POST', '/api/v1/sessions', { rawBody: body, headers: { 'content-type': type } }),
        415,
        'unsupported_media_type',
      );
    }
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'Application/JSON; Charset="utf-8"',
      'application/json; charset = "UTF-8"',
    ]) {
      expect((await harness.call('POST', '/api/v1/sessions', { rawBody: body, headers: { 'content-type': type } })).status, type).toBe(200);
    }
  });

  it('regression: invalid UTF-8 in a JSON body was stored as U+FFFD (an API key the admin never sent)', async () => {
    const harness = await start();
    const before = await provider(harness);
    expect(before).toMatchObject({ model_provider: { configured: false } });
    for (const bytes of [[0xff, 0xfe], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]) {
      const raw = Buffer.concat([Buffer.from('{"command":{"api_key":"sk-live-'), Buffer.from(bytes), Buffer.from('"}}')]);
      const res = await fetch(`${harness.url}${PROVIDER}/api_key`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${harness.token}`, 'content-type': 'application/json' },
        body: raw,
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: { code: 'parameter_invalid', message: 'request body is not valid UTF-8' } });
    }
    expect(await provider(harness)).toEqual(before);
    // The same key in valid UTF-8 is stored.
    const ok = await harness.call('PUT', `${PROVIDER}/api_key`, { token: harness.token, body: { command: { api_key: 'sk-live-é' } } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ model_provider: { configured: true } });
  });
});
