import { describe, expect, it } from 'vitest';
import type { Transaction } from '../domain/transaction.js';
import { publicTransaction as transactionJson } from './transaction.events.js';

// The public Transaction of a payment, as REST responses and webhooks both carry it.
describe('publicTransaction', () => {
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

});
