import { describe, expect, it } from 'vitest';
import { SandboxPaymentRail, sandboxSuffix } from './payment-rail.js';
import {
  failureReasonFor,
  newReference,
  refundWebhookType,
  transactionJson,
  webhookTypeFor,
  type Transaction,
} from './transaction.js';

const payment = (id: string) => ({
  transactionId: 'Transaction:x',
  direction: 'PAYOUT' as const,
  amount: 1n,
  currency: 'USD',
  counterpartyIdentifier: id,
});

describe('sandbox rail', () => {
  it('takes the last three digits of the identifier (the username of user@domain forms)', () => {
    expect(sandboxSuffix('12345678002')).toBe('002');
    expect(sandboxSuffix('GB29 NWBK 6016 1331 9260 05')).toBe('005');
    expect(sandboxSuffix('$alice004@wallet.example')).toBe('004');
    expect(sandboxSuffix('alice003@pix.example')).toBe('003');
    expect(sandboxSuffix('abc')).toBeUndefined();
  });

  it('maps each suffix to its outcome', async () => {
    const rail = new SandboxPaymentRail();
    expect(await rail.submit(payment('x002'))).toEqual({ accepted: false, detail: 'INSUFFICIENT_FUNDS' });
    expect(await rail.submit(payment('x003'))).toEqual({ accepted: false, detail: 'ACCOUNT_CLOSED' });
    expect(await rail.submit(payment('x004'))).toEqual({ accepted: true, checkAfterMs: 1_000 });
    expect(await rail.submit(payment('x005'))).toEqual({ accepted: true, checkAfterMs: 30_000 });
    expect(await rail.status(payment('x004'))).toEqual({ state: 'FAILED', detail: 'REJECTED_BY_BANK' });
    expect(await rail.status(payment('x005'))).toEqual({ state: 'FAILED', detail: 'TIMED_OUT' });
    expect(await rail.status(payment('x789'))).toEqual({ state: 'SETTLED' });
    expect(await rail.submit(payment('x789'))).toEqual({ accepted: true, checkAfterMs: 1_000 });
  });
});

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

  it('renders the OUTGOING and INCOMING variants; platform transactions carry the platform id', () => {
    const t: Transaction = {
      id: 'Transaction:1',
      platformId: 'Platform:1',
      type: 'OUTGOING',
      status: 'FAILED',
      source: { kind: 'ACCOUNT', accountId: 'InternalAccount:1', currency: 'USD' },
      destination: { kind: 'ACCOUNT', accountId: 'ExternalAccount:1', currency: 'USD' },
      sentAmount: 150n,
      receivedAmount: 150n,
      fees: 0n,
      reference: 'SLC-AAAAAAAAAAAAAAAA',
      failureReason: 'QUOTE_EXECUTION_FAILED',
      failureDetail: 'ACCOUNT_CLOSED',
      counterpartyInformation: {},
      createdAt: new Date('2026-01-01T00:00:00Z'),
      updatedAt: new Date('2026-01-01T00:00:01Z'),
    };
    expect(transactionJson(t)).toEqual({
      id: 'Transaction:1',
      status: 'FAILED',
      type: 'OUTGOING',
      source: { sourceType: 'ACCOUNT', accountId: 'InternalAccount:1', currency: 'USD' },
      destination: { destinationType: 'ACCOUNT', accountId: 'ExternalAccount:1', currency: 'USD' },
      customerId: 'Platform:1',
      platformCustomerId: 'Platform:1',
      sentAmount: {
        amount: 150,
        currency: { code: 'USD', name: expect.any(String), symbol: '$', decimals: 2 },
      },
      receivedAmount: {
        amount: 150,
        currency: { code: 'USD', name: expect.any(String), symbol: '$', decimals: 2 },
      },
      exchangeRate: 1,
      fees: 0,
      reconciliationInstructions: { reference: 'SLC-AAAAAAAAAAAAAAAA' },
      counterpartyInformation: {},
      failureReason: 'QUOTE_EXECUTION_FAILED',
      failureDetail: 'ACCOUNT_CLOSED',
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:01.000Z',
    });
    const incoming = transactionJson({
      ...t,
      type: 'INCOMING',
      customerId: 'Customer:1',
      platformCustomerId: 'u1',
    });
    expect(incoming).not.toHaveProperty('sentAmount');
    expect(incoming).not.toHaveProperty('fees');
    expect(incoming).toMatchObject({ customerId: 'Customer:1', platformCustomerId: 'u1' });
  });

  it('renders a quote payment’s exchange rate, rate details and refund', () => {
    const t: Transaction = {
      id: 'Transaction:2',
      platformId: 'Platform:1',
      type: 'OUTGOING',
      status: 'REFUNDED',
      source: { kind: 'REALTIME_FUNDING', currency: 'USD' },
      destination: { kind: 'ACCOUNT', accountId: 'ExternalAccount:1', currency: 'EUR' },
      sentAmount: 10_000n,
      receivedAmount: 9_223n,
      fees: 40n,
      exchangeRate: { num: 27n, den: 25n },
      rateDetails: {
        counterpartyMultiplier: { num: 1n, den: 10n },
        counterpartyFixedFee: 0n,
        gridApiMultiplier: { num: 3n, den: 2n },
        gridApiFixedFee: 10n,
        gridApiVariableFeeRate: { num: 3n, den: 1000n },
        gridApiVariableFeeAmount: 30n,
      },
      refund: {
        reference: 'SLC-AAAAAAAAAAAAAAAA-REFUND',
        initiatedAt: new Date('2026-01-01T00:00:02Z'),
        settledAt: new Date('2026-01-01T00:00:03Z'),
        status: 'COMPLETED',
        reason: 'USER_CANCELLATION',
      },
      reference: 'SLC-AAAAAAAAAAAAAAAA',
      counterpartyInformation: {},
      createdAt: new Date('2026-01-01T00:00:00Z'),
      updatedAt: new Date('2026-01-01T00:00:03Z'),
    };
    expect(transactionJson(t)).toMatchObject({
      source: { sourceType: 'REALTIME_FUNDING', currency: 'USD' },
      exchangeRate: 1.08,
      fees: 40,
      rateDetails: {
        counterpartyMultiplier: 0.1,
        counterpartyFixedFee: 0,
        gridApiMultiplier: 1.5,
        gridApiFixedFee: 10,
        gridApiVariableFeeRate: 0.003,
        gridApiVariableFeeAmount: 30,
      },
      refund: {
        reference: 'SLC-AAAAAAAAAAAAAAAA-REFUND',
        initiatedAt: '2026-01-01T00:00:02.000Z',
        settledAt: '2026-01-01T00:00:03.000Z',
        status: 'COMPLETED',
        reason: 'USER_CANCELLATION',
      },
    });
  });

  it('makes references of 16 unambiguous characters', () => {
    const r = newReference((n) => new Uint8Array(n).map((_, i) => i * 7));
    expect(r).toMatch(/^SLC-[A-HJ-NP-Z2-9]{16}$/);
  });
});
