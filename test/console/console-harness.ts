import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import axe from 'axe-core';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import type { Dialect } from '../../src/core/db/database.ts';
import { openProviderStandins, type ProviderStandins } from '../admin/provider-standins.ts';

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Debian's Chromium through playwright-core, or undefined (with a loud line) outside CI when it is missing. Under
 * CI=true a missing Chromium fails the run: the console's tests never skip there.
 */
export async function launchChromium(): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM_PATH)) {
    if (process.env.CI === 'true') throw new Error(`Chromium is required in CI but missing at ${CHROMIUM_PATH}`);
    console.warn(`\n*** SKIPPING console browser tests: no Chromium at ${CHROMIUM_PATH} (set CHROMIUM_PATH) ***\n`);
    return undefined;
  }
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox', '--disable-background-networking'] });
}

/** Where screenshots go: outside the checkout (CI checks that tests write nothing into it). */
export const SCREENSHOT_DIR = process.env.CONSOLE_SCREENSHOT_DIR ?? join(tmpdir(), 'platform-console-screenshots');

/** A browser tab on the console, recording every request it makes and every response text it receives. */
export interface ConsoleTab {
  page: Page;
  context: BrowserContext;
  /** Requests to anywhere but the platform: aborted, and listed here so a test can assert there were none. */
  thirdParty: string[];
  /** Every response body (text) the page received from the platform, for secret hunting. */
  responses: string[];
  /** Messages the page logged as errors, CSP reports included. */
  consoleErrors: string[];
  close(): Promise<void>;
}

export async function openTab(browser: Browser, baseUrl: string, viewport = { width: 1280, height: 900 }): Promise<ConsoleTab> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const thirdParty: string[] = [];
  const responses: string[] = [];
  const consoleErrors: string[] = [];
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    if (url.startsWith(baseUrl) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    thirdParty.push(url);
    return route.abort('blockedbyclient');
  });
  const pending: Promise<void>[] = [];
  page.on('response', (response: Response) => {
    pending.push(
      response.text().then(
        (text) => void responses.push(`${response.url()}\n${JSON.stringify(response.headers())}\n${text}`),
        () => undefined,
      ),
    );
  });
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  return {
    page,
    context,
    thirdParty,
    responses,
    consoleErrors,
    async close() {
      await Promise.all(pending);
      await context.close();
    },
  };
}

/** Signs in through the form and waits for the models page. */
export async function signInThroughForm(page: Page, baseUrl: string, email: string, password: string, hash = '#/models'): Promise<void> {
  await page.goto(`${baseUrl}/console/${hash}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#who').waitFor({ state: 'visible' });
}

/**
 * Evaluates `expression` in the page. Written as text because the test code is compiled for Node, without the DOM
 * library; the expression runs in the browser.
 */
export async function inPage<T = unknown>(page: Page, expression: string): Promise<T> {
  const value: unknown = await page.evaluate(expression);
  return value as T;
}

const axeSource = axe.source;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's scan of the page as it stands. Injected through the DevTools protocol (page.evaluate), which the page's
 * CSP does not govern, so the scan sees the page exactly as served.
 */
export async function axeScan(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  // A string, so the Node-side compiler (no DOM library) does not type the browser code; it runs in the page.
  const violations: unknown = await page.evaluate(`(async () => {
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  })()`);
  return violations as AxeViolation[];
}

/** Full-page screenshots of the page at 360 px and 1280 px wide and its first screen at 1280 px, in SCREENSHOT_DIR. */
export async function screenshots(page: Page, name: string): Promise<string[]> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const paths: string[] = [];
  const before = page.viewportSize();
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    const path = join(SCREENSHOT_DIR, `${name}-${width}.png`);
    await page.screenshot({ path, fullPage: true });
    paths.push(path);
  }
  // The first screen at 1280 × 800, as a reader of the README sees it (docs/console-models.png is one of these).
  await page.setViewportSize({ width: 1280, height: 800 });
  const view = join(SCREENSHOT_DIR, `${name}-1280-view.png`);
  await page.screenshot({ path: view });
  paths.push(view);
  if (before) await page.setViewportSize(before);
  return paths;
}

/** The password of the Humans the console tests add. */
export const PASSWORD = 'correct horse battery staple';

/**
 * The platform's REST listener on a real port with real SQLite or PostgreSQL, its OpenAI, Anthropic and Google
 * providers pointed at the stand-ins with their keys installed, and a member Human beside the owner.
 */
export async function openConsolePlatform(dialect: Dialect) {
  const f: ProviderStandins = await openProviderStandins(dialect);
  const identity = f.h.platform.ctx.identity;
  const member = await identity.addHuman({
    accountId: f.h.accountId,
    email: `member-${Math.random().toString(36).slice(2)}@example.test`,
    role: 'member',
    password: PASSWORD,
  });
  const memberToken = await identity.createToken({ humanId: member.human_id, plane: 'member' });
  return { f, owner: f.h.platform.owner, member: { email: member.email, humanId: member.human_id, memberToken: memberToken.token } };
}
