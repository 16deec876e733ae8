import type { payments } from '@sluice/contracts';
import { Type, type Static } from '@sinclair/typebox';
import { Id, LOCKED_CURRENCY_SIDES, Memo, PositiveAmount, UmaAddress, stringEnum } from '@sluice/api';
import { PAYMENT_RAILS, PURPOSES_OF_PAYMENT } from '@sluice/core';
import { discriminated, FreeFormObject, named } from './common.js';

/** Request schemas of `/quotes` and `/sandbox/send`. */

const CurrencyCode = (description: string) => Type.String({ minLength: 1, maxLength: 10, description });

const AccountSource = Type.Object(
  {
    sourceType: Type.Literal('ACCOUNT'),
    accountId: Id('InternalAccount'),
    customerId: Type.Optional(Id('Customer')),
  },
  { additionalProperties: false, title: 'AccountQuoteSource' },
);

const RealtimeFundingSource = Type.Object(
  {
    sourceType: Type.Literal('REALTIME_FUNDING'),
    currency: CurrencyCode('the currency the payer pays in'),
    customerId: Type.Optional(Id('Customer')),
    cryptoNetwork: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'in a stablecoin: the network the payer deposits on (accepted; the sandbox has one network per asset)',
      }),
    ),
  },
  { additionalProperties: false, title: 'RealtimeFundingQuoteSource' },
);

const AccountDestination = Type.Object(
  {
    destinationType: Type.Literal('ACCOUNT'),
    accountId: Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'an InternalAccount or ExternalAccount id of the platform',
    }),
    paymentRail: Type.Optional(
      stringEnum(PAYMENT_RAILS, {
        description:
          'external accounts: the payout rail, one of those of the account type (USD_ACCOUNT: ACH, WIRE, RTP, FEDNOW; EUR_ACCOUNT: SEPA_INSTANT, SEPA; GBP_ACCOUNT: FASTER_PAYMENTS; MXN_ACCOUNT: SPEI; BRL_ACCOUNT: PIX); absent: the first of those. Not for internal accounts',
      }),
    ),
  },
  { additionalProperties: false, title: 'AccountQuoteDestination' },
);

const UmaDestination = Type.Object(
  {
    destinationType: Type.Literal('UMA_ADDRESS'),
    umaAddress: UmaAddress('the receiver ($name@domain)'),
    currency: Type.Optional(CurrencyCode("receiving currency (default: the receiver's first)")),
  },
  { additionalProperties: false, title: 'UmaQuoteDestination' },
);

export const QuoteRequest = named('QuoteRequest', Type.Object(
  {
    lookupId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: 'Lookup id of GET /receiver/...; required for UMA_ADDRESS destinations',
      }),
    ),
    source: discriminated('sourceType', [AccountSource, RealtimeFundingSource], {
      description:
        'ACCOUNT: an internal account of the platform pays (accountId, and optionally its owner customerId). REALTIME_FUNDING: the payer pays the quote’s paymentInstructions (instant rails) before it expires; the quote executes when the funds arrive (sandbox: POST /sandbox/send); customerId: on whose behalf (absent: the platform)',
    }),
    destination: discriminated('destinationType', [AccountDestination, UmaDestination], {
      description: 'ACCOUNT: accountId, paymentRail. UMA_ADDRESS: umaAddress, currency',
    }),
    lockedCurrencySide: stringEnum(LOCKED_CURRENCY_SIDES),
    lockedCurrencyAmount: PositiveAmount('Smallest units of the locked side’s currency'),
    immediatelyExecute: Type.Optional(Type.Boolean({ default: false })),
    description: Type.Optional(Memo('A memo kept on the quote and its transaction')),
    purposeOfPayment: Type.Optional(stringEnum(PURPOSES_OF_PAYMENT)),
    senderCustomerInfo: Type.Optional(
      FreeFormObject('Every mandatory requiredPayerDataFields entry of the lookup, by field name'),
    ),
  },
  { additionalProperties: false },
));
export type QuoteRequest = Static<typeof QuoteRequest>;

/** The proto CreateQuoteRequest of a POST /quotes body (platform and environment are the caller's). */
export function quoteRequestPb(body: QuoteRequest): Omit<payments.CreateQuoteRequest, 'platformId' | 'environment'> {
  const { source, destination: d, ...b } = body;
  return {
    sourceKind: source.sourceType,
    ...(source.sourceType === 'ACCOUNT'
      ? { sourceAccountId: source.accountId }
      : { sourceAccountId: '', sourceCurrency: source.currency }),
    ...(source.customerId !== undefined ? { sourceCustomerId: source.customerId } : {}),
    destinationKind: d.destinationType,
    ...(d.destinationType === 'ACCOUNT'
      ? {
          destinationAccountId: d.accountId,
          ...(d.paymentRail !== undefined ? { destinationPaymentRail: d.paymentRail } : {}),
        }
      : {
          destinationUmaAddress: d.umaAddress,
          ...(d.currency !== undefined ? { destinationCurrency: d.currency } : {}),
        }),
    lockedCurrencySide: b.lockedCurrencySide,
    lockedCurrencyAmount: BigInt(b.lockedCurrencyAmount),
    ...(b.lookupId !== undefined ? { lookupId: b.lookupId } : {}),
    immediatelyExecute: b.immediatelyExecute ?? false,
    ...(b.description !== undefined ? { description: b.description } : {}),
    ...(b.purposeOfPayment !== undefined ? { purposeOfPayment: b.purposeOfPayment } : {}),
    senderCustomerInfoJson: b.senderCustomerInfo ? JSON.stringify(b.senderCustomerInfo) : '',
  };
}

export const QuoteParams = Type.Object({ quoteId: Id('Quote') }, { additionalProperties: false });

/** POST /sandbox/send (reference SandboxSendRequest). */
export const SandboxSendRequest = named('SandboxSendRequest', Type.Object(
  {
    quoteId: Id('Quote'),
    currencyCode: CurrencyCode('The quote’s sending currency'),
    currencyAmount: Type.Optional(
      PositiveAmount('Smallest units; must equal the quote’s totalSendingAmount (default: that amount)'),
    ),
  },
  { additionalProperties: false },
));
