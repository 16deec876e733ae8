import { describe, expect, it } from 'vitest';
import {
  failureReasonFor,
  newReference,
  refundWebhookType,
  webhookTypeFor,
} from './transaction.js';

describe('transactions', () => {
  it('names the webhook of each status from the reference WebhookType enum', () => {
    expect(webhookTypeFor('OUTGOING', 'PENDING')).toBe('OUTGOING_PAYMENT.PENDING');
    expect(webhookTypeFor('OUTGOING', 'COMPLETED')).toBe('OUTGOING_PAYMENT.COMPLETED');
    expect(webhookTypeFor('OUTGOING', 'FAILED')).toBe('OUTGOING_PAYMENT.FAILED');
    expect(webhookTypeFor('OUTGOING', 'CREATED')).toBeUndefined();
    expect(webhookTypeFor('INCOMING', 'COMPLETED')).toBe('INCOMING_PAYMENT.COMPLETED');
    expect(webhookTypeFor('INCOMING', 'FAILED')).toBe('INCOMING_PAYMENT.FAILED');
    expect(webhookTypeFor('INCOMING', 'PROCESSING')).toBeUndefined();
  });

  it('uses only failure reasons of the specification’s enum', () => {
    const SPEC = [
      'LNURLP_FAILED',
      'PAY_REQUEST_FAILED',
      'PAYMENT_APPROVAL_WEBHOOK_ERROR',
      'PAYMENT_APPROVAL_TIMED_OUT',
      'OFFRAMP_FAILED',
      'MISSING_MANDATORY_PAYEE_DATA',
      'QUOTE_EXPIRED',
      'QUOTE_EXECUTION_FAILED',
    ];
    const details = [
      'INSUFFICIENT_FUNDS',
      'ACCOUNT_CLOSED',
      'EXECUTION_FAILED',
      'REJECTED_BY_BANK',
      'TIMED_OUT',
      'COMPLIANCE_CHECK_FAILED',
      'RETURNED_BY_BANK',
      'USER_CANCELLED',
      'PAYOUT_FAILED',
    ] as const;
    for (const type of ['OUTGOING', 'INCOMING'] as const)
      for (const d of details) expect(SPEC).toContain(failureReasonFor(type, d));
    expect(failureReasonFor('OUTGOING', 'ACCOUNT_CLOSED')).toBe('QUOTE_EXECUTION_FAILED');
    expect(failureReasonFor('OUTGOING', 'REJECTED_BY_BANK')).toBe('OFFRAMP_FAILED');
    expect(failureReasonFor('OUTGOING', 'COMPLIANCE_CHECK_FAILED')).toBe('PAY_REQUEST_FAILED');
    expect(failureReasonFor('OUTGOING', 'USER_CANCELLED')).toBe('QUOTE_EXECUTION_FAILED');
    expect(failureReasonFor('INCOMING', 'TIMED_OUT')).toBe('OFFRAMP_FAILED');
  });

  it('announces refunds with OUTGOING_PAYMENT.REFUND_*; REFUNDED has no status webhook of its own', () => {
    expect(refundWebhookType('PENDING')).toBe('OUTGOING_PAYMENT.REFUND_PENDING');
    expect(refundWebhookType('COMPLETED')).toBe('OUTGOING_PAYMENT.REFUND_COMPLETED');
    expect(refundWebhookType('FAILED')).toBe('OUTGOING_PAYMENT.REFUND_FAILED');
    expect(webhookTypeFor('OUTGOING', 'REFUNDED')).toBeUndefined();
  });

  it('makes references of 16 unambiguous characters', () => {
    const r = newReference((n) => new Uint8Array(n).map((_, i) => i * 7));
    expect(r).toMatch(/^SLC-[A-HJ-NP-Z2-9]{16}$/);
  });
});
