// Original file: proto/platform/v1/osv.proto


// Original file: proto/platform/v1/osv.proto

/**
 * The role of the credited party.
 */
export const _platform_v1_Credit_Type = {
  /**
   * Not set.
   */
  TYPE_UNSPECIFIED: 'TYPE_UNSPECIFIED',
  /**
   * Found the vulnerability.
   */
  FINDER: 'FINDER',
  /**
   * Reported it.
   */
  REPORTER: 'REPORTER',
  /**
   * Analysed it.
   */
  ANALYST: 'ANALYST',
  /**
   * Coordinated the disclosure.
   */
  COORDINATOR: 'COORDINATOR',
  /**
   * Developed the fix.
   */
  REMEDIATION_DEVELOPER: 'REMEDIATION_DEVELOPER',
  /**
   * Reviewed the fix.
   */
  REMEDIATION_REVIEWER: 'REMEDIATION_REVIEWER',
  /**
   * Verified the fix.
   */
  REMEDIATION_VERIFIER: 'REMEDIATION_VERIFIER',
  /**
   * A tool.
   */
  TOOL: 'TOOL',
  /**
   * Funded the work.
   */
  SPONSOR: 'SPONSOR',
  /**
   * Any other role.
   */
  OTHER: 'OTHER',
} as const;

/**
 * The role of the credited party.
 */
export type _platform_v1_Credit_Type =
  /**
   * Not set.
   */
  | 'TYPE_UNSPECIFIED'
  | 0
  /**
   * Found the vulnerability.
   */
  | 'FINDER'
  | 1
  /**
   * Reported it.
   */
  | 'REPORTER'
  | 2
  /**
   * Analysed it.
   */
  | 'ANALYST'
  | 3
  /**
   * Coordinated the disclosure.
   */
  | 'COORDINATOR'
  | 4
  /**
   * Developed the fix.
   */
  | 'REMEDIATION_DEVELOPER'
  | 5
  /**
   * Reviewed the fix.
   */
  | 'REMEDIATION_REVIEWER'
  | 6
  /**
   * Verified the fix.
   */
  | 'REMEDIATION_VERIFIER'
  | 7
  /**
   * A tool.
   */
  | 'TOOL'
  | 8
  /**
   * Funded the work.
   */
  | 'SPONSOR'
  | 9
  /**
   * Any other role.
   */
  | 'OTHER'
  | 10

/**
 * The role of the credited party.
 */
export type _platform_v1_Credit_Type__Output = typeof _platform_v1_Credit_Type[keyof typeof _platform_v1_Credit_Type]

/**
 * A credited person or organization.
 */
export interface Credit {
  /**
   * Name of the person or organization.
   */
  'name'?: (string);
  /**
   * Ways to reach them (URLs).
   */
  'contact'?: (string)[];
  /**
   * The role they had.
   */
  'type'?: (_platform_v1_Credit_Type);
}

/**
 * A credited person or organization.
 */
export interface Credit__Output {
  /**
   * Name of the person or organization.
   */
  'name'?: (string);
  /**
   * Ways to reach them (URLs).
   */
  'contact'?: (string)[];
  /**
   * The role they had.
   */
  'type'?: (_platform_v1_Credit_Type__Output);
}
