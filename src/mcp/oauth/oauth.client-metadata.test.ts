import { createServer, type Server } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../../../test/support/tls.ts';
import { fakeClock } from '../../core/clock.ts';
import { captureLogger } from '../mcp.testkit.ts';
import { parseAllowlist } from './oauth.allowlist.ts';
import {
  createClientMetadataResolver,
  fetchDocument,
  isMetadataDocumentClientId,
  isPrivateAddress,
  METADATA_FETCH_LIMIT,
  METADATA_FETCH_WINDOW_MS,
  type FetchedDocument,
} from './oauth.client-metadata.ts';

describe('client ID metadata documents', () => {
  let server: Server;
  let base = '';
  let tls: { key: Buffer; cert: Buffer };
  let hits = 0;
  beforeAll(async () => {
    tls = selfSignedCertificate();
    server = createServer(tls, (request, response) => {
      hits += 1;
      const url = request.url ?? '';
      if (url === '/client.json') {
        response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
        response.end(
          JSON.stringify({
            client_id: `${base}/client.json`,
            client_name: 'Docs Client',
            redirect_uris: ['http://127.0.0.1:33418/cb', 'https://evil.example/cb'],
          }),
        );
      } else if (url === '/redirect.json') {
        response.writeHead(302, { location: '/client.json' });
        response.end();
      } else if (url === '/huge.json') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ client_id: `${base}/huge.json`, redirect_uris: ['http://127.0.0.1/cb'], pad: 'x'.repeat(40_000) }));
      } else if (url === '/slow.json') {
        setTimeout(() => response.end('{}'), 2000);
      } else if (url === '/other.json') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ client_id: 'https://someone-else.example/client.json', redirect_uris: ['http://127.0.0.1/cb'] }));
      } else {
        response.writeHead(404);
        response.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    base = `https://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const testFetch = (url: URL): Promise<FetchedDocument> =>
    fetchDocument(url, { allowPrivateAddresses: true, allowAnyPort: true, ca: tls.cert, timeoutMs: 500 });

  it('[REG-CIMD] recognises https client ids with a path', () => {
    expect(isMetadataDocumentClientId('https://vscode.dev/oauth/client-metadata.json')).toBe(true);
    expect(isMetadataDocumentClientId('https://vscode.dev/')).toBe(false);
    expect(isMetadataDocumentClientId('http://vscode.dev/client.json')).toBe(false);
    expect(isMetadataDocumentClientId('6f1c2c4e-0000-4000-8000-000000000000')).toBe(false);
  });

  it('[REG-CIMD] never reaches private, loopback or link-local addresses', async () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '192.168.1.1',
      '172.20.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::ffff:7f00:1',
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    expect(isPrivateAddress('93.184.215.14')).toBe(false);
    expect(isPrivateAddress('2606:4700::1111')).toBe(false);
    expect(isPrivateAddress('::ffff:5db8:d70e')).toBe(false);
    await expect(fetchDocument(new URL(`${base}/client.json`), { ca: tls.cert, allowAnyPort: true })).rejects.toThrow(/private address/);
    // A name resolving to loopback is refused at connect time, by the resolved address.
    await expect(fetchDocument(new URL('https://localhost/client.json'))).rejects.toThrow(/private address/);
    await expect(fetchDocument(new URL('http://93.184.215.14/client.json'))).rejects.toThrow(/not https/);
  });

  it('[CIMD-SSRF] regression: IPv4-compatible, IPv4-translated and NAT64 addresses led to private IPv4 hosts', async () => {
    for (const address of [
      '::127.0.0.1',
      '::7f00:1',
      '::10.0.0.1',
      '::a00:1',
      '::93.184.215.14', // ::/96 (IPv4-compatible): always refused
      '::ffff:0:127.0.0.1',
      '::ffff:0:7f00:1',
      '::ffff:0:5db8:d70e', // ::ffff:0:0:0/96 (IPv4-translated): always refused
      '64:ff9b::127.0.0.1',
      '64:ff9b::a00:1',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b::192.168.1.1',
      '64:ff9b:1::1', // NAT64 to private IPv4
      '0:0:0:0:0:ffff:10.1.2.3',
      '::FFFF:A00:1',
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    // NAT64 to a public IPv4 address is how IPv6-only (DNS64) networks reach public hosts.
    expect(isPrivateAddress('64:ff9b::93.184.215.14')).toBe(false);
    expect(isPrivateAddress('64:ff9b::5db8:d70e')).toBe(false);
    await expect(fetchDocument(new URL('https://[::7f00:1]/client.json'))).rejects.toThrow(/private address/);
    await expect(fetchDocument(new URL('https://[64:ff9b::a9fe:a9fe]/latest/meta-data'))).rejects.toThrow(/private address/);
  });

  it('[CIMD-SSRF] regression: any port was fetched; now only 443', async () => {
    await expect(fetchDocument(new URL('https://93.184.215.14:8443/client.json'))).rejects.toThrow(/port other than 443/);
    await expect(fetchDocument(new URL('https://client.example:22/client.json'))).rejects.toThrow(/port other than 443/);
    // An explicit :443 is the default port (the URL drops it), so it is not refused for its port.
    await expect(fetchDocument(new URL('https://127.0.0.1:443/client.json'))).rejects.toThrow(/private address/);
  });

  it('[CIMD-SSRF] regression: every new client id URL cost a fetch; uncached fetches are now limited per client address', async () => {
    const clock = fakeClock();
    const fetched: string[] = [];
    const resolver = createClientMetadataResolver({
      allowlist: parseAllowlist('defaults'),
      clock,
      log: captureLogger().logger,
      fetch: async (url) => {
        fetched.push(url.href);
        return {
          status: 200,
          body: JSON.stringify({ client_id: url.href, redirect_uris: ['http://127.0.0.1/cb'] }),
          contentType: 'application/json',
          cacheControl: 'max-age=86400',
        };
      },
    });
    const url = (i: number) => `https://client${i}.example/client.json`;
    for (let i = 0; i < METADATA_FETCH_LIMIT; i += 1) expect((await resolver.resolve(url(i), '203.0.113.5')).ok).toBe(true);
    const limited = await resolver.resolve(url(99), '203.0.113.5');
    expect(limited).toEqual({ ok: false, reason: 'fetch limit per client address reached', retryAfterSeconds: 600 });
    expect(fetched).toHaveLength(METADATA_FETCH_LIMIT);
    // Cached documents cost nothing; another address has its own budget; the refusal is not cached.
    expect((await resolver.resolve(url(0), '203.0.113.5')).ok).toBe(true);
    expect((await resolver.resolve(url(99), '198.51.100.5')).ok).toBe(true);
    expect(fetched).toHaveLength(METADATA_FETCH_LIMIT + 1);
    clock.advance(METADATA_FETCH_WINDOW_MS);
    expect((await resolver.resolve(url(100), '203.0.113.5')).ok).toBe(true);
  });

  it('[REG-CIMD] fetches, keeps only allowlisted redirect URIs, and caches the document', async () => {
    const logs = captureLogger();
    const clock = fakeClock();
    const resolver = createClientMetadataResolver({ allowlist: parseAllowlist('defaults'), clock, log: logs.logger, fetch: testFetch });
    hits = 0;
    const first = await resolver.resolve(`${base}/client.json`, '203.0.113.1');
    expect(first).toEqual({
      ok: true,
      client: { clientId: `${base}/client.json`, clientName: 'Docs Client', redirectUris: ['http://127.0.0.1:33418/cb'] },
    });
    expect(logs.text()).toContain('https://evil.example/cb');
    await resolver.resolve(`${base}/client.json`, '203.0.113.1');
    expect(hits).toBe(1);
    clock.advance(301_000);
    await resolver.resolve(`${base}/client.json`, '203.0.113.1');
    expect(hits).toBe(2);
  });

  it('[REG-CIMD] refuses redirects, oversized or slow documents, and documents naming another client', async () => {
    const resolver = createClientMetadataResolver({
      allowlist: parseAllowlist('defaults'),
      clock: fakeClock(),
      log: captureLogger().logger,
      fetch: testFetch,
    });
    expect(await resolver.resolve(`${base}/redirect.json`, '203.0.113.1')).toEqual({ ok: false, reason: 'fetch failed' });
    expect(await resolver.resolve(`${base}/huge.json`, '203.0.113.1')).toEqual({ ok: false, reason: 'fetch failed' });
    expect(await resolver.resolve(`${base}/slow.json`, '203.0.113.1')).toEqual({ ok: false, reason: 'fetch failed' });
    expect(await resolver.resolve(`${base}/other.json`, '203.0.113.1')).toEqual({
      ok: false,
      reason: 'client_id in the document differs from its URL',
    });
    expect(await resolver.resolve(`${base}/missing.json`, '203.0.113.1')).toEqual({ ok: false, reason: 'fetch failed' });
    const strict = createClientMetadataResolver({
      allowlist: parseAllowlist('https://only.example/cb'),
      clock: fakeClock(),
      log: captureLogger().logger,
      fetch: testFetch,
    });
    expect(await strict.resolve(`${base}/client.json`, '203.0.113.1')).toEqual({ ok: false, reason: 'no redirect URI on the allowlist' });
  });
});
