// Original file: proto/platform/v1/documents.proto

import type { Document as _platform_v1_Document, Document__Output as _platform_v1_Document__Output } from '../../platform/v1/Document.ts';

/**
 * Output of ListDocuments.
 */
export interface ListDocumentsResponse {
  /**
   * The documents of this page, oldest first.
   */
  'documents'?: (_platform_v1_Document)[];
  /**
   * Token for the next page; absent on the last page.
   */
  'next_page_token'?: (string);
}

/**
 * Output of ListDocuments.
 */
export interface ListDocumentsResponse__Output {
  /**
   * The documents of this page, oldest first.
   */
  'documents'?: (_platform_v1_Document__Output)[];
  /**
   * Token for the next page; absent on the last page.
   */
  'next_page_token'?: (string);
}
