import { defineErrors } from '@sluice/core';

/**
 * Every public error code the accounts service raises (besides INVALID_INPUT from
 * `invalidInput`), with the gRPC status kind it maps to.
 */
export const fail = defineErrors({
  INTERNAL_ACCOUNT_NOT_FOUND: 'NOT_FOUND',
  SANDBOX_ONLY: 'PERMISSION_DENIED',
  JOURNAL_ENTRY_CONFLICT: 'ALREADY_EXISTS',
  INSUFFICIENT_FUNDS: 'FAILED_PRECONDITION',
  BALANCE_LIMIT_EXCEEDED: 'FAILED_PRECONDITION',
  CUSTOMER_NOT_FOUND: 'NOT_FOUND',
  EXTERNAL_ACCOUNT_NOT_FOUND: 'NOT_FOUND',
  EXTERNAL_ACCOUNT_ALREADY_EXISTS: 'ALREADY_EXISTS',
  EXTERNAL_ACCOUNT_INVALID: 'INVALID_ARGUMENT',
  HOLD_NOT_FOUND: 'NOT_FOUND',
  NOT_EMBEDDED_WALLET: 'INVALID_ARGUMENT',
});

export function accountNotFound(accountId: string) {
  return fail('INTERNAL_ACCOUNT_NOT_FOUND', `Internal account ${accountId} not found`, { accountId });
}

export function externalAccountNotFound(accountId: string) {
  return fail('EXTERNAL_ACCOUNT_NOT_FOUND', `External account ${accountId} not found`, { accountId });
}

export function customerNotFound(customerId: string) {
  return fail('CUSTOMER_NOT_FOUND', `Customer ${customerId} not found`, { customerId });
}

export function holdNotFound(holdId: string) {
  return fail('HOLD_NOT_FOUND', `Hold ${holdId} not found`, { holdId });
}

/** A hold step under one resolution id when the hold was already resolved under another. */
export function holdAlreadyResolved(hold: { id: string; status: string; resolutionId?: string }) {
  return fail(
    'JOURNAL_ENTRY_CONFLICT',
    `Hold ${hold.id} was already ${hold.status.toLowerCase()} by ${hold.resolutionId}`,
    { holdId: hold.id, status: hold.status, resolutionId: hold.resolutionId },
  );
}
