/**
 * The client side of the end-to-end tests: the official MCP SDK clients — v1 (`@modelcontextprotocol/sdk`, the
 * 2025 `initialize` handshake) and v2 (`@modelcontextprotocol/client`, either era) — with one in-memory OAuth
 * client provider that fits both, a loopback callback listener (as native MCP clients run), and headless Chromium
 * doing what a user does on the consent page and the forge's pages.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider as V2OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/client';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Browser } from 'playwright-core';

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Headless Chromium, or undefined with a loud warning outside CI when it is missing (in CI it must exist). */
export async function launchChromium(): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM_PATH)) {
    if (process.env.CI === 'true') throw new Error(`Chromium is required in CI but missing at ${CHROMIUM_PATH}`);
    console.warn(`\n*** SKIPPING MCP end-to-end browser tests: no Chromium at ${CHROMIUM_PATH} (set CHROMIUM_PATH) ***\n`);
    return undefined;
  }
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox', '--disable-background-networking'] });
}

/** What the loopback callback received. */
export interface CallbackHit {
  code: string | null;
  state: string | null;
  iss: string | null;
  error: string | null;
}

/** A loopback listener at `/callback`, like the one a native MCP client opens for the sign-in. */
export async function startCallbackListener(): Promise<{ url: string; next(): Promise<CallbackHit>; close(): Promise<void> }> {
  const waiting: ((hit: CallbackHit) => void)[] = [];
  const received: CallbackHit[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      res.writeHead(404);
      res.end();
      return;
    }
    const hit: CallbackHit = {
      code: url.searchParams.get('code'),
      state: url.searchParams.get('state'),
      iss: url.searchParams.get('iss'),
      error: url.searchParams.get('error'),
    };
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Signed in</title><h1>You can close this window</h1>');
    const waiter = waiting.shift();
    if (waiter) waiter(hit);
    else received.push(hit);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    next: () => {
      const ready = received.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** An OAuthClientProvider (of both SDKs) keeping everything in memory, as an MCP client's credential store would. */
export class MemoryOAuthProvider implements OAuthClientProvider, V2OAuthClientProvider {
  authorizationUrl: URL | undefined;
  lastState: string | undefined;
  private discovery: OAuthDiscoveryState | undefined;
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';

  constructor(
    private readonly callbackUrl: string,
    private readonly name = 'E2E MCP Client',
  ) {}

  get redirectUrl(): string {
    return this.callbackUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.callbackUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    this.lastState = randomBytes(12).toString('hex');
    return this.lastState;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.info;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  // v2 binds the code exchange to the authorization server discovery found before the redirect (SEP-2352).
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }
}

/**
 * Signs in with Chromium from the authorization URL the SDK produced: approves our consent page when it shows
 * (callback proxy mode), signs in at the forge and authorizes. Returns the consent page's text when there was one.
 */
export async function signInWithChromium(
  browser: Browser,
  authorizationUrl: URL,
  user: { username: string; password: string },
): Promise<{ consentText?: string }> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(authorizationUrl.href);
    let consentText: string | undefined;
    if (await page.getByRole('button', { name: 'Approve', exact: true }).isVisible()) {
      consentText = await page.locator('main').innerText();
      await page.getByRole('button', { name: 'Approve', exact: true }).click();
    }
    await page.fill('#user_login', user.username);
    await page.fill('#user_password', user.password);
    await page.click('[data-testid="sign-in-button"]');
    await page.getByRole('button', { name: 'Authorize', exact: true }).click();
    await page.waitForURL((u) => u.pathname === '/callback' && u.searchParams.has('code'));
    return consentText === undefined ? {} : { consentText };
  } finally {
    await context.close();
  }
}
