import { idUuid, isId } from '@sluice/core';

/**
 * The public webhook types (the reference document's WebhookType enum). An event
 * whose type is one of these already carries its `data` in the public API shape
 * and becomes a webhook; every other event is internal and ignored.
 */
export const PUBLIC_WEBHOOK_TYPES: ReadonlySet<string> = new Set([
  'OUTGOING_PAYMENT.PENDING',
  'OUTGOING_PAYMENT.PROCESSING',
  'OUTGOING_PAYMENT.COMPLETED',
  'OUTGOING_PAYMENT.FAILED',
  'OUTGOING_PAYMENT.EXPIRED',
  'OUTGOING_PAYMENT.REFUND_PENDING',
  'OUTGOING_PAYMENT.REFUND_COMPLETED',
  'OUTGOING_PAYMENT.REFUND_FAILED',
  'INCOMING_PAYMENT.PENDING',
  'INCOMING_PAYMENT.COMPLETED',
  'INCOMING_PAYMENT.FAILED',
  'CUSTOMER.KYC_APPROVED',
  'CUSTOMER.KYC_REJECTED',
  'CUSTOMER.KYC_PENDING',
  'CUSTOMER.KYB_APPROVED',
  'CUSTOMER.KYB_REJECTED',
  'CUSTOMER.KYB_PENDING',
  'VERIFICATION.APPROVED',
  'VERIFICATION.REJECTED',
  'VERIFICATION.RESOLVE_ERRORS',
  'VERIFICATION.IN_PROGRESS',
  'VERIFICATION.PENDING_MANUAL_REVIEW',
  'VERIFICATION.READY_FOR_VERIFICATION',
  'INTERNAL_ACCOUNT.BALANCE_UPDATED',
  'INVITATION.CLAIMED',
  'BULK_UPLOAD.COMPLETED',
  'BULK_UPLOAD.FAILED',
  'AGENT_ACTION.PENDING_APPROVAL',
  'TEST',
]);

export function isPublicWebhookType(type: string): boolean {
  return PUBLIC_WEBHOOK_TYPES.has(type);
}

/** The body every webhook carries. */
export interface WebhookPayload {
  id: string;
  type: string;
  timestamp: string;
  data: unknown;
}

/** `Webhook:<uuid of the event id>`: stable across redeliveries of one event. */
export function webhookIdForEvent(eventId: string): string {
  if (!isId(eventId)) throw new Error(`malformed event id: ${eventId}`);
  return `Webhook:${idUuid(eventId)}`;
}

/**
 * The exact JSON text of a webhook body. It is frozen when the delivery is
 * created, so every attempt sends (and signs) the same bytes.
 */
export function serializePayload(p: WebhookPayload): string {
  return JSON.stringify({ id: p.id, type: p.type, timestamp: p.timestamp, data: p.data ?? {} });
}
