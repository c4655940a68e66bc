/**
 * The dev forge, a GitLab-compatible stand-in for development and end-to-end tests (issue 3, item 12).
 */
export { buildDevForge, startDevForge, devForgeSeed, DEFAULT_ACCESS_TOKEN_TTL_SECONDS } from './devforge.app.ts';
export type {
  DevForge,
  StartedDevForge,
  DevForgeApplication,
  DevForgeCounters,
  DevForgeOptions,
  DevForgeUser,
} from './devforge.app.ts';
export { registerDevForgeCommand } from './devforge.command.ts';
export { createForgeBrowser } from './devforge.browser.ts';
export type { ForgeBrowser } from './devforge.browser.ts';
