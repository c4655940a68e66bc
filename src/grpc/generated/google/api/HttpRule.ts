// Original file: proto/google/api/http.proto


/**
 * How one RPC is reached over HTTP/JSON: exactly one verb with a path template, and which request field (or "*"
 * for the whole request) the HTTP body carries. Request fields not bound by the path or the body are read from the
 * query string.
 */
export interface HttpRule {
  /**
   * The RPC this rule applies to (only used when rules are listed outside the proto; empty in annotations).
   */
  'selector'?: (string);
  /**
   * GET with this path template.
   */
  'get'?: (string);
  /**
   * PUT with this path template.
   */
  'put'?: (string);
  /**
   * POST with this path template.
   */
  'post'?: (string);
  /**
   * DELETE with this path template.
   */
  'delete'?: (string);
  /**
   * PATCH with this path template.
   */
  'patch'?: (string);
  /**
   * The request field carried by the HTTP body, "*" for every field not bound by the path, or empty for no body.
   */
  'body'?: (string);
  /**
   * The response field sent as the HTTP body; empty for the whole response.
   */
  'response_body'?: (string);
  /**
   * The HTTP verb and path template, for example "/platform/v1/documents/{id}".
   */
  'pattern'?: "get"|"put"|"post"|"delete"|"patch";
}

/**
 * How one RPC is reached over HTTP/JSON: exactly one verb with a path template, and which request field (or "*"
 * for the whole request) the HTTP body carries. Request fields not bound by the path or the body are read from the
 * query string.
 */
export interface HttpRule__Output {
  /**
   * The RPC this rule applies to (only used when rules are listed outside the proto; empty in annotations).
   */
  'selector'?: (string);
  /**
   * GET with this path template.
   */
  'get'?: (string);
  /**
   * PUT with this path template.
   */
  'put'?: (string);
  /**
   * POST with this path template.
   */
  'post'?: (string);
  /**
   * DELETE with this path template.
   */
  'delete'?: (string);
  /**
   * PATCH with this path template.
   */
  'patch'?: (string);
  /**
   * The request field carried by the HTTP body, "*" for every field not bound by the path, or empty for no body.
   */
  'body'?: (string);
  /**
   * The response field sent as the HTTP body; empty for the whole response.
   */
  'response_body'?: (string);
  /**
   * The HTTP verb and path template, for example "/platform/v1/documents/{id}".
   */
  'pattern'?: "get"|"put"|"post"|"delete"|"patch";
}
