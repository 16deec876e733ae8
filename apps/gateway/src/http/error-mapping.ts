import { isDependencyUnavailable, isDomainError, type FieldError } from '@sluice/core';
import { RpcError } from '@sluice/rpc';

/** The public error body of every non-2xx response. */
export interface ErrorResponse {
  status: number;
  code: string;
  message: string;
  details?: Record<string, unknown>;
  /** The specific failed check of a 401 (specification: `reason`), copied from `details.reason`. */
  reason?: string;
}

/** gRPC status names (numeric value = index in this list, as in the gRPC spec). */
const GRPC_STATUS_NAMES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const;

/**
 * THE table from gRPC status to HTTP. Every error a backend raises reaches the
 * client through it. Anything not listed is a 500 INTERNAL_ERROR with a
 * generic message.
 *
 * FAILED_PRECONDITION is 400: the reference API reports "the resource is not in
 * a state that allows this" as 400 (WEBHOOK_ENDPOINT_NOT_SET, a second
 * EMAIL_OTP credential, revoking the last credential). Conflicts with another
 * write are ALREADY_EXISTS or ABORTED, both 409.
 */
export const GRPC_STATUS_TO_HTTP: Readonly<Record<string, number>> = Object.freeze({
  INVALID_ARGUMENT: 400,
  OUT_OF_RANGE: 400,
  FAILED_PRECONDITION: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  ABORTED: 409,
  RESOURCE_EXHAUSTED: 429,
  UNIMPLEMENTED: 501,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 503,
});

/**
 * Public code and message for a status when the backend gave none (a transport
 * failure, or a status raised without a public body). Never the backend's text.
 */
const GENERIC: Readonly<Record<number, { code: string; message: string }>> = Object.freeze({
  400: { code: 'BAD_REQUEST', message: 'The request is invalid' },
  401: { code: 'UNAUTHORIZED', message: 'Invalid or missing API credentials' },
  403: { code: 'FORBIDDEN', message: 'This operation is not allowed' },
  404: { code: 'NOT_FOUND', message: 'Resource not found' },
  408: { code: 'REQUEST_TIMEOUT', message: 'The request was not received in time' },
  409: { code: 'CONFLICT', message: 'The request conflicts with the current state of the resource' },
  413: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large' },
  414: { code: 'URI_TOO_LONG', message: 'The request URL is too long' },
  415: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Request bodies must be JSON (Content-Type: application/json)' },
  429: { code: 'RATE_LIMITED', message: 'Too many requests; retry later' },
  431: { code: 'REQUEST_HEADERS_TOO_LARGE', message: 'The request headers are too large' },
  500: { code: 'INTERNAL_ERROR', message: 'An internal error occurred' },
  501: { code: 'NOT_IMPLEMENTED', message: 'This operation is not implemented yet' },
  503: { code: 'SERVICE_UNAVAILABLE', message: 'The service is temporarily unavailable; retry later' },
});

export const INTERNAL_ERROR: ErrorResponse = { status: 500, ...GENERIC[500]! };

/** HTTP status for a gRPC status given by name or number; 500 when unmapped. */
export function httpStatusForGrpc(status: string | number): number {
  const name = typeof status === 'number' ? GRPC_STATUS_NAMES[status] : status;
  return (name && GRPC_STATUS_TO_HTTP[name]) || 500;
}

export function genericError(status: number): ErrorResponse {
  const g = GENERIC[status] ?? GENERIC[500]!;
  return { status: GENERIC[status] ? status : 500, code: g.code, message: g.message };
}

/** 400 INVALID_INPUT with field errors. */
export function invalidInputResponse(errors: FieldError[], message?: string): ErrorResponse {
  const msg =
    message ?? (errors.length === 1 ? `${errors[0]!.field}: ${errors[0]!.message}` : 'Invalid input');
  return { status: 400, code: 'INVALID_INPUT', message: msg, details: { errors } };
}

/**
 * Maps a DomainError (local or returned over gRPC) or an RpcError to the public
 * error body. Returns undefined for anything else (an unexpected failure).
 */
export function mapServiceError(err: unknown): ErrorResponse | undefined {
  if (isDomainError(err)) {
    const status = httpStatusForGrpc(err.kind);
    if (status === 500) return undefined;
    const body: ErrorResponse = { status, code: err.code, message: err.message };
    if (err.details && Object.keys(err.details).length > 0) body.details = err.details;
    if (typeof err.details?.reason === 'string') body.reason = err.details.reason;
    return body;
  }
  if (err instanceof RpcError || (err as { name?: string })?.name === 'RpcError') {
    // A transport failure or a status raised without a public body: status only.
    return genericError(httpStatusForGrpc((err as RpcError).grpcCode));
  }
  // The gateway's own database unreachable (restarting, connection refused or cut): 503, retryable.
  if (isDependencyUnavailable(err)) return genericError(503);
  return undefined;
}

/**
 * An error the gateway itself answers with a given HTTP status (statuses with
 * no gRPC counterpart, such as 413, 415 or 422).
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'HttpError';
  }

  toResponse(): ErrorResponse {
    return {
      status: this.status,
      code: this.code,
      message: this.message,
      ...(this.details ? { details: this.details } : {}),
    };
  }
}
