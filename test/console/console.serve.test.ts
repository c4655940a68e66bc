// The console's files on the REST listener (issue 19 item 1): content types, ETag revalidation, compression and the
// strict headers on every answer, over a real socket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { CONSOLE_CSP } from '../../src/console/console.headers.ts';
import { openHarness, type Harness } from '../admin/admin-harness.ts';
import { repoRoot } from '../support/shared.ts';
import { README_SCREENSHOT } from './console-harness.ts';

describe('console files', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness('sqlite');
  });
  afterAll(async () => h.close());

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${h.url}${path}`, { headers, redirect: 'manual' });

  function expectStrictHeaders(headers: Headers) {
    const csp = headers.get('content-security-policy') ?? '';
    expect(csp).toBe(CONSOLE_CSP);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(headers.get('x-content-type-options')).toBe('nosniff');
    expect(headers.get('referrer-policy')).toBe('no-referrer');
    expect(headers.get('x-frame-options')).toBe('DENY');
  }

  it('serves the page, its modules and its stylesheet with their types and the strict headers', async () => {
    const cases: [string, RegExp][] = [
      ['/console/', /^text\/html; charset=utf-8$/],
      ['/console/app.js', /^text\/javascript; charset=utf-8$/],
      ['/console/models.js', /^text\/javascript; charset=utf-8$/],
      ['/console/console.css', /^text\/css; charset=utf-8$/],
      ['/console/icon.svg', /^image\/svg\+xml$/],
      ['/console/vendor/yaml/index.js', /^text\/javascript; charset=utf-8$/],
    ];
    for (const [path, type] of cases) {
      const r = await get(path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-type'), path).toMatch(type);
      expect(r.headers.get('etag'), path).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect(r.headers.get('cache-control'), path).toBe('no-cache');
      expectStrictHeaders(r.headers);
      expect((await r.text()).length, path).toBeGreaterThan(0);
    }
    const page = await (await get('/console/')).text();
    // No inline script or style in the page itself, and nothing from another origin.
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page).not.toMatch(/\sstyle=/);
    expect(page).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('answers a matching If-None-Match with 304 and no body, and a changed one with the file', async () => {
    const first = await get('/console/app.js');
    const etag = first.headers.get('etag') ?? '';
    const again = await get('/console/app.js', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expectStrictHeaders(again.headers);
    const other = await get('/console/app.js', { 'if-none-match': '"something-else"' });
    expect(other.status).toBe(200);
  });

  it('sends brotli or gzip when accepted, the same bytes decoded', async () => {
    const plain = await (await get('/console/provider.js', { 'accept-encoding': 'identity' })).text();
    const br = await get('/console/provider.js', { 'accept-encoding': 'gzip, br' });
    expect(br.headers.get('content-encoding')).toBe('br');
    expect(await br.text()).toBe(plain);
    const gz = await get('/console/provider.js', { 'accept-encoding': 'gzip, br;q=0' });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(await gz.text()).toBe(plain);
  });

  it('redirects /console to /console/ and answers an unknown file 404 in the envelope, headers included', async () => {
    const redirect = await get('/console');
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/console/');
    for (const path of ['/console/nope.js', '/console/../package.json', '/console/vendor/yaml/../../package.json']) {
      const r = await get(path);
      expect(r.status, path).toBe(404);
      const body = (await r.json()) as { error: { code: string } };
      expect(body.error.code).toBe('not_found');
    }
    const missing = await get('/console/nope.js');
    expectStrictHeaders(missing.headers);
    expectStrictHeaders(redirect.headers);
  });

  it('answers another method on a console path 405 in the envelope with the strict headers, and leaves other paths alone', async () => {
    for (const [method, path] of [
      ['POST', '/console/'],
      ['DELETE', '/console/app.js'],
      ['PUT', '/console'],
      ['POST', '/console/?next=1'],
    ] as const) {
      const r = await fetch(`${h.url}${path}`, { method, redirect: 'manual' });
      expect(r.status, `${method} ${path}`).toBe(405);
      expect(r.headers.get('allow'), `${method} ${path}`).toContain('GET');
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
      expectStrictHeaders(r.headers);
    }
    // The admin API keeps its own headers: the console's CSP is for the console's pages only.
    const api = await fetch(`${h.url}/api/v1/sessions/current`);
    expect(api.headers.get('content-security-policy')).not.toBe(CONSOLE_CSP);
    const lookalike = await fetch(`${h.url}/consoles`);
    expect(lookalike.status).toBe(404);
    expect(lookalike.headers.get('content-security-policy')).not.toBe(CONSOLE_CSP);
  });

  it('is served with the admin API only: `serve --only grpc` has no console', async () => {
    const { buildTestRestApp } = await import('../support/platform.ts');
    const app = await buildTestRestApp(h.platform, new Set(['grpc']));
    try {
      const r = await app.inject({ method: 'GET', url: '/console/' });
      expect(r.statusCode).toBe(404);
    } finally {
      await app.close();
    }
  });

  it("shows in the README a screenshot with the shape of the tests' Models shot (1280 × 800 PNG)", () => {
    const readme = readFileSync(`${repoRoot}/README.md`, 'utf8');
    expect(readme).toContain('](docs/console-models.png)');
    expect(readme).toContain('CONSOLE_README_SCREENSHOT=update');
    const png = readFileSync(README_SCREENSHOT);
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    // The IHDR chunk: width and height, big-endian, right after the signature and the chunk's length and type.
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 800]);
  });
});
