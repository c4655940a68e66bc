// Original file: proto/platform/v1/osv.proto


/**
 * Input of GetVuln.
 */
export interface GetVulnRequest {
  /**
   * The OSV id, case-sensitive (for example "GHSA-vp9c-fpxx-744v"; at most 100 bytes).
   */
  'id'?: (string);
}

/**
 * Input of GetVuln.
 */
export interface GetVulnRequest__Output {
  /**
   * The OSV id, case-sensitive (for example "GHSA-vp9c-fpxx-744v"; at most 100 bytes).
   */
  'id'?: (string);
}
