// One PlatformOSV per platform context: the REST listener (HTTP mappings) and the gRPC listener share the same
// service and the same in-memory index, whichever of them is built first.
import type { PlatformContext } from '../app/context.ts';
import { createAnswerEncoder, type AnswerEncoder } from './osv.answer.ts';
import { createIndexKeeper, type IndexKeeper } from './osv.loader.ts';
import { createOsvService, type OsvService } from './osv.service.ts';
import { narrowTables } from '../core/db/database.ts';

/** The service of a context and the keeper of its index. */
export interface OsvRuntime {
  service: OsvService;
  keeper: IndexKeeper;
  /** Computes the stored answers of records that have none (osv.answer.ts). */
  answers: AnswerEncoder;
}

const runtimes = new WeakMap<PlatformContext, OsvRuntime>();

/**
 * The context's PlatformOSV, created on first use: the index build starts at once (queries before it is ready wait
 * for it within their deadline), the corpus generation is polled every `OSV_REFRESH_INTERVAL_MS`, and the answers
 * of records that have none are computed after each build or refresh.
 */
export function osvRuntimeFor(ctx: PlatformContext): OsvRuntime {
  let runtime = runtimes.get(ctx);
  if (runtime === undefined) {
    const log = ctx.log.child({ service: 'osv' });
    const answers = createAnswerEncoder({ db: narrowTables(ctx.database.db), log });
    const keeper = createIndexKeeper({ db: narrowTables(ctx.database.db), log, intervalMs: ctx.config.osv.OSV_REFRESH_INTERVAL_MS, onChange: () => answers.kick() });
    const service = createOsvService({ db: narrowTables(ctx.database.db), index: keeper, config: ctx.config.osv, clock: ctx.clock, log });
    runtime = { service, keeper, answers };
    runtimes.set(ctx, runtime);
    ctx.onClose(() => closeOsvRuntime(ctx));
    keeper.start();
  }
  return runtime;
}

/** Stops the context's index refresh (when it has one). */
export async function closeOsvRuntime(ctx: PlatformContext): Promise<void> {
  const runtime = runtimes.get(ctx);
  if (runtime === undefined) return;
  runtimes.delete(ctx);
  await runtime.keeper.close();
  await runtime.answers.close();
}
