import type { Command } from 'commander';
import { loadPlatformConfig } from '../../app/config.ts';
import { PLATFORM_MIGRATIONS } from '../../app/migrations.ts';
import { openDatabase } from '../../core/db/database.ts';
import { migrate, pendingMigrations } from '../../core/db/migrator.ts';
import { printJson, type CliIo } from '../../core/cli-io.ts';

/** `platform migrate [--status]`: applies pending migrations (each in its own transaction) or lists them. */
export function registerMigrateCommand(program: Command, io: CliIo): void {
  program
    .command('migrate')
    .description('apply pending database migrations (DATABASE_URL)')
    .option('--status', 'only list pending migrations')
    .option('--json', 'print JSON')
    .action(async (opts: { status?: boolean; json?: boolean }) => {
      const config = loadPlatformConfig(io.env);
      const database = await openDatabase(config.core.DATABASE_URL);
      try {
        if (opts.status) {
          const pending = await pendingMigrations(database, PLATFORM_MIGRATIONS);
          if (opts.json) return printJson(io, { pending });
          io.out(pending.length === 0 ? 'No pending migrations.' : `Pending: ${pending.join(', ')}`);
          return;
        }
        const report = await migrate(database, PLATFORM_MIGRATIONS);
        if (opts.json) return printJson(io, report);
        io.out(
          report.applied.length === 0
            ? `Database ${database.location} is up to date.`
            : `Applied ${report.applied.join(', ')} to ${database.location}.`,
        );
      } finally {
        await database.close();
      }
    });
}
