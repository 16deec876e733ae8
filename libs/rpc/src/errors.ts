import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { DomainError, isDomainError, type ErrorKind } from '@sluice/core';

/** Metadata key carrying the public error (code, message, details) as JSON. */
export const ERROR_METADATA_KEY = 'sluice-error-bin';

const KIND_TO_STATUS: Record<ErrorKind, status> = {
  INVALID_ARGUMENT: status.INVALID_ARGUMENT,
  NOT_FOUND: status.NOT_FOUND,
  ALREADY_EXISTS: status.ALREADY_EXISTS,
  FAILED_PRECONDITION: status.FAILED_PRECONDITION,
  UNAUTHENTICATED: status.UNAUTHENTICATED,
  PERMISSION_DENIED: status.PERMISSION_DENIED,
  ABORTED: status.ABORTED,
  RESOURCE_EXHAUSTED: status.RESOURCE_EXHAUSTED,
  UNIMPLEMENTED: status.UNIMPLEMENTED,
  UNAVAILABLE: status.UNAVAILABLE,
};

const STATUS_TO_KIND = new Map<number, ErrorKind>(
  Object.entries(KIND_TO_STATUS).map(([k, v]) => [v, k as ErrorKind]),
);

/**
 * Server side: an expected DomainError becomes its gRPC status with the public
 * error in metadata; anything else becomes INTERNAL with a generic message.
 */
export function toServiceError(err: unknown): Partial<ServiceError> & { code: status } {
  if (isDomainError(err)) {
    const md = new Metadata();
    md.set(
      ERROR_METADATA_KEY,
      Buffer.from(JSON.stringify({ code: err.code, message: err.message, details: err.details ?? {} })),
    );
    return { code: KIND_TO_STATUS[err.kind], details: err.message, metadata: md };
  }
  return { code: status.INTERNAL, details: 'Internal error' };
}

/** An error that came over gRPC and was not an expected domain error. */
export class RpcError extends Error {
  constructor(
    readonly grpcCode: status,
    message: string,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

/**
 * Client side: turns a gRPC error back into the DomainError the server raised,
 * so callers (and the gateway) see one error model. Transport failures
 * (deadline, unavailable, internal) become RpcError.
 */
export function fromServiceError(err: ServiceError): DomainError | RpcError {
  const raw = err.metadata?.get(ERROR_METADATA_KEY)?.[0];
  const kind = STATUS_TO_KIND.get(err.code);
  if (raw && kind) {
    try {
      const body = JSON.parse(Buffer.isBuffer(raw) ? raw.toString('utf8') : String(raw)) as {
        code: string;
        message: string;
        details?: Record<string, unknown>;
      };
      return new DomainError(kind, body.code, body.message, body.details);
    } catch {
      /* fall through */
    }
  }
  return new RpcError(err.code, err.details || err.message);
}
