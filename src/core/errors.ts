/**
 * One application error type with a stable string code, mapped to HTTP statuses and gRPC codes by tables
 * (STYLE.md 6). Handlers throw `AppError`; transports translate it once, at the edge.
 */
/**
 * gRPC status numbers by name, so transports need not import a gRPC library to speak them (loading grpc-js costs
 * about 100 ms, which the MCP listener and the CLI's REST paths would pay for nothing); errors.test.ts checks them
 * against grpc-js's `status`.
 */
export const GRPC_STATUS = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

export const ERROR_CODES = {
  parameter_missing: { http: 400, grpc: GRPC_STATUS.INVALID_ARGUMENT },
  parameter_invalid: { http: 400, grpc: GRPC_STATUS.INVALID_ARGUMENT },
  unsupported_media_type: { http: 415, grpc: GRPC_STATUS.INVALID_ARGUMENT },
  unauthorized: { http: 401, grpc: GRPC_STATUS.UNAUTHENTICATED },
  administrator_required: { http: 403, grpc: GRPC_STATUS.PERMISSION_DENIED },
  permission_denied: { http: 403, grpc: GRPC_STATUS.PERMISSION_DENIED },
  not_found: { http: 404, grpc: GRPC_STATUS.NOT_FOUND },
  method_not_allowed: { http: 405, grpc: GRPC_STATUS.UNIMPLEMENTED },
  stale_object: { http: 409, grpc: GRPC_STATUS.ABORTED },
  material_kind_conflict: { http: 409, grpc: GRPC_STATUS.FAILED_PRECONDITION },
  conflict: { http: 409, grpc: GRPC_STATUS.ALREADY_EXISTS },
  payload_too_large: { http: 413, grpc: GRPC_STATUS.RESOURCE_EXHAUSTED },
  validation_failed: { http: 422, grpc: GRPC_STATUS.FAILED_PRECONDITION },
  context_length_exceeded: { http: 400, grpc: GRPC_STATUS.INVALID_ARGUMENT },
  model_unavailable: { http: 409, grpc: GRPC_STATUS.FAILED_PRECONDITION },
  provider_error: { http: 502, grpc: GRPC_STATUS.UNAVAILABLE },
  rate_limited: { http: 429, grpc: GRPC_STATUS.RESOURCE_EXHAUSTED },
  deadline_exceeded: { http: 504, grpc: GRPC_STATUS.DEADLINE_EXCEEDED },
  model_plane_unavailable: { http: 503, grpc: GRPC_STATUS.UNAVAILABLE },
  unavailable: { http: 503, grpc: GRPC_STATUS.UNAVAILABLE },
  internal: { http: 500, grpc: GRPC_STATUS.INTERNAL },
} as const satisfies Record<string, { http: number; grpc: (typeof GRPC_STATUS)[keyof typeof GRPC_STATUS] }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface AppErrorOptions {
  /** Extra response headers (for example `Retry-After`). */
  headers?: Record<string, string>;
  /** Internal cause; logged, never sent to a client. */
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.headers = options.headers ?? {};
  }

  get httpStatus(): number {
    return ERROR_CODES[this.code].http;
  }

  get grpcCode(): number {
    return ERROR_CODES[this.code].grpc;
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/** The JSON error envelope of every REST route: `{"error":{"code","message"}}`. */
export function errorEnvelope(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

/** The generic text clients see for unexpected failures; the cause goes to the log only. */
export const INTERNAL_MESSAGE = 'internal server error';
