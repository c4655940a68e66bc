// Original file: proto/platform/v1/osv.proto

import type { Event as _platform_v1_Event, Event__Output as _platform_v1_Event__Output } from '../../platform/v1/Event.ts';
import type { Struct as _google_protobuf_Struct, Struct__Output as _google_protobuf_Struct__Output } from '../../google/protobuf/Struct.ts';

// Original file: proto/platform/v1/osv.proto

/**
 * How the events' versions are ordered.
 */
export const _platform_v1_Range_Type = {
  /**
   * Not set.
   */
  TYPE_UNSPECIFIED: 'TYPE_UNSPECIFIED',
  /**
   * Commit hashes of the Git repository `repo`.
   */
  GIT: 'GIT',
  /**
   * Semantic Versioning 2.0 versions.
   */
  SEMVER: 'SEMVER',
  /**
   * Versions ordered by the ecosystem's own rules.
   */
  ECOSYSTEM: 'ECOSYSTEM',
} as const;

/**
 * How the events' versions are ordered.
 */
export type _platform_v1_Range_Type =
  /**
   * Not set.
   */
  | 'TYPE_UNSPECIFIED'
  | 0
  /**
   * Commit hashes of the Git repository `repo`.
   */
  | 'GIT'
  | 1
  /**
   * Semantic Versioning 2.0 versions.
   */
  | 'SEMVER'
  | 2
  /**
   * Versions ordered by the ecosystem's own rules.
   */
  | 'ECOSYSTEM'
  | 3

/**
 * How the events' versions are ordered.
 */
export type _platform_v1_Range_Type__Output = typeof _platform_v1_Range_Type[keyof typeof _platform_v1_Range_Type]

/**
 * A range of affected versions or commits.
 */
export interface Range {
  /**
   * How the events' versions are ordered.
   */
  'type'?: (_platform_v1_Range_Type);
  /**
   * The repository URL (GIT ranges).
   */
  'repo'?: (string);
  /**
   * The events that open and close the range, in order.
   */
  'events'?: (_platform_v1_Event)[];
  /**
   * Any further data of the database about this range.
   */
  'database_specific'?: (_google_protobuf_Struct | null);
}

/**
 * A range of affected versions or commits.
 */
export interface Range__Output {
  /**
   * How the events' versions are ordered.
   */
  'type'?: (_platform_v1_Range_Type__Output);
  /**
   * The repository URL (GIT ranges).
   */
  'repo'?: (string);
  /**
   * The events that open and close the range, in order.
   */
  'events'?: (_platform_v1_Event__Output)[];
  /**
   * Any further data of the database about this range.
   */
  'database_specific'?: (_google_protobuf_Struct__Output);
}
