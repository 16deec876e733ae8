import { pixPayload, type AccountOrWalletInfo } from '@sluice/core';

/** One way to pay a quote funded in real time (public PaymentInstructions). */
export interface PaymentInstruction {
  accountOrWalletInfo: AccountOrWalletInfo;
  instructionsNotes: string;
  isPlatformAccount: boolean;
}

const BANK = 'Sluice Sandbox Bank';

/**
 * The sandbox collection accounts of real-time funding: one instant-payment
 * account (or wallet) per currency, shared by every quote; the quote's
 * reconciliation reference tells payments apart. The identifiers are
 * well-formed (ABA checksum, IBAN mod 97, CLABE check digit) and reserved for
 * the sandbox.
 */
const SANDBOX_COLLECTION: Readonly<Record<string, (reference: string) => AccountOrWalletInfo>> = {
  USD: (reference) => ({
    accountType: 'USD_ACCOUNT',
    accountNumber: '900000000001',
    routingNumber: '110000000',
    paymentRails: ['RTP', 'FEDNOW'],
    bankName: BANK,
    reference,
  }),
  EUR: (reference) => ({
    accountType: 'EUR_ACCOUNT',
    iban: 'DE64100200309000000001',
    swiftCode: 'SLUIDEB1XXX',
    paymentRails: ['SEPA_INSTANT'],
    reference,
  }),
  GBP: (reference) => ({
    accountType: 'GBP_ACCOUNT',
    sortCode: '040075',
    accountNumber: '90000001',
    paymentRails: ['FASTER_PAYMENTS'],
    reference,
  }),
  MXN: (reference) => ({
    accountType: 'MXN_ACCOUNT',
    clabeNumber: '646180000000000012',
    paymentRails: ['SPEI'],
    reference,
  }),
  BRL: (reference) => ({
    accountType: 'BRL_ACCOUNT',
    qrCode: pixPayload('a0c3b1d2-5e4f-4a6b-8c7d-9e0f1a2b3c4d', reference.replace(/[^A-Za-z0-9]/g, '')),
  }),
  USDC: () => ({
    accountType: 'SOLANA_WALLET',
    address: 'Bx9tTNLgktEdwYXhdwCC9g9doyNDLV8rLGn9aiydzLSh',
    assetType: 'USDC',
  }),
  BTC: () => ({
    accountType: 'SPARK_WALLET',
    address: 'spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6dj6mrhu',
    assetType: 'BTC',
  }),
};

/** Currencies a REALTIME_FUNDING quote can be funded in (sandbox). */
export const REALTIME_FUNDING_CURRENCIES: readonly string[] = Object.keys(SANDBOX_COLLECTION);

/**
 * The payment instructions of a sandbox quote funded in real time: pay
 * `amount` minor units of `currency` with `reference`; POST /sandbox/send
 * simulates the payer. Undefined for a currency without an instant rail.
 */
export function sandboxFundingInstructions(
  quoteId: string,
  currency: string,
  amount: bigint,
  reference: string,
): PaymentInstruction[] | undefined {
  const info = SANDBOX_COLLECTION[currency];
  if (!info) return undefined;
  const account = info(reference);
  const how = account.address
    ? `Send exactly ${amount} minor units of ${currency} to this address before the quote expires.`
    : `Pay exactly ${amount} minor units of ${currency} with the reference ${reference} before the quote expires; the payment is matched by the reference.`;
  return [
    {
      accountOrWalletInfo: account,
      instructionsNotes: `${how} In the sandbox, simulate it with POST /sandbox/send {"quoteId":"${quoteId}","currencyCode":"${currency}"}.`,
      isPlatformAccount: true,
    },
  ];
}
