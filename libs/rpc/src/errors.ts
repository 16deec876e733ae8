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
 * Transport failures of a downstream call that the caller may retry: the service
 * this one called did not answer in time, or could not be reached. They keep
 * their status (the gateway answers 503), not INTERNAL: every operation behind a
 * call is idempotent, so a retry is safe.
 */
const DOWNSTREAM_PASS_THROUGH: ReadonlyMap<number, string> = new Map([
  [status.DEADLINE_EXCEEDED, 'A service this call depends on did not answer in time'],
  [status.UNAVAILABLE, 'A service this call depends on is unavailable'],
]);

/**
 * Server side: an expected DomainError becomes its gRPC status with the public
 * error in metadata; a downstream call's DEADLINE_EXCEEDED or UNAVAILABLE keeps
 * its status; anything else becomes INTERNAL with a generic message.
 */
/** True for a downstream call that timed out or found its service unreachable (retryable, not a bug). */
export function isDownstreamTransportFailure(err: unknown): boolean {
  return err instanceof RpcError && DOWNSTREAM_PASS_THROUGH.has(err.grpcCode);
}

export function toServiceError(err: unknown): Partial<ServiceError> & { code: status } {
  if (err instanceof RpcError) {
    const passed = DOWNSTREAM_PASS_THROUGH.get(err.grpcCode);
    if (passed) return { code: err.grpcCode, details: passed };
  }
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
