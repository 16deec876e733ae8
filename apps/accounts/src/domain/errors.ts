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
});

export function accountNotFound(accountId: string) {
  return fail('INTERNAL_ACCOUNT_NOT_FOUND', `Internal account ${accountId} not found`, { accountId });
}
