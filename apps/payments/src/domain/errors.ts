import { defineErrors } from '@sluice/core';

/** Every public error code the payments service raises (kind = gRPC status). */
export const fail = defineErrors({
  UNSUPPORTED_CURRENCY: 'INVALID_ARGUMENT',
  SAME_CURRENCY_QUOTE: 'INVALID_ARGUMENT',
  /** Below a currency's minimum (or eaten by the fees) or above its maximum: the reference's code. */
  AMOUNT_OUT_OF_RANGE: 'INVALID_ARGUMENT',
  INVALID_UMA_ADDRESS: 'INVALID_ARGUMENT',
  UMA_RECEIVER_NOT_FOUND: 'NOT_FOUND',
  LOOKUP_REQUEST_NOT_FOUND: 'NOT_FOUND',
  EXTERNAL_ACCOUNT_NOT_USABLE: 'FAILED_PRECONDITION',
  LOOKUP_EXPIRED: 'FAILED_PRECONDITION',
  UMA_COUNTERPARTY_UNAVAILABLE: 'UNAVAILABLE',
  EXCHANGE_RATES_UNAVAILABLE: 'UNAVAILABLE',
  ILLEGAL_STATE_TRANSITION: 'FAILED_PRECONDITION',
  TRANSACTION_NOT_FOUND: 'NOT_FOUND',
  RAIL_UNAVAILABLE: 'UNAVAILABLE',
  /** A new payment refused while settlement is behind (admission.ts): 503 with Retry-After; nothing was done. */
  SERVICE_UNAVAILABLE: 'UNAVAILABLE',
  IDEMPOTENCY_KEY_REUSED: 'FAILED_PRECONDITION',
  QUOTE_NOT_FOUND: 'NOT_FOUND',
  /** A paying customer identity knows as deleted (identity's own code for one it does not know). */
  CUSTOMER_NOT_FOUND: 'NOT_FOUND',
  /** Executing (or funding) an expired quote: 409, as the reference answers a quote "expired or in invalid state". */
  QUOTE_EXPIRED: 'ABORTED',
  /** Executing a quote that is not executed this way (REALTIME_FUNDING): 409, as the reference. */
  QUOTE_NOT_EXECUTABLE: 'ABORTED',
  /** Approve/reject of an incoming payment that is not (or no longer) awaiting the platform: 409. */
  TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL: 'ABORTED',
});
