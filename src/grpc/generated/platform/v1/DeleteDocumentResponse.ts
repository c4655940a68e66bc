// Original file: proto/platform/v1/documents.proto


/**
 * Output of DeleteDocument (empty; `{}` in JSON).
 */
export interface DeleteDocumentResponse {
}

/**
 * Output of DeleteDocument (empty; `{}` in JSON).
 */
export interface DeleteDocumentResponse__Output {
}
