// Original file: proto/platform/v1/osv.proto

import type { Query as _platform_v1_Query, Query__Output as _platform_v1_Query__Output } from '../../platform/v1/Query.ts';

/**
 * Several queries answered together.
 */
export interface BatchQuery {
  /**
   * The queries (at most 1000).
   */
  'queries'?: (_platform_v1_Query)[];
}

/**
 * Several queries answered together.
 */
export interface BatchQuery__Output {
  /**
   * The queries (at most 1000).
   */
  'queries'?: (_platform_v1_Query__Output)[];
}
