// Original file: proto/platform/v1/documents.proto


/**
 * Input of DeleteDocument.
 */
export interface DeleteDocumentRequest {
  /**
   * The document to delete. Required.
   */
  'id'?: (string);
}

/**
 * Input of DeleteDocument.
 */
export interface DeleteDocumentRequest__Output {
  /**
   * The document to delete. Required.
   */
  'id'?: (string);
}
