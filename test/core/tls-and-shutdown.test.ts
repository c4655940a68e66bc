import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDotEnv } from '../../src/cli/io.ts';
import { buildTestRestApp, openTestPlatform, type TestPlatform } from '../support/platform.ts';

function selfSignedCert(): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'platform-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'],
    { stdio: 'ignore' },
  );
  return { cert, key };
}

function httpsPost(url: string, body: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', rejectUnauthorized: false, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('TLS, proxies and shutdown', () => {
  let platform: TestPlatform | undefined;
  afterEach(async () => {
    await platform?.close();
    platform = undefined;
  });

  it('marks the session cookie Secure when served over TLS', async () => {
    const { cert, key } = selfSignedCert();
    platform = await openTestPlatform('sqlite', { env: { PLATFORM_TLS_CERT: cert, PLATFORM_TLS_KEY: key } });
    const app = await buildTestRestApp(platform);
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      const res = await httpsPost(
        `https://127.0.0.1:${port}/api/v1/sessions`,
        JSON.stringify({ email: platform.owner.email, password: platform.owner.password }),
      );
      expect(res.status).toBe(200);
      expect(String(res.headers['set-cookie'])).toMatch(/; Secure/);
    } finally {
      await app.close();
    }
  });

  it('takes the client address from the nearest untrusted hop, never from what the client wrote', async () => {
    platform = await openTestPlatform('sqlite', { env: { TRUST_PROXY: '127.0.0.1' } });
    const app = await buildTestRestApp(platform);
    app.get('/probe/ip', async (req) => ({ ip: req.ip }));
    // The client wrote 10.9.9.9; the proxy on 127.0.0.1 appended the client's real address 203.0.113.7.
    const res = await app.inject({ method: 'GET', url: '/probe/ip', headers: { 'x-forwarded-for': '10.9.9.9, 203.0.113.7' } });
    expect(res.json()).toEqual({ ip: '203.0.113.7' });
    await app.close();
  });

  it('trusts X-Forwarded-Proto only with TRUST_PROXY', async () => {
    for (const trust of [false, true]) {
      platform = await openTestPlatform('sqlite', { env: { TRUST_PROXY: String(trust) } });
      const app = await buildTestRestApp(platform);
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/sessions',
        headers: { 'x-forwarded-proto': 'https', 'content-type': 'application/json' },
        payload: { email: platform.owner.email, password: platform.owner.password },
      });
      expect(res.statusCode).toBe(200);
      expect(/; Secure/.test(String(res.headers['set-cookie']))).toBe(trust);
      await app.close();
      await platform.close();
      platform = undefined;
    }
  });

  it('lets an in-flight request finish when the server closes', async () => {
    platform = await openTestPlatform('sqlite');
    const app = await buildTestRestApp(platform);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    app.get('/slow', async () => {
      await gate;
      return { done: true };
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const inFlight = fetch(`http://127.0.0.1:${port}/slow`).then((r) => r.json());
    await new Promise((r) => setTimeout(r, 100));
    const closing = app.close();
    setTimeout(release, 100);
    expect(await inFlight).toEqual({ done: true });
    await closing;
  });
});

describe('.env files', () => {
  it('reads KEY=VALUE lines with comments, export and quotes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'platform-env-'));
    const file = join(dir, '.env');
    writeFileSync(file, '# comment\nexport A=1\nB="two words"\nC=\'x=y\'\n  D = spaced \nnot a line\n');
    expect(parseDotEnv(file)).toEqual({ A: '1', B: 'two words', C: 'x=y', D: 'spaced' });
  });
});
