import { FieldErrors, isId } from '@sluice/core';
import { checkId, checkText } from './field-rules.js';
import { TRANSACTION_STATUSES, type TransactionStatus, type TransactionType } from './state-machines.js';

/** Filters of GET /transactions (all optional, combined with AND), valid. */
export interface TransactionQuery {
  platformId: string;
  /** A customer id; `null` selects the platform's own transactions. */
  customerId?: string | null;
  platformCustomerId?: string;
  accountIdentifier?: string;
  senderAccountIdentifier?: string;
  receiverAccountIdentifier?: string;
  status?: TransactionStatus;
  type?: TransactionType;
  reference?: string;
  startDate?: Date;
  endDate?: Date;
  sortOrder: 'asc' | 'desc';
  limit?: number;
  cursor?: string;
}

/** GET /transactions as it arrives: status and type are any text. */
export type TransactionQueryInput = Omit<TransactionQuery, 'customerId' | 'status' | 'type'> & {
  /** A customer id, or the platform's own id for its own transactions. */
  customerId?: string;
  status?: string;
  type?: string;
};

/** A valid GET /transactions query, or INVALID_INPUT naming every bad filter. */
export function parseTransactionQuery(input: TransactionQueryInput): TransactionQuery {
  const errors = new FieldErrors();
  checkId(errors, 'platformId', input.platformId, 'Platform');
  const { customerId, status, type, ...rest } = input;
  if (customerId !== undefined && customerId !== input.platformId && !isId(customerId, 'Customer')) {
    errors.add('customerId', 'must be a Customer id or the platform id');
  }
  if (status !== undefined && !isTransactionStatus(status)) {
    errors.add('status', `must be one of ${TRANSACTION_STATUSES.join(', ')}`);
  }
  if (type !== undefined && type !== 'INCOMING' && type !== 'OUTGOING') errors.add('type', 'must be INCOMING or OUTGOING');
  if (input.startDate && input.endDate && input.startDate > input.endDate) {
    errors.add('endDate', 'must not be before startDate');
  }
  for (const field of [
    'platformCustomerId',
    'accountIdentifier',
    'senderAccountIdentifier',
    'receiverAccountIdentifier',
    'reference',
  ] as const) {
    checkText(errors, field, input[field]);
  }
  errors.throwIfAny();
  return {
    ...rest,
    // The platform's own id selects the platform's own transactions (no customer).
    ...(customerId !== undefined ? { customerId: customerId === input.platformId ? null : customerId } : {}),
    ...(status !== undefined && isTransactionStatus(status) ? { status } : {}),
    ...(type === 'INCOMING' || type === 'OUTGOING' ? { type } : {}),
  };
}

/** A reference to one transaction of a platform, valid (GET /transactions/{id}, approve, reject). */
export function checkTransactionRef(errors: FieldErrors, platformId: string, transactionId: string): void {
  checkId(errors, 'platformId', platformId, 'Platform');
  checkId(errors, 'transactionId', transactionId, 'Transaction');
}

/** A valid transaction reference, or INVALID_INPUT. */
export function parseTransactionRef(platformId: string, transactionId: string): { platformId: string; transactionId: string } {
  const errors = new FieldErrors();
  checkTransactionRef(errors, platformId, transactionId);
  errors.throwIfAny();
  return { platformId, transactionId };
}

function isTransactionStatus(s: string): s is TransactionStatus {
  return (TRANSACTION_STATUSES as readonly string[]).includes(s);
}
