// Original file: proto/platform/v1/documents.proto


/**
 * Input of ListDocuments.
 */
export interface ListDocumentsRequest {
  /**
   * Most documents to return (default 50, values above 1000 are treated as 1000; negative is INVALID_ARGUMENT).
   */
  'page_size'?: (number);
  /**
   * `next_page_token` of the previous page; empty for the first page. Tokens are opaque and tamper-evident:
   * a modified token, or one from another organization, is INVALID_ARGUMENT.
   */
  'page_token'?: (string);
}

/**
 * Input of ListDocuments.
 */
export interface ListDocumentsRequest__Output {
  /**
   * Most documents to return (default 50, values above 1000 are treated as 1000; negative is INVALID_ARGUMENT).
   */
  'page_size'?: (number);
  /**
   * `next_page_token` of the previous page; empty for the first page. Tokens are opaque and tamper-evident:
   * a modified token, or one from another organization, is INVALID_ARGUMENT.
   */
  'page_token'?: (string);
}
