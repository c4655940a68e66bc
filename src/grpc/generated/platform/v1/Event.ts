// Original file: proto/platform/v1/osv.proto


/**
 * One range event: exactly one of its fields is set.
 */
export interface Event {
  /**
   * The version or commit that introduced the vulnerability ("0" for "since the beginning").
   */
  'introduced'?: (string);
  /**
   * The version or commit that fixed it.
   */
  'fixed'?: (string);
  /**
   * The last affected version or commit.
   */
  'last_affected'?: (string);
  /**
   * An upper limit: versions at or above it are outside the range.
   */
  'limit'?: (string);
}

/**
 * One range event: exactly one of its fields is set.
 */
export interface Event__Output {
  /**
   * The version or commit that introduced the vulnerability ("0" for "since the beginning").
   */
  'introduced'?: (string);
  /**
   * The version or commit that fixed it.
   */
  'fixed'?: (string);
  /**
   * The last affected version or commit.
   */
  'last_affected'?: (string);
  /**
   * An upper limit: versions at or above it are outside the range.
   */
  'limit'?: (string);
}
