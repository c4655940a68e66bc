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
export { devForgeSeedFromState, devForgeStateFile, DEV_FORGE_STATE_FILE } from './devforge.state.ts';
export type { DevForgeSeed } from './devforge.app.ts';
export { createForgeBrowser } from './devforge.browser.ts';
export type { ForgeBrowser } from './devforge.browser.ts';
