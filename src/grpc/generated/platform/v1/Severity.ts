// Original file: proto/platform/v1/osv.proto


// Original file: proto/platform/v1/osv.proto

/**
 * The scoring system.
 */
export const _platform_v1_Severity_Type = {
  /**
   * Not set.
   */
  TYPE_UNSPECIFIED: 'TYPE_UNSPECIFIED',
  /**
   * A CVSS v2 vector.
   */
  CVSS_V2: 'CVSS_V2',
  /**
   * A CVSS v3 vector.
   */
  CVSS_V3: 'CVSS_V3',
  /**
   * A CVSS v4 vector.
   */
  CVSS_V4: 'CVSS_V4',
  /**
   * Ubuntu's priority (negligible, low, medium, high, critical).
   */
  Ubuntu: 'Ubuntu',
} as const;

/**
 * The scoring system.
 */
export type _platform_v1_Severity_Type =
  /**
   * Not set.
   */
  | 'TYPE_UNSPECIFIED'
  | 0
  /**
   * A CVSS v2 vector.
   */
  | 'CVSS_V2'
  | 1
  /**
   * A CVSS v3 vector.
   */
  | 'CVSS_V3'
  | 2
  /**
   * A CVSS v4 vector.
   */
  | 'CVSS_V4'
  | 3
  /**
   * Ubuntu's priority (negligible, low, medium, high, critical).
   */
  | 'Ubuntu'
  | 4

/**
 * The scoring system.
 */
export type _platform_v1_Severity_Type__Output = typeof _platform_v1_Severity_Type[keyof typeof _platform_v1_Severity_Type]

/**
 * A severity score.
 */
export interface Severity {
  /**
   * The scoring system of `score`.
   */
  'type'?: (_platform_v1_Severity_Type);
  /**
   * The score (for CVSS, the vector string).
   */
  'score'?: (string);
}

/**
 * A severity score.
 */
export interface Severity__Output {
  /**
   * The scoring system of `score`.
   */
  'type'?: (_platform_v1_Severity_Type__Output);
  /**
   * The score (for CVSS, the vector string).
   */
  'score'?: (string);
}
