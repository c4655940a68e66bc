// Original file: proto/platform/v1/documents.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CreateDocumentRequest as _platform_v1_CreateDocumentRequest, CreateDocumentRequest__Output as _platform_v1_CreateDocumentRequest__Output } from '../../platform/v1/CreateDocumentRequest.ts';
import type { CreateDocumentResponse as _platform_v1_CreateDocumentResponse, CreateDocumentResponse__Output as _platform_v1_CreateDocumentResponse__Output } from '../../platform/v1/CreateDocumentResponse.ts';
import type { DeleteDocumentRequest as _platform_v1_DeleteDocumentRequest, DeleteDocumentRequest__Output as _platform_v1_DeleteDocumentRequest__Output } from '../../platform/v1/DeleteDocumentRequest.ts';
import type { DeleteDocumentResponse as _platform_v1_DeleteDocumentResponse, DeleteDocumentResponse__Output as _platform_v1_DeleteDocumentResponse__Output } from '../../platform/v1/DeleteDocumentResponse.ts';
import type { ListDocumentsRequest as _platform_v1_ListDocumentsRequest, ListDocumentsRequest__Output as _platform_v1_ListDocumentsRequest__Output } from '../../platform/v1/ListDocumentsRequest.ts';
import type { ListDocumentsResponse as _platform_v1_ListDocumentsResponse, ListDocumentsResponse__Output as _platform_v1_ListDocumentsResponse__Output } from '../../platform/v1/ListDocumentsResponse.ts';

/**
 * Client-side encrypted documents of the caller's organization.
 */
export interface PlatformDocumentsClient extends grpc.Client {
  /**
   * Stores a new encrypted document and answers with its id and clear-text fields, without the ciphertext and the
   * encrypted metadata (the client sent them), so that the answer stays small whatever the document's size. With a
   * `request_id` already used by this organization, answers with the document created by that earlier request
   * instead of creating a second one (ALREADY_EXISTS when the content differs). A ciphertext over the server's size
   * limit (PLATFORM_DOCUMENT_MAX_BYTES, default 8 MiB) is RESOURCE_EXHAUSTED (HTTP 413).
   */
  CreateDocument(argument: _platform_v1_CreateDocumentRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_CreateDocumentResponse__Output>): grpc.ClientUnaryCall;
  CreateDocument(argument: _platform_v1_CreateDocumentRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_platform_v1_CreateDocumentResponse__Output>): grpc.ClientUnaryCall;
  CreateDocument(argument: _platform_v1_CreateDocumentRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_CreateDocumentResponse__Output>): grpc.ClientUnaryCall;
  CreateDocument(argument: _platform_v1_CreateDocumentRequest, callback: grpc.requestCallback<_platform_v1_CreateDocumentResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Stores a new encrypted document and answers with its id and clear-text fields, without the ciphertext and the
   * encrypted metadata (the client sent them), so that the answer stays small whatever the document's size. With a
   * `request_id` already used by this organization, answers with the document created by that earlier request
   * instead of creating a second one (ALREADY_EXISTS when the content differs). A ciphertext over the server's size
   * limit (PLATFORM_DOCUMENT_MAX_BYTES, default 8 MiB) is RESOURCE_EXHAUSTED (HTTP 413).
   */
  createDocument(argument: _platform_v1_CreateDocumentRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_CreateDocumentResponse__Output>): grpc.ClientUnaryCall;
  createDocument(argument: _platform_v1_CreateDocumentRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_platform_v1_CreateDocumentResponse__Output>): grpc.ClientUnaryCall;
  createDocument(argument: _platform_v1_CreateDocumentRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_CreateDocumentResponse__Output>): grpc.ClientUnaryCall;
  createDocument(argument: _platform_v1_CreateDocumentRequest, callback: grpc.requestCallback<_platform_v1_CreateDocumentResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Deletes a document of the organization for good: its row, ciphertext and metadata are removed.
   */
  DeleteDocument(argument: _platform_v1_DeleteDocumentRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_DeleteDocumentResponse__Output>): grpc.ClientUnaryCall;
  DeleteDocument(argument: _platform_v1_DeleteDocumentRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_platform_v1_DeleteDocumentResponse__Output>): grpc.ClientUnaryCall;
  DeleteDocument(argument: _platform_v1_DeleteDocumentRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_DeleteDocumentResponse__Output>): grpc.ClientUnaryCall;
  DeleteDocument(argument: _platform_v1_DeleteDocumentRequest, callback: grpc.requestCallback<_platform_v1_DeleteDocumentResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Deletes a document of the organization for good: its row, ciphertext and metadata are removed.
   */
  deleteDocument(argument: _platform_v1_DeleteDocumentRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_DeleteDocumentResponse__Output>): grpc.ClientUnaryCall;
  deleteDocument(argument: _platform_v1_DeleteDocumentRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_platform_v1_DeleteDocumentResponse__Output>): grpc.ClientUnaryCall;
  deleteDocument(argument: _platform_v1_DeleteDocumentRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_DeleteDocumentResponse__Output>): grpc.ClientUnaryCall;
  deleteDocument(argument: _platform_v1_DeleteDocumentRequest, callback: grpc.requestCallback<_platform_v1_DeleteDocumentResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Lists the organization's documents, oldest first, with their ciphertext. A page holds at most `page_size`
   * documents and at most PLATFORM_DOCUMENT_PAGE_MAX_BYTES of document bytes (default 3 MiB, so that a page fits
   * the 4 MiB default receive limit of gRPC clients), but always at least one document; `next_page_token` is set
   * while more remain. Listing a single document larger than about 4 MiB needs a client with a raised receive
   * limit (for example `grpcurl -max-msg-sz 16777216`); creating one does not.
   */
  ListDocuments(argument: _platform_v1_ListDocumentsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_ListDocumentsResponse__Output>): grpc.ClientUnaryCall;
  ListDocuments(argument: _platform_v1_ListDocumentsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_platform_v1_ListDocumentsResponse__Output>): grpc.ClientUnaryCall;
  ListDocuments(argument: _platform_v1_ListDocumentsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_ListDocumentsResponse__Output>): grpc.ClientUnaryCall;
  ListDocuments(argument: _platform_v1_ListDocumentsRequest, callback: grpc.requestCallback<_platform_v1_ListDocumentsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Lists the organization's documents, oldest first, with their ciphertext. A page holds at most `page_size`
   * documents and at most PLATFORM_DOCUMENT_PAGE_MAX_BYTES of document bytes (default 3 MiB, so that a page fits
   * the 4 MiB default receive limit of gRPC clients), but always at least one document; `next_page_token` is set
   * while more remain. Listing a single document larger than about 4 MiB needs a client with a raised receive
   * limit (for example `grpcurl -max-msg-sz 16777216`); creating one does not.
   */
  listDocuments(argument: _platform_v1_ListDocumentsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_ListDocumentsResponse__Output>): grpc.ClientUnaryCall;
  listDocuments(argument: _platform_v1_ListDocumentsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_platform_v1_ListDocumentsResponse__Output>): grpc.ClientUnaryCall;
  listDocuments(argument: _platform_v1_ListDocumentsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_platform_v1_ListDocumentsResponse__Output>): grpc.ClientUnaryCall;
  listDocuments(argument: _platform_v1_ListDocumentsRequest, callback: grpc.requestCallback<_platform_v1_ListDocumentsResponse__Output>): grpc.ClientUnaryCall;
  
}

/**
 * Client-side encrypted documents of the caller's organization.
 */
export interface PlatformDocumentsHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Stores a new encrypted document and answers with its id and clear-text fields, without the ciphertext and the
   * encrypted metadata (the client sent them), so that the answer stays small whatever the document's size. With a
   * `request_id` already used by this organization, answers with the document created by that earlier request
   * instead of creating a second one (ALREADY_EXISTS when the content differs). A ciphertext over the server's size
   * limit (PLATFORM_DOCUMENT_MAX_BYTES, default 8 MiB) is RESOURCE_EXHAUSTED (HTTP 413).
   */
  CreateDocument: grpc.handleUnaryCall<_platform_v1_CreateDocumentRequest__Output, _platform_v1_CreateDocumentResponse>;
  
  /**
   * Deletes a document of the organization for good: its row, ciphertext and metadata are removed.
   */
  DeleteDocument: grpc.handleUnaryCall<_platform_v1_DeleteDocumentRequest__Output, _platform_v1_DeleteDocumentResponse>;
  
  /**
   * Lists the organization's documents, oldest first, with their ciphertext. A page holds at most `page_size`
   * documents and at most PLATFORM_DOCUMENT_PAGE_MAX_BYTES of document bytes (default 3 MiB, so that a page fits
   * the 4 MiB default receive limit of gRPC clients), but always at least one document; `next_page_token` is set
   * while more remain. Listing a single document larger than about 4 MiB needs a client with a raised receive
   * limit (for example `grpcurl -max-msg-sz 16777216`); creating one does not.
   */
  ListDocuments: grpc.handleUnaryCall<_platform_v1_ListDocumentsRequest__Output, _platform_v1_ListDocumentsResponse>;
  
}

export interface PlatformDocumentsDefinition extends grpc.ServiceDefinition {
  CreateDocument: MethodDefinition<_platform_v1_CreateDocumentRequest, _platform_v1_CreateDocumentResponse, _platform_v1_CreateDocumentRequest__Output, _platform_v1_CreateDocumentResponse__Output>
  DeleteDocument: MethodDefinition<_platform_v1_DeleteDocumentRequest, _platform_v1_DeleteDocumentResponse, _platform_v1_DeleteDocumentRequest__Output, _platform_v1_DeleteDocumentResponse__Output>
  ListDocuments: MethodDefinition<_platform_v1_ListDocumentsRequest, _platform_v1_ListDocumentsResponse, _platform_v1_ListDocumentsRequest__Output, _platform_v1_ListDocumentsResponse__Output>
}
