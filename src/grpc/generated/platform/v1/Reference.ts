// Original file: proto/platform/v1/osv.proto


// Original file: proto/platform/v1/osv.proto

/**
 * What the link points to.
 */
export const _platform_v1_Reference_Type = {
  /**
   * Not set.
   */
  TYPE_UNSPECIFIED: 'TYPE_UNSPECIFIED',
  /**
   * A published security advisory.
   */
  ADVISORY: 'ADVISORY',
  /**
   * An article or blog post.
   */
  ARTICLE: 'ARTICLE',
  /**
   * A tool, script or rule that detects the vulnerability.
   */
  DETECTION: 'DETECTION',
  /**
   * A discussion (mailing list, issue thread).
   */
  DISCUSSION: 'DISCUSSION',
  /**
   * A report (for example an issue).
   */
  REPORT: 'REPORT',
  /**
   * A source change that fixes it.
   */
  FIX: 'FIX',
  /**
   * A source change that introduced it.
   */
  INTRODUCED: 'INTRODUCED',
  /**
   * A Git repository.
   */
  GIT: 'GIT',
  /**
   * A home page of the affected package.
   */
  PACKAGE: 'PACKAGE',
  /**
   * Evidence of the vulnerability (for example a proof of concept).
   */
  EVIDENCE: 'EVIDENCE',
  /**
   * Any other web page.
   */
  WEB: 'WEB',
} as const;

/**
 * What the link points to.
 */
export type _platform_v1_Reference_Type =
  /**
   * Not set.
   */
  | 'TYPE_UNSPECIFIED'
  | 0
  /**
   * A published security advisory.
   */
  | 'ADVISORY'
  | 1
  /**
   * An article or blog post.
   */
  | 'ARTICLE'
  | 2
  /**
   * A tool, script or rule that detects the vulnerability.
   */
  | 'DETECTION'
  | 3
  /**
   * A discussion (mailing list, issue thread).
   */
  | 'DISCUSSION'
  | 4
  /**
   * A report (for example an issue).
   */
  | 'REPORT'
  | 5
  /**
   * A source change that fixes it.
   */
  | 'FIX'
  | 6
  /**
   * A source change that introduced it.
   */
  | 'INTRODUCED'
  | 7
  /**
   * A Git repository.
   */
  | 'GIT'
  | 8
  /**
   * A home page of the affected package.
   */
  | 'PACKAGE'
  | 9
  /**
   * Evidence of the vulnerability (for example a proof of concept).
   */
  | 'EVIDENCE'
  | 10
  /**
   * Any other web page.
   */
  | 'WEB'
  | 11

/**
 * What the link points to.
 */
export type _platform_v1_Reference_Type__Output = typeof _platform_v1_Reference_Type[keyof typeof _platform_v1_Reference_Type]

/**
 * A reference link.
 */
export interface Reference {
  /**
   * What the link points to.
   */
  'type'?: (_platform_v1_Reference_Type);
  /**
   * The URL.
   */
  'url'?: (string);
}

/**
 * A reference link.
 */
export interface Reference__Output {
  /**
   * What the link points to.
   */
  'type'?: (_platform_v1_Reference_Type__Output);
  /**
   * The URL.
   */
  'url'?: (string);
}
