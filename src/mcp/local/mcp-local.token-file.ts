/**
 * The token file of the local OAuth flow (issue 3 item 11): one JSON object with the forge token pair, readable
 * only by the user (file 0600, a directory we create 0700), replaced atomically (temporary file + rename) so a
 * crash or a concurrent reader never sees half a file.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../../core/logger.ts';

/**
 * What the file holds, and nothing more: the pair, when the access token expires, its scope, and which forge and
 * application issued it (so a token is never sent to another forge, and `logout` can revoke it without config).
 */
export interface StoredTokenSet {
  version: 1;
  forge_url: string;
  client_id: string;
  access_token: string;
  refresh_token: string;
  /** Epoch milliseconds, by the local clock at the time of the exchange. */
  expires_at: number;
  scope: string;
}

const storedTokenSetSchema = z.strictObject({
  version: z.literal(1),
  forge_url: z.string().min(1),
  client_id: z.string().min(1),
  access_token: z.string().min(1),
  refresh_token: z.string().min(1),
  expires_at: z.number().int().nonnegative(),
  scope: z.string(),
});

/** Reads and replaces the token file. */
export interface TokenFile {
  readonly path: string;
  /** The stored set; undefined when there is none or it is unreadable (then a new sign-in replaces it). */
  read(): Promise<StoredTokenSet | undefined>;
  /** Replaces the file atomically with mode 0600. */
  write(set: StoredTokenSet): Promise<void>;
  /** Deletes the file; false when there was none. */
  remove(): Promise<boolean>;
}

/** `~/.config/platform/forge-token.json`, the default of `FORGE_OAUTH_TOKEN_PATH`. */
export function defaultTokenPath(home: string = homedir()): string {
  return join(home, '.config', 'platform', 'forge-token.json');
}

function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}

/** A token file at `path`. `log` receives warnings (never file contents). */
export function createTokenFile(deps: { path: string; log: Logger }): TokenFile {
  const { path, log } = deps;
  const posix = process.platform !== 'win32';

  return {
    path,

    async read() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        if (isErrno(error, 'ENOENT')) return undefined;
        throw error;
      }
      if (posix) {
        const info = await stat(path);
        // Someone loosened the mode: say so rather than silently keep using a file others can read.
        if ((info.mode & 0o077) !== 0)
          log.warn({ path, mode: (info.mode & 0o777).toString(8) }, 'forge token file is readable by other users; it should be 0600');
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        log.warn({ path }, 'forge token file is not valid JSON; a new sign-in will replace it');
        return undefined;
      }
      const result = storedTokenSetSchema.safeParse(parsed);
      if (!result.success) {
        log.warn({ path }, 'forge token file has an unexpected shape; a new sign-in will replace it');
        return undefined;
      }
      return result.data;
    },

    async write(set) {
      const dir = dirname(path);
      // mode applies only to directories mkdir creates; an existing directory (maybe /tmp) is left as it is.
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
      // 'wx' = O_CREAT|O_EXCL: never follows a planted symlink; 0600 from the first byte (umask can only remove bits).
      const handle = await open(temp, 'wx', 0o600);
      try {
        try {
          await handle.writeFile(`${JSON.stringify(set, null, 2)}\n`, 'utf8');
          await handle.sync();
        } finally {
          await handle.close();
        }
        await rename(temp, path);
      } catch (error) {
        await unlink(temp).catch(() => undefined);
        throw error;
      }
    },

    async remove() {
      try {
        await unlink(path);
        return true;
      } catch (error) {
        if (isErrno(error, 'ENOENT')) return false;
        throw error;
      }
    },
  };
}
