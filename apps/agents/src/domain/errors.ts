import { DomainError, FieldErrors, defineErrors, invalidInput, isRequestKey, type ErrorKind } from '@sluice/core';

/**
 * Every public error code the agents service raises (kind = gRPC status). The policy refusals
 * are 403s with a code naming the rule (and MISSING_PERMISSION_<PERMISSION> the permission).
 */
export const fail = defineErrors({
  AGENT_NOT_FOUND: 'NOT_FOUND',
  AGENT_ACTION_NOT_FOUND: 'NOT_FOUND',
  QUOTE_NOT_FOUND: 'NOT_FOUND',
  INTERNAL_ACCOUNT_NOT_FOUND: 'NOT_FOUND',
  EXTERNAL_ACCOUNT_NOT_FOUND: 'NOT_FOUND',
  QUOTE_EXPIRED: 'INVALID_ARGUMENT',
  QUOTE_NOT_EXECUTABLE: 'FAILED_PRECONDITION',
  /** payments has no rate between the action's currency and a policy currency. */
  CURRENCY_NOT_CONVERTIBLE: 'FAILED_PRECONDITION',
  DEVICE_CODE_NOT_FOUND: 'NOT_FOUND',
  DEVICE_CODE_EXPIRED: 'FAILED_PRECONDITION',
  DEVICE_CODE_ALREADY_REDEEMED: 'FAILED_PRECONDITION',
  TOO_MANY_ATTEMPTS: 'RESOURCE_EXHAUSTED',
  AGENT_TOKEN_INVALID: 'UNAUTHENTICATED',
  /** Approve/reject of an action that is no longer PENDING_APPROVAL: 409. */
  ACTION_NOT_PENDING: 'ABORTED',
  /** The policy changed between the conversion of an amount and its reservation: retry. */
  POLICY_CHANGED: 'ABORTED',
  AGENT_PAUSED: 'PERMISSION_DENIED',
  MISSING_PERMISSION_VIEW_TRANSACTIONS: 'PERMISSION_DENIED',
  MISSING_PERMISSION_CREATE_TRANSFERS: 'PERMISSION_DENIED',
  MISSING_PERMISSION_CREATE_QUOTES: 'PERMISSION_DENIED',
  MISSING_PERMISSION_EXECUTE_QUOTES: 'PERMISSION_DENIED',
  MISSING_PERMISSION_MANAGE_EXTERNAL_ACCOUNTS: 'PERMISSION_DENIED',
  ACCOUNT_NOT_ALLOWED: 'PERMISSION_DENIED',
  PER_TRANSACTION_LIMIT_EXCEEDED: 'PERMISSION_DENIED',
  DAILY_LIMIT_EXCEEDED: 'PERMISSION_DENIED',
  MONTHLY_LIMIT_EXCEEDED: 'PERMISSION_DENIED',
  DAILY_TRANSACTION_LIMIT_EXCEEDED: 'PERMISSION_DENIED',
});

export type AgentErrorCode = Parameters<typeof fail>[0];

/** The public error an AUTO submission was answered with, kept on its action (a retry answers it again). */
export interface Refusal {
  kind: ErrorKind;
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export const refusalOf = (e: DomainError): Refusal => ({ kind: e.kind, code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) });

/** The error of a stored refusal: the same status and body as the first answer. */
export const refusalError = (r: Refusal): DomainError => new DomainError(r.kind, r.code, r.message, r.details);

/** A request key (the Idempotency-Key) when given: 1 to 255 visible ASCII characters, as the gateway accepts it. */
export function checkRequestKey(errors: FieldErrors, requestKey: string | undefined): void {
  if (requestKey !== undefined && !isRequestKey(requestKey)) errors.add('Idempotency-Key', 'must be 1 to 255 visible ASCII characters');
}

/** As checkRequestKey for a request with no other field to check: INVALID_INPUT on a bad key. */
export function requireRequestKey(requestKey: string | undefined): void {
  const errors = new FieldErrors();
  checkRequestKey(errors, requestKey);
  errors.throwIfAny();
}

/** A request key used earlier for another request of the same caller (`whose`: of this agent, of this platform). */
export const keyReused = (whose: string): DomainError =>
  invalidInput([{ field: 'Idempotency-Key', message: `was used for another request of this ${whose}` }]);
