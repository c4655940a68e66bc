import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { secretKeyId, type SecretKey } from './crypto.ts';

const SECRET_KEY_FILE = 'secret.key';

/**
 * The key that encrypts credentials at rest: `PLATFORM_SECRET_KEY` when set, otherwise a key generated once into
 * `$PLATFORM_DATA_DIR/secret.key` (mode 0600) so an embedded install needs no setup. Replicas sharing a database
 * must share the variable. `previous` keys (from `PLATFORM_SECRET_KEY_PREVIOUS`) still decrypt during rotation.
 */
export function resolveSecretKeys(input: { configured: Buffer | undefined; previous?: Buffer | undefined; dataDir: string }): {
  current: SecretKey;
  all: SecretKey[];
  generated: boolean;
} {
  let generated = false;
  let key = input.configured;
  if (!key) {
    const path = join(input.dataDir, SECRET_KEY_FILE);
    if (existsSync(path)) {
      key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
      if (key.length < 32) throw new Error(`${path} does not hold base64 of 32 bytes`);
    } else {
      mkdirSync(input.dataDir, { recursive: true });
      key = randomBytes(32);
      writeFileSync(path, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
      chmodSync(path, 0o600);
      generated = true;
    }
  }
  const current = { id: secretKeyId(key.subarray(0, 32)), key: key.subarray(0, 32) };
  const all = [current];
  if (input.previous) all.push({ id: secretKeyId(input.previous.subarray(0, 32)), key: input.previous.subarray(0, 32) });
  return { current, all, generated };
}
