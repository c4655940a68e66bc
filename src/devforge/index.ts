/**
 * The dev forge, a GitLab-compatible stand-in for development and end-to-end tests (issue 3, item 12): what the MCP
 * server and the composition root use of it. Its command is registered by the CLI from `devforge.command.ts`.
 */
export { startDevForge, devForgeSeed } from './devforge.app.ts';
export type { StartedDevForge, DevForgeApplication, DevForgeUser } from './devforge.app.ts';
export { devForgeSeedFromState, devForgeStateFile } from './devforge.state.ts';
export { createForgeBrowser } from './devforge.browser.ts';
export type { ForgeBrowser } from './devforge.browser.ts';
