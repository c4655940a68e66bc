// Original file: proto/platform/v1/documents.proto


/**
 * Input of DeleteDocument.
 */
export interface DeleteDocumentRequest {
  /**
   * The document to delete (a UUID, as Document.id). Required; an id that is not a UUID is NOT_FOUND.
   */
  'id'?: (string);
}

/**
 * Input of DeleteDocument.
 */
export interface DeleteDocumentRequest__Output {
  /**
   * The document to delete (a UUID, as Document.id). Required; an id that is not a UUID is NOT_FOUND.
   */
  'id'?: (string);
}
