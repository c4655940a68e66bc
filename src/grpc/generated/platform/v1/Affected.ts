// Original file: proto/platform/v1/osv.proto

import type { Package as _platform_v1_Package, Package__Output as _platform_v1_Package__Output } from '../../platform/v1/Package.ts';
import type { Severity as _platform_v1_Severity, Severity__Output as _platform_v1_Severity__Output } from '../../platform/v1/Severity.ts';
import type { Range as _platform_v1_Range, Range__Output as _platform_v1_Range__Output } from '../../platform/v1/Range.ts';
import type { Struct as _google_protobuf_Struct, Struct__Output as _google_protobuf_Struct__Output } from '../../google/protobuf/Struct.ts';

/**
 * One affected package (or repository) with its ranges and versions.
 */
export interface Affected {
  /**
   * The affected package; absent for a bare GIT range.
   */
  'package'?: (_platform_v1_Package | null);
  /**
   * Severity of the vulnerability for this package.
   */
  'severity'?: (_platform_v1_Severity)[];
  /**
   * Version or commit ranges.
   */
  'ranges'?: (_platform_v1_Range)[];
  /**
   * An explicit list of affected versions.
   */
  'versions'?: (string)[];
  /**
   * Any further data defined by the package's ecosystem.
   */
  'ecosystem_specific'?: (_google_protobuf_Struct | null);
  /**
   * Any further data of the database about this package.
   */
  'database_specific'?: (_google_protobuf_Struct | null);
}

/**
 * One affected package (or repository) with its ranges and versions.
 */
export interface Affected__Output {
  /**
   * The affected package; absent for a bare GIT range.
   */
  'package'?: (_platform_v1_Package__Output);
  /**
   * Severity of the vulnerability for this package.
   */
  'severity'?: (_platform_v1_Severity__Output)[];
  /**
   * Version or commit ranges.
   */
  'ranges'?: (_platform_v1_Range__Output)[];
  /**
   * An explicit list of affected versions.
   */
  'versions'?: (string)[];
  /**
   * Any further data defined by the package's ecosystem.
   */
  'ecosystem_specific'?: (_google_protobuf_Struct__Output);
  /**
   * Any further data of the database about this package.
   */
  'database_specific'?: (_google_protobuf_Struct__Output);
}
