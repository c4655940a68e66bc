/**
 * Passthrough mode, discovery, registration limits, metadata-document clients and the server without remote OAuth,
 * against the dev forge.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeClock } from '../../core/clock.ts';
import { startDevForge } from '../../devforge/index.ts';
import { buildMcpApp } from '../mcp.app.ts';
import {
  authorizeUrl,
  callTool,
  captureLogger,
  CLIENT_CALLBACK,
  completeFlow,
  pkce,
  register,
  registerClient,
  startStack,
  token,
  toolJson,
  walkSignIn,
  type Stack,
} from '../mcp.testkit.ts';
import { parseAllowlist } from './oauth.allowlist.ts';
import { METADATA_FETCH_LIMIT, type FetchedDocument } from './oauth.client-metadata.ts';

describe('passthrough mode', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ mode: 'passthrough' });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('[MODE-PASSTHROUGH] [AUTHZ-PASSTHROUGH] [PASSTHROUGH-TOKEN] forwards the client parameters and never sees the callback', async () => {
    const clientId = await registerClient(stack.serverUrl);
    const { verifier, challenge } = pkce();
    const response = await fetch(
      authorizeUrl(stack.serverUrl, {
        client_id: clientId,
        redirect_uri: CLIENT_CALLBACK,
        code_challenge: challenge,
        state: 'pt-state',
        scope: 'api read_user',
      }),
      { redirect: 'manual' },
    );
    expect(response.status).toBe(302);
    const toForge = new URL(response.headers.get('location') ?? '');
    expect(toForge.origin + toForge.pathname).toBe(`${stack.forge.forge.url}/oauth/authorize`);
    expect(Object.fromEntries(toForge.searchParams)).toEqual({
      client_id: stack.forge.app.uid,
      redirect_uri: CLIENT_CALLBACK,
      response_type: 'code',
      scope: 'api read_user',
      state: 'pt-state',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const walk = await walkSignIn(
      authorizeUrl(stack.serverUrl, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: challenge, state: 'pt-state' }),
      stack.forge.user,
    );
    expect(walk.consentHtml).toBeUndefined();
    expect(walk.callback).toBeUndefined();
    expect(walk.clientRedirect.searchParams.get('state')).toBe('pt-state');
    const tokenCalls = stack.forge.forge.counters.token;
    const answer = await token(stack.serverUrl, {
      grant_type: 'authorization_code',
      code: walk.clientRedirect.searchParams.get('code') ?? '',
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: CLIENT_CALLBACK,
    });
    expect(answer.status).toBe(200);
    expect(stack.forge.forge.counters.token).toBe(tokenCalls + 1);
    expect(toolJson(await callTool(stack.serverUrl, String(answer.body.access_token), 'get_current_user'))).toMatchObject({
      username: stack.forge.user.username,
    });
  });

  it('[AUTH-VERIFIER-REQUIRED] [TOKEN-ERRORS] requires the verifier and passes forge refusals on as RFC 6749 errors', async () => {
    const clientId = await registerClient(stack.serverUrl);
    const { challenge } = pkce();
    const walk = await walkSignIn(
      authorizeUrl(stack.serverUrl, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: challenge }),
      stack.forge.user,
    );
    const code = walk.clientRedirect.searchParams.get('code') ?? '';
    const missing = await token(stack.serverUrl, {
      grant_type: 'authorization_code',
      code,
      client_id: clientId,
      redirect_uri: CLIENT_CALLBACK,
    });
    expect(missing.body.error).toBe('invalid_request');
    const wrong = await token(stack.serverUrl, {
      grant_type: 'authorization_code',
      code,
      code_verifier: pkce().verifier,
      client_id: clientId,
      redirect_uri: CLIENT_CALLBACK,
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ error: 'invalid_grant', error_description: 'The forge refused the grant.' });
    expect(wrong.headers.get('cache-control')).toBe('no-store');
    const unknownClient = await token(stack.serverUrl, {
      grant_type: 'authorization_code',
      code,
      code_verifier: 'x'.repeat(43),
      client_id: 'nope',
      redirect_uri: CLIENT_CALLBACK,
    });
    expect(unknownClient.status).toBe(401);
    expect(unknownClient.body.error).toBe('invalid_client');
  });

  it('[PASSTHROUGH-UNREGISTERED] a client callback the forge does not know is rejected by the forge', async () => {
    const unregistered = 'http://127.0.0.1:45999/elsewhere';
    const clientId = await registerClient(stack.serverUrl, [unregistered]);
    await expect(
      walkSignIn(
        authorizeUrl(stack.serverUrl, { client_id: clientId, redirect_uri: unregistered, code_challenge: pkce().challenge }),
        stack.forge.user,
      ),
    ).rejects.toThrow(/status 400/);
  });

  it('[DISCOVERY-ASM] passthrough does not claim iss in authorization responses', async () => {
    const metadata = (await (await fetch(`${stack.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(metadata.authorization_response_iss_parameter_supported).toBe(false);
  });
});

describe('discovery', () => {
  let root: Stack;
  let prefixed: Stack;
  beforeAll(async () => {
    root = await startStack({ mode: 'callback_proxy', allowedOrigins: ['https://inspector.example'] });
    prefixed = await startStack({ mode: 'callback_proxy', serverPath: '/forge' });
  });
  afterAll(async () => {
    await root.close();
    await prefixed.close();
  });

  it('[DISCOVERY-PRM] serves RFC 9728 metadata at the root and at /mcp with resource = {MCP_SERVER_URL}/mcp', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const response = await fetch(`${root.url}${path}`);
      expect(response.status, path).toBe(200);
      expect(await response.json()).toEqual({
        resource: `${root.serverUrl}/mcp`,
        authorization_servers: [root.serverUrl],
        scopes_supported: ['api', 'read_user'],
        bearer_methods_supported: ['header'],
        resource_name: 'Forge MCP server',
      });
    }
  });

  it('[DISCOVERY-ASM] serves RFC 8414 metadata with every field real clients need', async () => {
    const metadata = (await (await fetch(`${root.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(metadata).toEqual({
      issuer: root.serverUrl,
      authorization_endpoint: `${root.serverUrl}/authorize`,
      token_endpoint: `${root.serverUrl}/token`,
      registration_endpoint: `${root.serverUrl}/register`,
      revocation_endpoint: `${root.serverUrl}/revoke`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ['api', 'read_user'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
  });

  it('[DISCOVERY-PATH] serves the path-prefixed variants when MCP_SERVER_URL has a path, and the flow works there', async () => {
    const base = prefixed.url;
    expect(prefixed.serverUrl).toBe(`${base}/forge`);
    for (const path of [
      '/.well-known/oauth-protected-resource/forge/mcp',
      '/.well-known/oauth-protected-resource/forge',
      '/forge/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]) {
      const doc = (await (await fetch(`${base}${path}`)).json()) as Record<string, unknown>;
      expect(doc.resource, path).toBe(`${base}/forge/mcp`);
    }
    for (const path of [
      '/.well-known/oauth-authorization-server/forge',
      '/forge/.well-known/oauth-authorization-server',
      '/.well-known/oauth-authorization-server',
    ]) {
      const doc = (await (await fetch(`${base}${path}`)).json()) as Record<string, unknown>;
      expect(doc.issuer, path).toBe(`${base}/forge`);
      expect(doc.token_endpoint).toBe(`${base}/forge/token`);
    }
    const challenge = await fetch(`${base}/forge/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(challenge.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${base}/forge/.well-known/oauth-protected-resource/mcp", scope="api read_user"`,
    );
    const { tokens, walk } = await completeFlow(prefixed);
    expect(walk.callback).toContain('/forge/callback?');
    expect(toolJson(await callTool(prefixed.serverUrl, String(tokens.access_token), 'get_current_user'))).toMatchObject({
      username: prefixed.forge.user.username,
    });
  });

  it('[DISCOVERY-CORS] answers CORS on the metadata, /token, /register and /mcp, including preflights', async () => {
    const origin = { origin: 'https://inspector.example' };
    const metadata = await fetch(`${root.url}/.well-known/oauth-authorization-server`, { headers: origin });
    expect(metadata.headers.get('access-control-allow-origin')).toBe('*');
    const prm = await fetch(`${root.url}/.well-known/oauth-protected-resource/mcp`, { headers: origin });
    expect(prm.headers.get('access-control-allow-origin')).toBe('*');
    for (const path of ['/token', '/register', '/revoke', '/mcp', '/.well-known/oauth-authorization-server']) {
      const preflight = await fetch(`${root.url}${path}`, {
        method: 'OPTIONS',
        headers: { ...origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
      });
      expect(preflight.status, path).toBe(204);
      // /mcp echoes an allowed origin (MCP_ALLOWED_ORIGINS) instead of `*`: it refuses foreign ones (MCP-ORIGIN).
      expect(preflight.headers.get('access-control-allow-origin')).toBe(path === '/mcp' ? origin.origin : '*');
      expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    }
    const failedToken = await token(root.url, { grant_type: 'nope' });
    expect(failedToken.headers.get('access-control-allow-origin')).toBe('*');
    const challenge = await fetch(`${root.url}/mcp`, {
      method: 'POST',
      headers: { ...origin, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(challenge.headers.get('access-control-expose-headers')).toContain('www-authenticate');
  });
});

describe('registration limits', () => {
  it('[REG-RATE] limits registrations per client address: 429 with Retry-After', async () => {
    const stack = await startStack({ mode: 'callback_proxy', registerLimitPerHour: 2 });
    try {
      const body = { redirect_uris: [CLIENT_CALLBACK] };
      expect((await register(stack.url, body)).status).toBe(201);
      expect((await register(stack.url, body)).status).toBe(201);
      const limited = await register(stack.url, body);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(3500);
      expect(limited.body.error).toBe('too_many_requests');
      // Without TRUST_PROXY a forwarded address does not open a new bucket.
      expect((await register(stack.url, body, { 'x-forwarded-for': '198.51.100.1' })).status).toBe(429);
      stack.clock.advance(3_600_000);
      expect((await register(stack.url, body)).status).toBe(201);
    } finally {
      await stack.close();
    }
  });

  it('[REG-TRUST-PROXY] behind a trusted proxy a client is counted by the address the proxy appended, not by what it writes itself', async () => {
    // The test connects from 127.0.0.1, a trusted proxy under TRUST_PROXY=true (loopback and private networks): the
    // last X-Forwarded-For entry is what that proxy appended, the entries before it are what the client wrote.
    const stack = await startStack({ mode: 'callback_proxy', registerLimitPerHour: 1, trustProxy: true });
    try {
      const body = { redirect_uris: [CLIENT_CALLBACK] };
      expect((await register(stack.url, body, { 'x-forwarded-for': '198.51.100.9' })).status).toBe(201);
      // The same client writing other addresses in front of the proxy's entry still counts as 198.51.100.9.
      expect((await register(stack.url, body, { 'x-forwarded-for': '203.0.113.1, 198.51.100.9' })).status).toBe(429);
      expect((await register(stack.url, body, { 'x-forwarded-for': '203.0.113.2,198.51.100.9' })).status).toBe(429);
      // Through a second, internal proxy (a private address, trusted) the client is still the first untrusted hop.
      expect((await register(stack.url, body, { 'x-forwarded-for': '203.0.113.3, 198.51.100.9, 10.0.0.1' })).status).toBe(429);
      // Another client behind the proxy has its own budget.
      expect((await register(stack.url, body, { 'x-forwarded-for': '203.0.113.1, 198.51.100.10' })).status).toBe(201);
      // A forwarded address with a port is one client, never a 500.
      expect((await register(stack.url, body, { 'x-forwarded-for': '203.0.113.9:1234' })).status).toBe(201);
      expect((await register(stack.url, body, { 'x-forwarded-for': '203.0.113.9:5678' })).status).toBe(429);
      expect((await register(stack.url, body, { 'x-forwarded-for': '203.0.113.9' })).status).toBe(429);
      expect((await register(stack.url, body, { 'x-forwarded-for': '[2001:db8::7]:443' })).status).toBe(201);
      expect((await register(stack.url, body, { 'x-forwarded-for': 'garbage:::' })).status).toBe(201);
      expect((await register(stack.url, body, { 'x-forwarded-for': 'garbage:::' })).status).toBe(429);
    } finally {
      await stack.close();
    }
  });

  it('[RATE-IPV6] regression: an IPv6 client took a new budget per address; now one /64 shares one budget', async () => {
    const stack = await startStack({ mode: 'callback_proxy', registerLimitPerHour: 1, trustProxy: true });
    try {
      const body = { redirect_uris: [CLIENT_CALLBACK] };
      expect((await register(stack.url, body, { 'x-forwarded-for': '2001:db8:aa:bb::1' })).status).toBe(201);
      for (const other of ['2001:db8:aa:bb::2', '2001:db8:aa:bb:ffff:ffff:ffff:ffff', '[2001:DB8:AA:BB::3]:443']) {
        expect((await register(stack.url, body, { 'x-forwarded-for': other })).status, other).toBe(429);
      }
      expect((await register(stack.url, body, { 'x-forwarded-for': '2001:db8:aa:bc::1' })).status).toBe(201);
      // IPv4-mapped IPv6 counts as the IPv4 address.
      expect((await register(stack.url, body, { 'x-forwarded-for': '198.51.100.77' })).status).toBe(201);
      expect((await register(stack.url, body, { 'x-forwarded-for': '::ffff:198.51.100.77' })).status).toBe(429);
    } finally {
      await stack.close();
    }
  });
});

describe('client ID metadata documents over HTTP', () => {
  it('[REG-CIMD] an https client id is resolved from its document; its callbacks pass the allowlist', async () => {
    const clientId = 'https://client.example/oauth/client-metadata.json';
    let fetches = 0;
    const documents: Record<string, unknown> = {
      [clientId]: { client_id: clientId, client_name: 'Docs Client', redirect_uris: [CLIENT_CALLBACK, 'https://attacker.example/cb'] },
    };
    const fetchClientMetadata = async (url: URL): Promise<FetchedDocument> => {
      fetches += 1;
      const doc = documents[url.href];
      return doc
        ? { status: 200, body: JSON.stringify(doc), contentType: 'application/json', cacheControl: 'max-age=600' }
        : { status: 404, body: '', contentType: 'text/plain', cacheControl: '' };
    };
    const stack = await startStack({ mode: 'callback_proxy', fetchClientMetadata });
    try {
      const { challenge, verifier } = pkce();
      const walk = await walkSignIn(
        authorizeUrl(stack.serverUrl, { client_id: clientId, redirect_uri: CLIENT_CALLBACK, code_challenge: challenge }),
        stack.forge.user,
      );
      expect(walk.consentHtml).toContain('Docs Client');
      expect(walk.consentHtml).toContain('client.example');
      const answer = await token(stack.serverUrl, {
        grant_type: 'authorization_code',
        code: walk.clientRedirect.searchParams.get('code') ?? '',
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: CLIENT_CALLBACK,
      });
      expect(answer.status).toBe(200);
      expect(fetches).toBe(1);
      // The document lists an attacker callback, but it is not on the allowlist.
      const refused = await fetch(
        authorizeUrl(stack.serverUrl, { client_id: clientId, redirect_uri: 'https://attacker.example/cb', code_challenge: challenge }),
        { redirect: 'manual' },
      );
      expect(refused.status).toBe(400);
      expect(refused.headers.get('location')).toBeNull();
      const unknown = await fetch(
        authorizeUrl(stack.serverUrl, {
          client_id: 'https://client.example/missing.json',
          redirect_uri: CLIENT_CALLBACK,
          code_challenge: challenge,
        }),
        { redirect: 'manual' },
      );
      expect(unknown.status).toBe(400);
    } finally {
      await stack.close();
    }
  });
});

describe('metadata document fetch limit over HTTP', () => {
  it('[CIMD-SSRF] /authorize answers a 429 page once a client address used up its uncached document fetches', async () => {
    let fetches = 0;
    const fetchClientMetadata = async (url: URL): Promise<FetchedDocument> => {
      fetches += 1;
      return {
        status: 200,
        body: JSON.stringify({ client_id: url.href, redirect_uris: [CLIENT_CALLBACK] }),
        contentType: 'application/json',
        cacheControl: '',
      };
    };
    const stack = await startStack({ mode: 'callback_proxy', fetchClientMetadata });
    try {
      const open = (i: number) =>
        fetch(
          authorizeUrl(stack.serverUrl, {
            client_id: `https://client${i}.example/client.json`,
            redirect_uri: CLIENT_CALLBACK,
            code_challenge: pkce().challenge,
          }),
          { redirect: 'manual' },
        );
      for (let i = 0; i < METADATA_FETCH_LIMIT; i += 1) expect((await open(i)).status).toBe(200);
      const limited = await open(METADATA_FETCH_LIMIT);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('content-type')).toContain('text/html');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(fetches).toBe(METADATA_FETCH_LIMIT);
      // A document already fetched still works.
      expect((await open(0)).status).toBe(200);
    } finally {
      await stack.close();
    }
  });
});

describe('without remote OAuth', () => {
  it('[MODE-ENABLE] serves no OAuth endpoints, and /mcp takes a forge token the forge accepts', async () => {
    const user = { id: 1, username: 'pat-user', name: 'Pat', email: 'pat@example.test', password: randomBytes(9).toString('hex') };
    const forge = await startDevForge({ users: [user], applications: [] });
    const logs = captureLogger();
    const built = await buildMcpApp({
      settings: {
        mode: 'none',
        serverUrl: undefined,
        forgeUrl: forge.url,
        appId: undefined,
        scopes: 'api read_user',
        allowlist: parseAllowlist('defaults'),
        registerLimitPerHour: 20,
        signinLimitPer10Min: 30,
        stateless: undefined,
        localSecret: randomBytes(32),
        trustProxy: false,
        bodyLimit: 1 << 20,
      },
      log: logs.logger,
      clock: fakeClock(),
      fetch,
    });
    await built.app.listen({ host: '127.0.0.1', port: 0 });
    const address = built.app.server.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    try {
      expect((await fetch(`${url}/.well-known/oauth-authorization-server`)).status).toBe(404);
      expect((await register(url, { redirect_uris: [CLIENT_CALLBACK] })).status).toBe(404);
      const pat = forge.createPersonalAccessToken('pat-user');
      expect(toolJson(await callTool(url, pat, 'get_current_user'))).toMatchObject({ username: 'pat-user' });
      const refused = await fetch(`${url}/mcp`, {
        method: 'POST',
        headers: { authorization: 'Bearer nope', 'content-type': 'application/json' },
        body: '{}',
      });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="forge-mcp", scope="api read_user", error="invalid_token"');
    } finally {
      await built.close();
      await forge.close();
    }
  });
});
