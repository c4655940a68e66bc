/** A parsed-version order for one ecosystem. */
export interface VersionOrder<V = unknown> {
  /**
   * Parses a version; returns undefined when this ecosystem's parser refuses it (Alpine, CRAN, Debian/Ubuntu/opam,
   * Hackage, PyPI error on invalid input; the others accept any string).
   */
  parse(version: string): V | undefined;
  /** Negative, zero or positive, like Array.prototype.sort. */
  compare(a: V, b: V): number;
  /**
   * Optional coarse sortable key EE:XXXXXXXX.YYYYYYYY.ZZZZZZZZ, monotonic non-decreasing in compare order
   * (omit for apk ecosystems).
   */
  coarse?(v: V): string;
}
