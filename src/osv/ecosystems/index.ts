// OSV version comparators (osv-facts.md §6): one order per ecosystem, the `0` sentinel, coarse index keys,
// ecosystem names and package-name normalisation.
export type { VersionOrder } from './types.ts';
export { comparatorFor, compareVersions } from './registry.ts';
export { KNOWN_ECOSYSTEMS, ecosystemBase, isKnownEcosystem, normalizePackageName } from './ecosystems.ts';
export { COARSE_MAX } from './coarse.ts';
