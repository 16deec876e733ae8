import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { DomainError, isDependencyUnavailable, isDomainError, type ErrorKind } from '@sluice/core';

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
 * True for a transient failure of something this service depends on (retryable, not a bug): a
 * downstream call that timed out or found its service unreachable, or the database unreachable
 * (`isDependencyUnavailable`: restarting, connection refused or cut, no connection in time).
 */
export function isDownstreamTransportFailure(err: unknown): boolean {
  return (err instanceof RpcError && DOWNSTREAM_PASS_THROUGH.has(err.grpcCode)) || isDependencyUnavailable(err);
}

const DEPENDENCY_UNAVAILABLE = 'A dependency of this service is unavailable';

/** gRPC's retry pushback trailer: a negative value tells the client's retry policy not to retry. */
const NO_RETRY_METADATA_KEY = 'grpc-retry-pushback-ms';

/**
 * Server side: an expected DomainError becomes its gRPC status with the public
 * error in metadata; a downstream call's DEADLINE_EXCEEDED or UNAVAILABLE keeps
 * its status; an unreachable database becomes UNAVAILABLE; anything else becomes
 * INTERNAL with a generic message.
 */
export function toServiceError(err: unknown): Partial<ServiceError> & { code: status } {
  if (err instanceof RpcError) {
    const passed = DOWNSTREAM_PASS_THROUGH.get(err.grpcCode);
    if (passed) return { code: err.grpcCode, details: passed };
  }
  if (isDomainError(err)) {
    const body = boundedErrorBody(err.code, err.message, err.details ?? {});
    const md = new Metadata();
    md.set(ERROR_METADATA_KEY, Buffer.from(JSON.stringify(body)));
    // An expected refusal is the server's answer: the clients' retry policy, which repeats a call
    // that failed UNAVAILABLE in transport (rpcChannelOptions), must not repeat a domain error of
    // that kind (RAIL_UNAVAILABLE, an admission refusal). A negative pushback tells grpc-js not to.
    if (err.kind === 'UNAVAILABLE') md.set(NO_RETRY_METADATA_KEY, '-1');
    return { code: KIND_TO_STATUS[err.kind], details: body.message, metadata: md };
  }
  if (isDependencyUnavailable(err)) return { code: status.UNAVAILABLE, details: DEPENDENCY_UNAVAILABLE };
  return { code: status.INTERNAL, details: 'Internal error' };
}

/** Longest error message sent (the grpc-message trailer carries it too, percent-encoded). */
export const MAX_ERROR_MESSAGE_LENGTH = 500;
/** Longest string inside error details. */
export const MAX_ERROR_DETAIL_STRING_LENGTH = 200;
/** Most bytes of the error metadata JSON (kept far below HTTP/2 header limits, 64 KiB by default in Node). */
export const MAX_ERROR_METADATA_BYTES = 4096;
const MAX_DETAIL_ITEMS = 20;
const MAX_DETAIL_DEPTH = 4;

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** A copy of error details with every string, array and nesting bounded. */
function boundDetails(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return truncate(v, MAX_ERROR_DETAIL_STRING_LENGTH);
  if (v === null || typeof v !== 'object') return v;
  if (depth >= MAX_DETAIL_DEPTH) return Array.isArray(v) ? [] : {};
  if (Array.isArray(v)) return v.slice(0, MAX_DETAIL_ITEMS).map((x) => boundDetails(x, depth + 1));
  return Object.fromEntries(
    Object.entries(v)
      .slice(0, MAX_DETAIL_ITEMS)
      .map(([k, x]) => [truncate(k, MAX_ERROR_DETAIL_STRING_LENGTH), boundDetails(x, depth + 1)]),
  );
}

/**
 * The public error as it travels: message and details bounded, so an error
 * that echoes what a caller sent (a 50 kB currency code) can never make the
 * trailers too large for the HTTP/2 connection, which would leave this caller
 * waiting out its deadline and break the connection for every other caller.
 * When the bounded details still exceed MAX_ERROR_METADATA_BYTES, only the
 * field names of the problems are kept.
 */
export function boundedErrorBody(
  code: string,
  message: string,
  details: Record<string, unknown>,
): { code: string; message: string; details: Record<string, unknown> } {
  const bounded = {
    code: truncate(code, MAX_ERROR_DETAIL_STRING_LENGTH),
    message: truncate(message, MAX_ERROR_MESSAGE_LENGTH),
    details: boundDetails(details) as Record<string, unknown>,
  };
  if (Buffer.byteLength(JSON.stringify(bounded)) <= MAX_ERROR_METADATA_BYTES) return bounded;
  const fieldOf = (e: unknown) =>
    e !== null && typeof e === 'object' && typeof (e as { field?: unknown }).field === 'string'
      ? { field: (e as { field: string }).field, message: 'is invalid' }
      : undefined;
  const errors = Array.isArray(bounded.details.errors) ? bounded.details.errors.map(fieldOf).filter(Boolean) : [];
  const field = typeof bounded.details.field === 'string' ? { field: bounded.details.field } : {};
  return {
    code: bounded.code,
    message: truncate(message, MAX_ERROR_DETAIL_STRING_LENGTH),
    details: { ...field, ...(errors.length ? { errors } : {}) },
  };
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
