/**
 * The dev forge's state file: what makes users, the OAuth application, grants and tokens survive a restart, so MCP
 * clients signed in before `npm start` was restarted keep working and stdio configs keep matching; and what was done
 * on the forge (issues, merge requests, notes, repositories, pipelines: devforge.state.records.ts), so a restart
 * does not undo it.
 *
 * One JSON file, rewritten whole after every change: write a temporary file beside it, fsync, rename over the old
 * one, fsync the directory. A crash leaves either the old or the new file, never half of one. The forge is a
 * single-process development stand-in with a few hundred records (file contents stored once per blob), so a synchronous rewrite per change (written
 * before the response that reveals the change is sent) is simpler than a database and cannot lose an issued token.
 *
 * Secrets at rest: tokens, codes and passwords are stored as SHA-256 hashes (the store's own shape). The only clear
 * secrets are the `shown` ones: the seeded user's password and the banner's personal access token, kept so every
 * start can print the same sign-in again. The file is mode 0600 in a directory created 0700.
 */
import { closeSync, existsSync, fchmodSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { devForgeSeed, type DevForgeSeed } from './devforge.seed.ts';
import type { DevForgeRecordsSnapshot } from './devforge.state.records.ts';
import type { DevForgeStoreSnapshot } from './devforge.store.ts';
import type { DevForgeUser } from './devforge.types.ts';

/** The state file's name inside `PLATFORM_DATA_DIR`. */
export const DEV_FORGE_STATE_FILE = 'devforge.json';

const VERSION = 1;

/** The file's content. */
export interface DevForgeState {
  version: typeof VERSION;
  /** Clear secrets the banner repeats on every start, e.g. `password:dev`, `pat:devforge command`. */
  shown: Record<string, string>;
  store: DevForgeStoreSnapshot;
  /** Repositories, CI and the work records of issues and merge requests; absent in files written before them. */
  records?: DevForgeRecordsSnapshot;
}

/** The state file for a data directory. */
export function devForgeStateFile(dataDir: string): string {
  return join(dataDir, DEV_FORGE_STATE_FILE);
}

/**
 * Reads the state file; `undefined` when it does not exist. A file that is not a dev forge state (corrupt, or of
 * another version) stops the start with one line naming the file, rather than being silently replaced.
 */
export function readDevForgeState(file: string): DevForgeState | undefined {
  if (!existsSync(file)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new Error(`dev forge: ${file} is not valid JSON; move it away to start with a fresh dev forge`);
  }
  const state = parsed as Partial<DevForgeState> | null;
  if (
    !state ||
    state.version !== VERSION ||
    typeof state.shown !== 'object' ||
    typeof state.store !== 'object' ||
    !Array.isArray(state.store.users)
  ) {
    throw new Error(`dev forge: ${file} is not a version ${VERSION} dev forge state; move it away to start with a fresh dev forge`);
  }
  return state as DevForgeState;
}

/** Writes the state file atomically (temporary file, fsync, rename, directory fsync), mode 0600. */
/** Writes serialised state atomically (the forge compares the text to skip unchanged writes). */
export function writeStateText(file: string, text: string): void {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  const fd = openSync(temp, 'w', 0o600);
  try {
    // The mode argument applies only to a new file; a leftover temporary file gets it here.
    fchmodSync(fd, 0o600);
    writeSync(fd, text);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  closeSync(fd);
  renameSync(temp, file);
  // The rename is durable only once the directory entry is on disk (not every platform lets a directory be opened).
  try {
    const dirFd = openSync(dir, 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // best effort
  }
}

/**
 * The development seed for a state file: on a first start (no file) a fresh {@link devForgeSeed}; afterwards the
 * stored users (with the passwords the banner shows) and applications (same uid, the given redirect URIs), so the
 * banner, the MCP server's `FORGE_OAUTH_APP_ID` and every client's configuration stay the same across restarts.
 */
export function devForgeSeedFromState(file: string, redirectUris: string[]): DevForgeSeed {
  const fresh = devForgeSeed(redirectUris);
  const state = readDevForgeState(file);
  if (!state) return fresh;
  const users: DevForgeUser[] = [];
  for (const u of state.store.users) {
    const password = state.shown[shownPasswordKey(u.username)];
    if (password !== undefined) users.push({ id: u.id, username: u.username, name: u.name, email: u.email, password });
  }
  const applications = state.store.applications.map((a) => ({ ...a, redirectUris: [...redirectUris] }));
  return { users: users.length > 0 ? users : fresh.users, applications: applications.length > 0 ? applications : fresh.applications };
}

/** Key of a seeded user's clear password in {@link DevForgeState.shown}. */
export function shownPasswordKey(username: string): string {
  return `password:${username.toLowerCase()}`;
}
