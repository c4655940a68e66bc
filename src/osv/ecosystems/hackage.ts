// Hackage (Haskell PVP, osv-facts.md §6): a version is a list of numbers separated by dots, compared as a list, so
// `0.1.0 < 0.1.0.0`. Anything else (tags such as `-notallowed`) is invalid.
import { cmpPadded } from './numbers.ts';
import { coarseOfComponents, parseSemverLike } from './semver.ts';
import type { VersionOrder } from './types.ts';

/** A parsed Hackage version: its numeric components. */
export interface HackageVersion {
  readonly components: readonly string[];
}

/** Hackage version order; refuses versions with anything but numbers and dots (a leading `v` is tolerated). */
export const hackageOrder: VersionOrder<HackageVersion> = {
  parse(version) {
    const v = parseSemverLike(version, -1);
    return v.build === '' ? { components: v.components } : undefined;
  },
  compare(a, b) {
    const d = cmpPadded(a.components, b.components);
    if (d !== 0) return d;
    const n = a.components.length - b.components.length;
    return n < 0 ? -1 : n > 0 ? 1 : 0;
  },
  coarse: (v) => coarseOfComponents(v.components),
};
