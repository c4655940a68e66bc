import type { Command } from 'commander';
import { CliError, printJson, type CliIo, type WithService } from '../../core/cli-io.ts';
import { isAppError } from '../../core/errors.ts';
import type { ModelsCommandDeps } from '../models.commands.ts';
import type { UsageReport } from './usage.service.ts';

/** Columns of the human table, left to right. */
const HEADER = ['DAY', 'MODEL', 'REQUESTS', 'FAILED', 'INPUT', 'OUTPUT', 'CACHED', 'COST'];

function table(report: UsageReport): string[] {
  const rows = report.by_day_and_model.map((r) => [
    r.day,
    r.model,
    String(r.requests),
    String(r.failed),
    String(r.input_tokens),
    String(r.output_tokens),
    String(r.cached_input_tokens),
    r.cost ?? 'unknown',
  ]);
  const widths = HEADER.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  return [HEADER, ...rows].map((cells) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd(),
  );
}

/** The human form: a header line, one line per day and model, and the totals. */
function formatUsage(accountId: string, report: UsageReport): string[] {
  const unit = report.cost_unit ?? 'none configured';
  const { totals } = report;
  const cost = totals.cost === null ? 'unknown' : `${totals.cost} ${report.cost_unit ?? ''}`.trimEnd();
  return [
    `Usage of Account ${accountId} from ${report.from} to ${report.to} (cost unit: ${unit}):`,
    ...(report.by_day_and_model.length === 0 ? ['  no inference requests in this range'] : table(report)),
    `Total: ${totals.requests} requests, ${totals.input_tokens} input tokens (${totals.cached_input_tokens} cached), ${totals.output_tokens} output tokens, cost ${cost}.`,
  ];
}

/**
 * `platform usage --account ID [--from ISO] [--to ISO] [--model REF] [--human ID] [--json]`: the operator's form of
 * `GET /api/v1/admin/usage`, with the same range rules and the same `--json` shape (`{usage: …}`). A bad timestamp
 * or range is a usage error (exit 2).
 */
export function registerUsageCommand(program: Command, io: CliIo, withModelPlane: WithService<ModelsCommandDeps>): void {
  program
    .command('usage')
    .description("an Account's inference requests, tokens and estimated cost per UTC day and model (default: the last 30 days)")
    .requiredOption('--account <id>', 'Account id')
    .option('--from <iso>', 'start, inclusive (ISO-8601 with a zone); default --to minus 30 days')
    .option('--to <iso>', 'end, exclusive (ISO-8601 with a zone); default now')
    .option('--model <ref>', 'only this complete model reference')
    .option('--human <id>', 'only requests made by this Human')
    .option('--json', 'print {usage} as GET /api/v1/admin/usage answers it')
    .action(async (opts: { account: string; from?: string; to?: string; model?: string; human?: string; json?: boolean }) => {
      const report = await withModelPlane(async ({ plane, accountExists }) => {
        if (!(await accountExists(opts.account))) throw new CliError(`no Account with id ${opts.account}`);
        try {
          return await plane.usage.report(opts.account, { from: opts.from, to: opts.to, model: opts.model, humanId: opts.human });
        } catch (error) {
          if (isAppError(error) && error.code === 'parameter_invalid') throw new CliError(error.message, 2);
          throw error;
        }
      });
      if (opts.json) printJson(io, { usage: report });
      else for (const line of formatUsage(opts.account, report)) io.out(line);
    });
}
