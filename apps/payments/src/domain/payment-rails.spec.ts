import { describe, expect, it } from 'vitest';
import { paymentRailFor } from './payment-rails.js';

describe('paymentRailFor', () => {
  it('defaults to the first rail of the type (core’s table), or of the account’s own rails', () => {
    expect(paymentRailFor('USD_ACCOUNT', undefined)).toEqual({ rail: 'ACH' });
    expect(paymentRailFor('INR_ACCOUNT', undefined)).toEqual({ rail: 'UPI' });
    expect(paymentRailFor('KES_ACCOUNT', undefined)).toEqual({ rail: 'MOBILE_MONEY' });
    expect(paymentRailFor('EUR_ACCOUNT', undefined, ['SEPA'])).toEqual({ rail: 'SEPA' });
    expect(paymentRailFor('BDT_ACCOUNT', undefined, ['MOBILE_MONEY'])).toEqual({ rail: 'MOBILE_MONEY' });
  });

  it('takes a requested rail the account has, refuses another', () => {
    expect(paymentRailFor('USD_ACCOUNT', 'WIRE')).toEqual({ rail: 'WIRE' });
    expect(paymentRailFor('USD_ACCOUNT', 'WIRE', ['ACH'])).toEqual({
      error: 'must be one of the rails of a USD_ACCOUNT: ACH',
    });
    expect(paymentRailFor('SGD_ACCOUNT', 'SEPA')).toEqual({
      error: 'must be one of the rails of a SGD_ACCOUNT: FAST, PAYNOW, BANK_TRANSFER',
    });
  });

  it('wallets move on their own network: no rail, and one requested is refused', () => {
    expect(paymentRailFor('SOLANA_WALLET', undefined)).toEqual({});
    expect(paymentRailFor('LIGHTNING', 'ACH')).toEqual({
      error: 'a LIGHTNING is paid on its own network; no paymentRail applies',
    });
  });
});
