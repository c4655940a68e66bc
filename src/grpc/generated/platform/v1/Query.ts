// Original file: proto/platform/v1/osv.proto

import type { Package as _platform_v1_Package, Package__Output as _platform_v1_Package__Output } from '../../platform/v1/Package.ts';

/**
 * A query: a package at a version, or a commit.
 */
export interface Query {
  /**
   * A commit hash (hex). With a commit, `package` is optional and ignored.
   */
  'commit'?: (string);
  /**
   * A version string of the package, in the ecosystem's own syntax. Empty: every vulnerability of the package.
   */
  'version'?: (string);
  /**
   * The package to query. Required unless `commit` is set.
   */
  'package'?: (_platform_v1_Package | null);
  /**
   * `next_page_token` of the previous page of this query; empty for the first page.
   */
  'page_token'?: (string);
  /**
   * What to match: at most one of these may be set.
   */
  'param'?: "commit"|"version";
}

/**
 * A query: a package at a version, or a commit.
 */
export interface Query__Output {
  /**
   * A commit hash (hex). With a commit, `package` is optional and ignored.
   */
  'commit'?: (string);
  /**
   * A version string of the package, in the ecosystem's own syntax. Empty: every vulnerability of the package.
   */
  'version'?: (string);
  /**
   * The package to query. Required unless `commit` is set.
   */
  'package'?: (_platform_v1_Package__Output);
  /**
   * `next_page_token` of the previous page of this query; empty for the first page.
   */
  'page_token'?: (string);
  /**
   * What to match: at most one of these may be set.
   */
  'param'?: "commit"|"version";
}
