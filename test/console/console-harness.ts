import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import axe from 'axe-core';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import type { Dialect } from '../../src/core/db/database.ts';
import { httpClient } from '../admin/admin-harness.ts';
import { runCli, spawnPlatform, waitForOutput } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { repoRoot } from '../support/shared.ts';
import { startStandin, type Standin } from '../support/upstream/index.ts';

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

/** The README's picture of the console: the Models page's first screen at 1280 × 800, as `screenshots` takes it. */
export const README_SCREENSHOT = join(repoRoot, 'docs', 'console-models.png');

/**
 * With `CONSOLE_README_SCREENSHOT=update`, copies the test's Models shot over the README's picture, so the README
 * shows what the tests saw. Off by default: a test run never writes into the checkout.
 */
export function updateReadmeScreenshot(shots: string[]): void {
  if (process.env.CONSOLE_README_SCREENSHOT !== 'update') return;
  const view = shots.find((s) => s.endsWith('-1280-view.png'));
  if (view) copyFileSync(view, README_SCREENSHOT);
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

/** The secret key of the console's test servers (fixed, so a failure can be replayed). */
const SECRET_KEY = Buffer.alloc(32, 9).toString('base64');

/** The shipped catalog's providers the console tests point at stand-ins, with the declaration each gets. */
const STANDIN_PROVIDERS = {
  openai: { id: 'openai', display_name: 'OpenAI', api_format: 'openai_chat', key: 'sk-standin-console-openai-0123456789' },
  anthropic: { id: 'anthropic', display_name: 'Anthropic', api_format: 'anthropic_messages', key: 'sk-ant-standin-console-0123456789' },
} as const;

/** A Human seeded through the CLI, who signs in with `password`. */
export interface SeededHuman {
  humanId: string;
  email: string;
  password: string;
}

/** `platform serve` in a child process with what the console tests need around it. */
export interface ConsoleServer {
  /** The REST listener's URL, as the start banner printed it. */
  url: string;
  call: ReturnType<typeof httpClient>['call'];
  owner: SeededHuman & { accountId: string; platformToken: string };
  member: SeededHuman & { memberToken: string };
  standins: Record<keyof typeof STANDIN_PROVIDERS, Standin>;
  /** Everything the server process wrote on stdout and stderr (its logs included) so far. */
  output(): string;
  /** The provider's current lock_version, read through the admin API. */
  version(providerId: string): Promise<number | null>;
  close(): Promise<void>;
}

/**
 * `platform serve --only admin` as a child process on a fresh SQLite file or PostgreSQL schema, the way an operator
 * runs it: it migrates, creates the bootstrap owner (read from its banner) and listens on a port it picks (read from
 * its banner too, so no port is raced). Then, only through the public surface: a member Human and their member-plane
 * token from the CLI, the OpenAI and Anthropic providers pointed at local stand-ins (loopback upstreams allowed, as
 * on the embedded default) with their keys installed through the admin API.
 */
export async function startConsoleServer(dialect: Dialect): Promise<ConsoleServer> {
  const database = await openTestDatabase(dialect, { migrate: false });
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-console-'));
  const env = {
    PLATFORM_DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    PLATFORM_SECRET_KEY: SECRET_KEY,
    // The production cost (2^17) would add seconds to every sign-in of the suite.
    PLATFORM_PASSWORD_COST: '14',
    PLATFORM_UPSTREAM_ALLOW_PRIVATE: 'true',
    PLATFORM_HTTP_PORT: '0',
    // Debug logs, so the secret hunts read everything the server could have written.
    LOG_LEVEL: 'debug',
  };
  const standins = {
    openai: await startStandin({ dialect: 'openai', apiKey: STANDIN_PROVIDERS.openai.key }),
    anthropic: await startStandin({ dialect: 'anthropic', apiKey: STANDIN_PROVIDERS.anthropic.key }),
  };
  const child = spawnPlatform(['serve', '--only', 'admin'], env);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    await Promise.all(Object.values(standins).map((s) => s.close()));
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const { stdout } = await waitForOutput(child, (out) => /^database\s/m.test(out), 90_000);
    const field = (name: string) => {
      const value = new RegExp(`^\\s*${name}:\\s+(\\S+)`, 'm').exec(stdout)?.[1];
      if (!value) throw new Error(`the start banner has no ${name}:\n${stdout}`);
      return value;
    };
    const url = /^rest\s+(http:\/\/\S+)/m.exec(stdout)?.[1];
    if (!url) throw new Error(`the start banner has no REST URL:\n${stdout}`);
    const { call } = httpClient(url);
    const cli = async (argv: string[]) => {
      const run = await runCli([...argv, '--json'], env);
      if (run.code !== 0) throw new Error(`platform ${argv.join(' ')}: ${run.stderr}`);
      return JSON.parse(run.stdout) as Record<string, string>;
    };
    const ownerSession = await call('POST', '/api/v1/sessions', { body: { email: field('email'), password: field('password') } });
    if (ownerSession.status !== 200) throw new Error(`owner sign-in: ${ownerSession.status} ${ownerSession.text}`);
    const owner = {
      accountId: field('account'),
      humanId: (ownerSession.body as { session: { human: { id: string } } }).session.human.id,
      email: field('email'),
      password: field('password'),
      platformToken: field('platform token'),
    };
    const added = await cli(['humans', 'add', '--account', owner.accountId, '--email', `member-${randomUUID()}@example.test`]);
    const memberToken = await cli(['tokens', 'create', '--human', String(added.human_id), '--plane', 'member']);
    const member = {
      humanId: String(added.human_id),
      email: String(added.email),
      password: String(added.password),
      memberToken: String(memberToken.token),
    };
    const version = async (providerId: string): Promise<number | null> => {
      const read = await call('GET', `/api/v1/admin/model_providers/${providerId}`, { token: owner.platformToken });
      if (read.status !== 200) throw new Error(`reading ${providerId}: ${read.status} ${read.text}`);
      return (read.body as { model_provider: { lock_version: number | null } }).model_provider.lock_version;
    };
    for (const [name, p] of Object.entries(STANDIN_PROVIDERS)) {
      const standin = standins[name as keyof typeof STANDIN_PROVIDERS];
      const definition = { display_name: p.display_name, base_url: standin.baseUrl, api_format: p.api_format, credentials: 'api_key' };
      const path = `/api/v1/admin/model_providers/${p.id}`;
      const put = await call('PUT', `${path}/definition`, {
        token: owner.platformToken,
        body: { command: { definition, expected_lock_version: await version(p.id) } },
      });
      if (put.status !== 200) throw new Error(`pointing ${p.id} at its stand-in: ${put.status} ${put.text}`);
      const key = await call('PUT', `${path}/api_key`, { token: owner.platformToken, body: { command: { api_key: p.key } } });
      if (key.status !== 200) throw new Error(`installing the ${p.id} key: ${key.status} ${key.text}`);
      standin.reset();
    }
    return { url, call, owner, member, standins, output: () => output, version, close: stop };
  } catch (error) {
    await stop();
    throw new Error(`the console's server did not start: ${String(error)}\n${output}`);
  }
}

/** One layout shift as the Layout Instability API reports it, with what moved (for the failure message). */
export interface LayoutShift {
  value: number;
  hadRecentInput: boolean;
  sources: string[];
}

/**
 * Starts recording the page's layout shifts (PerformanceObserver 'layout-shift', buffered, so shifts since the
 * document started count too). Input-driven shifts count as well: CLS leaves out those within 500 ms of a click or
 * key press, but an update the user asked for must not move the page either, so nothing is excused here. `take()`
 * waits two frames (shifts are found when a frame is laid out), then returns and forgets what was recorded.
 */
export async function recordShifts(page: Page): Promise<{ take(): Promise<LayoutShift[]> }> {
  await page.evaluate(`(() => {
    if (window.__shifts) return;
    window.__shifts = [];
    const describe = (node) => {
      if (!node) return '(gone)';
      const el = node.nodeType === 1 ? node : node.parentElement;
      if (!el) return '#text';
      const id = el.id ? '#' + el.id : '';
      const cls = typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\\s+/).join('.') : '';
      return el.tagName.toLowerCase() + id + cls;
    };
    new PerformanceObserver((list) => {
      for (const e of list.getEntries())
        window.__shifts.push({
          value: e.value,
          hadRecentInput: e.hadRecentInput,
          sources: e.sources.map((s) => describe(s.node) + ' ' + JSON.stringify([s.previousRect.y, s.currentRect.y, s.previousRect.height, s.currentRect.height])),
        });
    }).observe({ type: 'layout-shift', buffered: true });
  })()`);
  return {
    async take() {
      await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 50))))');
      return inPage<LayoutShift[]>(page, 'window.__shifts.splice(0)');
    },
  };
}

/** The summed score of `shifts` (what CLS adds up, input-driven shifts included). */
export const shiftScore = (shifts: LayoutShift[]) => shifts.reduce((sum, s) => sum + s.value, 0);

/** The document-relative top of the first element each selector finds (null when none): where a container starts. */
export async function tops(page: Page, selectors: string[]): Promise<Record<string, number | null>> {
  const found = await boxes(page, selectors);
  return Object.fromEntries(Object.entries(found).map(([s, b]) => [s, b?.top ?? null]));
}

/**
 * The document-relative box of the first element each selector finds (null when none): what a reader's eye holds
 * on to. Comparing two readings catches moves the Layout Instability API cannot see, such as a table rebuilt with
 * taller rows (new nodes are never "shifted").
 */
export async function boxes(
  page: Page,
  selectors: string[],
): Promise<Record<string, { top: number; left: number; height: number } | null>> {
  return inPage(
    page,
    `(${JSON.stringify(selectors)}).reduce((out, s) => {
      const el = document.querySelector(s);
      const r = el?.getBoundingClientRect();
      out[s] = r ? { top: Math.round(r.top + scrollY), left: Math.round(r.left + scrollX), height: Math.round(r.height) } : null;
      return out;
    }, {})`,
  );
}
