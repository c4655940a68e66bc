import type { Command } from 'commander';
import { CliError, printJson, type CliIo, type WithService } from '../core/cli-io.ts';
import type { CredentialService } from './credentials/credentials.service.ts';

/**
 * `platform secrets rotate`: re-encrypts every stored provider credential under the current `PLATFORM_SECRET_KEY`.
 * Run it with the old key in `PLATFORM_SECRET_KEY_PREVIOUS`; once it reports nothing left to rotate (and every
 * replica runs the new key), the previous key can be dropped. Prints counts only, never key material.
 */
export function registerSecretsCommands(program: Command, io: CliIo, withCredentials: WithService<CredentialService>): void {
  const secrets = program.command('secrets').description('manage encryption of stored secrets');
  secrets
    .command('rotate')
    .description(
      're-encrypt stored provider credentials under the current PLATFORM_SECRET_KEY (old values decrypt with PLATFORM_SECRET_KEY_PREVIOUS)',
    )
    .option('--json', 'print {rotated, current, failed}')
    .action(async (opts: { json?: boolean }) => {
      const counts = await withCredentials((credentials) => credentials.rotate());
      if (opts.json) printJson(io, counts);
      else
        io.out(
          `Re-encrypted ${counts.rotated} provider credential(s) under the current key; ${counts.current} already current; ${counts.failed} could not be decrypted.`,
        );
      if (counts.failed > 0) {
        throw new CliError(
          `${counts.failed} credential(s) could not be decrypted with PLATFORM_SECRET_KEY or PLATFORM_SECRET_KEY_PREVIOUS; they are unusable until re-entered`,
        );
      }
    });
}
