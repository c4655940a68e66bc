/**
 * Test helpers of the local OAuth flow: "browsers" that sign in at the dev forge (headless Chromium through
 * playwright-core, or the dev forge's fetch-driven user agent), a captured logger, a temporary directory and a client
 * transport over in-memory stdio.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PassThrough } from 'node:stream';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Browser } from 'playwright-core';
import { createLogger, type Logger } from '../../core/logger.ts';
import { createForgeBrowser } from '../../devforge/index.ts';
import type { BrowserOpener } from './mcp-local.browser.ts';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Launches headless Chromium, or returns undefined (with a loud warning) when it is missing outside CI. */
export async function launchChromium(): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM_PATH)) {
    if (process.env.CI === 'true') throw new Error(`Chromium is required in CI but missing at ${CHROMIUM_PATH}`);
    console.warn(`\n*** SKIPPING Chromium tests: no Chromium at ${CHROMIUM_PATH} (set CHROMIUM_PATH) ***\n`);
    return undefined;
  }
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox', '--disable-background-networking'] });
}

/** The outcome of one "browser" visit, for assertions. */
export interface Visit {
  url: string;
  done: Promise<void>;
}

/**
 * An opener that signs in with Chromium like a user: types the credentials into the forge's sign-in form, then
 * presses Authorize (or Deny) and lets the forge redirect to our loopback callback.
 */
export function chromiumOpener(
  browser: Browser,
  user: { username: string; password: string },
  decision: 'Authorize' | 'Deny' = 'Authorize',
) {
  const visits: Visit[] = [];
  const open: BrowserOpener = async (url) => {
    const done = (async () => {
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(url);
        await page.fill('#user_login', user.username);
        await page.fill('#user_password', user.password);
        await page.click('[data-testid="sign-in-button"]');
        await page.getByRole('button', { name: decision, exact: true }).click();
        // The forge redirects to our loopback listener, whose answer page says how the sign-in ended.
        await page.waitForURL((u) => u.pathname === '/callback');
        await page.getByRole('heading').waitFor();
      } finally {
        await context.close();
      }
    })();
    visits.push({ url, done });
    return true;
  };
  return { open, visits };
}

/** An opener driven by fetch: the dev forge's user agent walks sign-in and authorize, then calls our callback. */
export function fetchOpener(user: { username: string; password: string }, decision: 'authorize' | 'deny' = 'authorize') {
  const visits: Visit[] = [];
  const open: BrowserOpener = async (url) => {
    const done = (async () => {
      const callback = await createForgeBrowser().authorize(url, { ...user, decision });
      const response = await fetch(callback);
      await response.body?.cancel();
    })();
    visits.push({ url, done });
    return true;
  };
  return { open, visits };
}

/** A logger whose lines the test can read (to check that no secret is logged). */
export function capturedLogger(): { log: Logger; text: () => string } {
  const lines: string[] = [];
  const log = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } });
  return { log, text: () => lines.join('') };
}

/** A temporary directory removed by the returned function. */
export async function tempDir(prefix = 'mcp-local-'): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * An MCP client transport over a server's in-memory stdin/stdout (the stdio command run in process), recording every
 * byte the server writes (so a test can check that stdout carries MCP and nothing else).
 */
export class StreamClientTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly written: string[] = [];
  private readonly buffer = new ReadBuffer();

  constructor(
    private readonly toServer: PassThrough,
    private readonly fromServer: PassThrough,
  ) {}

  async start(): Promise<void> {
    this.fromServer.on('data', (chunk: Buffer) => {
      this.written.push(chunk.toString('utf8'));
      this.buffer.append(chunk);
      for (let message = this.buffer.readMessage(); message !== null; message = this.buffer.readMessage()) this.onmessage?.(message);
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.toServer.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.toServer.end();
    this.onclose?.();
  }
}
