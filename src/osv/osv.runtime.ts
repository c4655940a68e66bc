// One PlatformOSV per platform context: the REST listener (HTTP mappings) and the gRPC listener share the same
// service and the same in-memory index, whichever of them is built first.
import type { PlatformContext } from '../app/context.ts';
import { createIndexKeeper, type IndexKeeper } from './osv.loader.ts';
import { createOsvService, type OsvService } from './osv.service.ts';

/** The service of a context and the keeper of its index. */
export interface OsvRuntime {
  service: OsvService;
  keeper: IndexKeeper;
}

const runtimes = new WeakMap<PlatformContext, OsvRuntime>();

/**
 * The context's PlatformOSV, created on first use: the index build starts at once (queries before it is ready wait
 * for it within their deadline) and the corpus generation is polled every `OSV_REFRESH_INTERVAL_MS`.
 */
export function osvRuntimeFor(ctx: PlatformContext): OsvRuntime {
  let runtime = runtimes.get(ctx);
  if (runtime === undefined) {
    const log = ctx.log.child({ service: 'osv' });
    const keeper = createIndexKeeper({ db: ctx.database.db, log, intervalMs: ctx.config.osv.OSV_REFRESH_INTERVAL_MS });
    const service = createOsvService({ db: ctx.database.db, index: keeper, config: ctx.config.osv, clock: ctx.clock, log });
    runtime = { service, keeper };
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
}
