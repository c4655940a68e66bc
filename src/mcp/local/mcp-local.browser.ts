/**
 * Opening the system browser for the local sign-in (issue 3 item 11). A function type, so the flow and its tests
 * can hand in any "browser" (headless Chromium, a scripted user agent) instead of the real one.
 */
import { spawn } from 'node:child_process';
import type { Env } from '../../core/config.ts';

/** Opens `url` for the user; resolves false when no browser could be opened (the caller then prints the URL). */
export type BrowserOpener = (url: string) => Promise<boolean>;

/** How long an opener command may run before we take "still running" as "the browser is opening". */
const OPENER_WAIT_MS = 3000;

/** The command that opens a URL on `platform`, or undefined when there is no graphical session to open it in. */
export function openerCommand(platform: NodeJS.Platform, env: Env, url: string): { command: string; args: string[] } | undefined {
  if (platform === 'darwin') return { command: 'open', args: [url] };
  if (platform === 'win32') {
    // Not `cmd /c start`: cmd would treat the `&` between query parameters as a command separator.
    return { command: 'rundll32.exe', args: ['url.dll,FileProtocolHandler', url] };
  }
  // Without a display xdg-open falls back to text browsers, which would take over the terminal — or, in stdio
  // mode, write into the MCP channel. Printing the URL is the better answer there (ssh sessions, containers).
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return undefined;
  return { command: 'xdg-open', args: [url] };
}

/**
 * The system opener: `open` (macOS), the URL protocol handler (Windows) or `xdg-open` (elsewhere). The child never
 * touches our stdio (stdout is the MCP channel in stdio mode) and lives in its own process group, so stopping the
 * CLI does not take the browser with it.
 */
export function systemBrowserOpener(deps: { env: Env; platform?: NodeJS.Platform; waitMs?: number }): BrowserOpener {
  const platform = deps.platform ?? process.platform;
  return (url) => {
    const opener = openerCommand(platform, deps.env, url);
    if (opener === undefined) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      let settled = false;
      const settle = (opened: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(opened);
      };
      const child = spawn(opener.command, opener.args, {
        stdio: 'ignore',
        detached: platform !== 'win32',
        env: { ...deps.env },
        windowsHide: true,
      });
      child.once('error', () => settle(false));
      // xdg-open and open exit non-zero when nothing can handle the URL.
      child.once('exit', (code) => settle(code === 0));
      const timer = setTimeout(() => {
        child.unref();
        settle(true);
      }, deps.waitMs ?? OPENER_WAIT_MS);
    });
  };
}
