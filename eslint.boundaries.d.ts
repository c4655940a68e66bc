import type { Linter } from 'eslint';

/** Each service and the services it may use (through their index.ts). */
export declare const SERVICE_USES: Readonly<Record<string, readonly string[]>>;
/** The flat-config entry that enforces the boundaries. */
export declare const boundariesConfig: Linter.Config;
