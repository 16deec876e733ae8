/**
 * Expected failures of the domain. A DomainError carries a stable public `code`
 * (e.g. `CUSTOMER_NOT_FOUND`), a `kind` that transports map to their status
 * (gRPC status name; the gateway maps gRPC status to HTTP in one table) and
 * optional `details` that are safe to show to the caller.
 *
 * Anything that is not a DomainError is a bug or an outage and is reported as
 * INTERNAL without its message.
 */
export type ErrorKind =
  | 'INVALID_ARGUMENT'
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'FAILED_PRECONDITION'
  | 'UNAUTHENTICATED'
  | 'PERMISSION_DENIED'
  | 'ABORTED'
  | 'RESOURCE_EXHAUSTED'
  | 'UNIMPLEMENTED'
  | 'UNAVAILABLE';

export interface FieldError {
  field: string;
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export function isDomainError(e: unknown): e is DomainError {
  return (
    e instanceof DomainError ||
    (typeof e === 'object' && e !== null && (e as { name?: string }).name === 'DomainError')
  );
}

/** Error kinds worth retrying: the other service (or the database) may answer next time. */
const TRANSIENT_KINDS: ReadonlySet<string> = new Set([
  'UNAVAILABLE',
  'DEADLINE_EXCEEDED',
  'INTERNAL',
  'UNKNOWN',
  'ABORTED',
  'RESOURCE_EXHAUSTED',
]);

/**
 * A refusal the same call will meet again (a DomainError of a non-transient kind:
 * the other side said no), as opposed to an outage or a conflict worth retrying.
 * Jobs use it to fail a payment instead of retrying it forever.
 */
export function isPermanentRefusal(e: unknown): e is DomainError {
  return isDomainError(e) && !TRANSIENT_KINDS.has(e.kind);
}

/** 400 INVALID_INPUT with field-level errors. */
export function invalidInput(errors: FieldError[], message?: string): DomainError {
  const msg =
    message ?? (errors.length === 1 ? `${errors[0]!.field}: ${errors[0]!.message}` : 'Invalid input');
  return new DomainError('INVALID_ARGUMENT', 'INVALID_INPUT', msg, { errors });
}

/**
 * A service's error-code table: every public code the service raises, with the
 * kind (gRPC status) it maps to. One table per service, so codes and statuses
 * live in one place.
 */
export function defineErrors<const T extends Record<string, ErrorKind>>(table: T) {
  return function fail(
    code: keyof T & string,
    message: string,
    details?: Record<string, unknown>,
  ): DomainError {
    return new DomainError(table[code]!, code, message, details);
  };
}
