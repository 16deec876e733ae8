import { defineErrors } from '@sluice/core';

/** Public error codes of the webhook-dispatcher (kind = gRPC status). */
export const fail = defineErrors({
  WEBHOOK_ENDPOINT_NOT_SET: 'FAILED_PRECONDITION',
  WEBHOOK_DELIVERY_ERROR: 'FAILED_PRECONDITION',
  WEBHOOK_DELIVERY_NOT_FOUND: 'NOT_FOUND',
  WEBHOOK_TARGET_UNAVAILABLE: 'UNAVAILABLE',
});
