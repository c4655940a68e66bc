// `platform osv import PATH...` and `platform osv status` (docs/osv.md).
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import type { Clock } from '../core/clock.ts';
import { CliError, printJson, type CliIo, type WithService } from '../core/cli-io.ts';
import type { DatabaseHandle } from '../core/db/database.ts';
import { importFiles, type ImportProgress, type ImportReport, type RejectedRecord } from './osv.importer.ts';
import { estimateRecords, listSourceFiles, SourceError } from './osv.sources.ts';
import { corpusCounts } from './osv.store.ts';
import type { OsvTables } from './osv.table.ts';

/** How often the plain (non-TTY) progress line is written. */
const PLAIN_PROGRESS_MS = 5000;
/** Rejected records printed after an import (all of them with --json). */
const REJECTED_PRINTED = 50;

export interface ProgressView {
  update(p: ImportProgress): void;
  stop(): void;
}

function rate(count: number, ms: number): number {
  return ms > 0 ? Math.round((count * 1000) / ms) : 0;
}

/**
 * A cli-progress bar on stderr when it is a terminal; otherwise a plain line every few seconds through `io.err`
 * (logs stay readable).
 */
export function progressView(io: CliIo, total: number, quiet: boolean, stderr: NodeJS.WriteStream = process.stderr): ProgressView {
  if (quiet) return { update: () => undefined, stop: () => undefined };
  if (stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream: stderr,
        format: 'importing [{bar}] {percentage}% | {value}/{total} records | {rate} records/s | {invalid} invalid | {duration_formatted}',
        hideCursor: true,
        fps: 5,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(Math.max(total, 1), 0, { rate: 0, invalid: 0 });
    return {
      update(p) {
        if (p.read > bar.getTotal()) bar.setTotal(p.read);
        bar.update(p.read, { rate: rate(p.read, p.elapsedMs), invalid: p.invalid });
      },
      stop: () => bar.stop(),
    };
  }
  let last = 0;
  return {
    update(p) {
      if (p.elapsedMs - last < PLAIN_PROGRESS_MS) return;
      last = p.elapsedMs;
      io.err(
        `importing: ${p.read}/${total} records read, ${p.written} written, ${p.invalid} invalid, ${rate(p.read, p.elapsedMs)} records/s`,
      );
    },
    stop: () => undefined,
  };
}

function describeRejected(r: RejectedRecord): string {
  return `invalid record ${r.id ?? '(no id)'} in ${r.source}: ${r.reason}`;
}

function summary(report: ImportReport): string {
  const seconds = (report.ms / 1000).toFixed(1);
  return (
    `${report.interrupted ? 'Interrupted after' : 'Imported'} ${report.read} records in ${seconds} s (${rate(report.read, report.ms)} records/s): ` +
    `${report.inserted} new, ${report.updated} updated, ${report.unchanged} unchanged, ${report.older} older than stored, ` +
    `${report.withdrawn} withdrawn, ${report.invalid} invalid.`
  );
}

/** What the `osv` commands work with: the corpus's database (the importer picks its writer by dialect) and a clock. */
export interface OsvCommandDeps {
  database: DatabaseHandle<OsvTables>;
  clock: Clock;
}

/** Registers `platform osv …`. */
export function registerOsvCommands(program: Command, io: CliIo, withCorpus: WithService<OsvCommandDeps>): void {
  const osv = program.command('osv').description('manage the OSV vulnerability corpus of PlatformOSV');
  osv
    .command('import')
    .description('import OSV records from JSON files, directories, .jsonl files and OSV.dev all.zip archives (DATABASE_URL)')
    .argument('<paths...>', 'files or directories to import')
    .option('--batch-size <n>', 'records per transaction', '1000')
    .option('--strict', 'exit with status 1 when any record is invalid')
    .option('--quiet', 'no progress output')
    .option('--json', 'print the import report as one JSON object')
    .action(async (paths: string[], opts: { batchSize: string; strict?: boolean; quiet?: boolean; json?: boolean }) => {
      const batchSize = Number(opts.batchSize);
      if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 50_000)
        throw new CliError('--batch-size: expected an integer from 1 to 50000', 2);
      let files;
      try {
        files = await listSourceFiles(paths);
      } catch (error) {
        if (error instanceof SourceError) throw new CliError(error.message);
        throw error;
      }
      if (files.length === 0) throw new CliError(`no .json, .jsonl or .zip files found in ${paths.join(', ')}`);
      const total = await estimateRecords(files);
      const controller = new AbortController();
      const onSignal = () => {
        io.err('stopping after the current batch (interrupt again to force)…');
        controller.abort();
        process.once('SIGINT', () => process.exit(130));
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      let report: ImportReport;
      try {
        report = await withCorpus(async ({ database, clock }) => {
          const view = progressView(io, total, opts.quiet === true || opts.json === true);
          try {
            return await importFiles(database, files, {
              batchSize,
              signal: controller.signal,
              onProgress: (p) => view.update(p),
              clock,
            });
          } finally {
            view.stop();
          }
        });
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
      if (opts.json) printJson(io, report);
      else {
        for (const r of report.rejected.slice(0, REJECTED_PRINTED)) io.err(describeRejected(r));
        if (report.invalid > REJECTED_PRINTED)
          io.err(`… and ${report.invalid - REJECTED_PRINTED} more invalid records (use --json to list them)`);
        io.out(summary(report));
        if (report.interrupted) io.out('Every finished batch is stored; run the same command again to import the rest.');
      }
      if (report.interrupted) throw new CliError('import interrupted', 130);
      if (opts.strict && report.invalid > 0) throw new CliError(`${report.invalid} invalid records`);
    });
  osv
    .command('status')
    .description('show the size and generation of the OSV corpus')
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }) => {
      const counts = await withCorpus(({ database }) => corpusCounts(database.db));
      if (opts.json) return printJson(io, counts);
      io.out(`${counts.records} records (${counts.withdrawn} withdrawn), ${counts.rows} index rows, generation ${counts.generation}.`);
    });
}
