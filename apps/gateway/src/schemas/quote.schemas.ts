import { Type, type Static } from '@sinclair/typebox';
import type { payments } from '@sluice/contracts';
import { currencyView, PAYMENT_RAILS, PURPOSES_OF_PAYMENT, type FieldError } from '@sluice/core';
import { Currency, Id, Timestamp, iso } from './common.js';
import { PaymentInstructions, paymentInstructionJson } from './internal-account.schemas.js';
import { RateDetails, rateDetailsJson } from './transaction.schemas.js';

const QuoteSource = Type.Object(
  {
    sourceType: Type.Union([Type.Literal('ACCOUNT'), Type.Literal('REALTIME_FUNDING')], {
      description:
        'ACCOUNT: an internal account of the platform pays. REALTIME_FUNDING: the payer pays the quote’s paymentInstructions (instant rails) before it expires; the quote executes when the funds arrive (sandbox: POST /sandbox/send)',
    }),
    accountId: Type.Optional(Id('InternalAccount')),
    customerId: Type.Optional(Id('Customer')),
    currency: Type.Optional(
      Type.String({ description: 'REALTIME_FUNDING: the currency the payer pays in (required)' }),
    ),
    cryptoNetwork: Type.Optional(
      Type.String({
        description:
          'REALTIME_FUNDING in a stablecoin: the network the payer deposits on (accepted; the sandbox has one network per asset)',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'ACCOUNT: accountId (required) and, optionally, its owner customerId. REALTIME_FUNDING: currency (required) and the customerId on whose behalf the quote is made (absent: the platform)',
  },
);

const PaymentRailField = Type.Union(
  PAYMENT_RAILS.map((r) => Type.Literal(r)),
  {
    description:
      'ACCOUNT, external accounts: the payout rail, one of those of the account type (USD_ACCOUNT: ACH, WIRE, RTP, FEDNOW; EUR_ACCOUNT: SEPA_INSTANT, SEPA; GBP_ACCOUNT: FASTER_PAYMENTS; MXN_ACCOUNT: SPEI; BRL_ACCOUNT: PIX); absent: the first of those. Not for internal accounts, wallets or UMA addresses',
  },
);

const QuoteDestination = Type.Object(
  {
    destinationType: Type.Union([Type.Literal('ACCOUNT'), Type.Literal('UMA_ADDRESS')]),
    accountId: Type.Optional(
      Type.String({ description: 'ACCOUNT: an InternalAccount or ExternalAccount id of the platform' }),
    ),
    paymentRail: Type.Optional(PaymentRailField),
    umaAddress: Type.Optional(Type.String({ description: 'UMA_ADDRESS: the receiver ($name@domain)' })),
    currency: Type.Optional(
      Type.String({ description: "UMA_ADDRESS: receiving currency (default: the receiver's first)" }),
    ),
  },
  {
    additionalProperties: false,
    description: 'ACCOUNT: accountId (required), paymentRail. UMA_ADDRESS: umaAddress (required), currency',
  },
);

/** The fields each source and destination type may carry (the reference's oneOf, by discriminator). */
const SOURCE_FIELDS: Record<string, readonly string[]> = {
  ACCOUNT: ['sourceType', 'accountId', 'customerId'],
  REALTIME_FUNDING: ['sourceType', 'currency', 'customerId', 'cryptoNetwork'],
};
const DESTINATION_FIELDS: Record<string, readonly string[]> = {
  ACCOUNT: ['destinationType', 'accountId', 'paymentRail'],
  UMA_ADDRESS: ['destinationType', 'umaAddress', 'currency'],
};

/**
 * Field errors for source/destination fields that belong to another type than the one
 * given (e.g. `source.currency` with sourceType ACCOUNT): refused rather than ignored,
 * so a contradictory request never pays something other than what it says.
 */
export function quoteShapeErrors(b: QuoteRequest): FieldError[] {
  const errors: FieldError[] = [];
  const check = (
    name: 'source' | 'destination',
    obj: Record<string, unknown>,
    type: string,
    allowed: readonly string[] | undefined,
  ) => {
    for (const key of Object.keys(obj))
      if (allowed && !allowed.includes(key))
        errors.push({ field: `${name}.${key}`, message: `is not a field of ${name}Type ${type}` });
  };
  check('source', b.source, b.source.sourceType, SOURCE_FIELDS[b.source.sourceType]);
  check(
    'destination',
    b.destination,
    b.destination.destinationType,
    DESTINATION_FIELDS[b.destination.destinationType],
  );
  return errors;
}

export const QuoteRequest = Type.Object(
  {
    lookupId: Type.Optional(
      Type.String({ description: 'Lookup id of GET /receiver/...; required for UMA_ADDRESS destinations' }),
    ),
    source: QuoteSource,
    destination: QuoteDestination,
    lockedCurrencySide: Type.Union([Type.Literal('SENDING'), Type.Literal('RECEIVING')]),
    lockedCurrencyAmount: Type.Integer({
      minimum: 1,
      maximum: 9_000_000_000_000_000,
      description: 'Smallest units of the locked side’s currency',
    }),
    immediatelyExecute: Type.Optional(Type.Boolean({ default: false })),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    purposeOfPayment: Type.Optional(Type.Union(PURPOSES_OF_PAYMENT.map((p) => Type.Literal(p)))),
    senderCustomerInfo: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'Every mandatory requiredPayerDataFields entry of the lookup, by field name',
      }),
    ),
  },
  { additionalProperties: false },
);
export type QuoteRequest = Static<typeof QuoteRequest>;

export const QuoteParams = Type.Object({ quoteId: Id('Quote') }, { additionalProperties: false });

export const Quote = Type.Object(
  {
    id: Id('Quote'),
    status: Type.Union(
      ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED'].map((s) => Type.Literal(s)),
    ),
    createdAt: Timestamp,
    expiresAt: Timestamp,
    source: Type.Object({
      sourceType: Type.Union([Type.Literal('ACCOUNT'), Type.Literal('REALTIME_FUNDING')]),
      accountId: Type.Optional(Type.String()),
      customerId: Type.Optional(Type.String()),
      currency: Type.Optional(Type.String()),
    }),
    destination: Type.Object({
      destinationType: Type.Union([Type.Literal('ACCOUNT'), Type.Literal('UMA_ADDRESS')]),
      accountId: Type.Optional(Type.String()),
      paymentRail: Type.Optional(Type.String({ description: 'external accounts: the payout rail used' })),
      umaAddress: Type.Optional(Type.String()),
      currency: Type.Optional(Type.String()),
    }),
    sendingCurrency: Currency,
    receivingCurrency: Currency,
    totalSendingAmount: Type.Integer({
      description: 'What the sender pays, fees included (sending minor units)',
    }),
    totalReceivingAmount: Type.Integer({ description: 'What the receiver gets (receiving minor units)' }),
    exchangeRate: Type.Number({ description: 'Sending units per receiving unit (fees excluded)' }),
    feesIncluded: Type.Integer({ description: 'Fees within totalSendingAmount (sending minor units)' }),
    lockedCurrencySide: Type.Union([Type.Literal('SENDING'), Type.Literal('RECEIVING')]),
    lockedCurrencyAmount: Type.Integer(),
    transactionId: Type.Optional(Type.String({ description: 'Set once the quote is executed' })),
    lookupId: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    purposeOfPayment: Type.Optional(Type.String()),
    counterpartyInformation: Type.Record(Type.String(), Type.String()),
    rateDetails: RateDetails,
    paymentInstructions: Type.Optional(
      Type.Array(PaymentInstructions, {
        description:
          'REALTIME_FUNDING sources: how to pay totalSendingAmount (with the reference) before expiresAt; absent for an internal-account source',
      }),
    ),
    payloadToSign: Type.Optional(
      Type.String({
        description:
          'EMBEDDED_WALLET sources: stamp it byte for byte with a session key of the wallet and send the stamp as header Service-Wallet-Signature of POST /quotes/{quoteId}/execute',
      }),
    ),
  },
  { $id: 'Quote' },
);
export type Quote = Static<typeof Quote>;

/** The REST Quote of a proto Quote. */
export function quoteJson(q: payments.Quote): Quote {
  const src = q.source!;
  const dst = q.destination!;
  return {
    id: q.id,
    status: q.status as Quote['status'],
    createdAt: iso(q.createdAt)!,
    expiresAt: iso(q.expiresAt)!,
    source:
      src.kind === 'REALTIME_FUNDING'
        ? {
            sourceType: 'REALTIME_FUNDING',
            ...(q.customerId ? { customerId: q.customerId } : {}),
            currency: src.currency,
          }
        : {
            sourceType: 'ACCOUNT',
            accountId: src.accountId ?? '',
            ...(q.customerId ? { customerId: q.customerId } : {}),
          },
    destination: {
      destinationType: dst.kind as Quote['destination']['destinationType'],
      ...(dst.accountId ? { accountId: dst.accountId } : {}),
      ...(dst.paymentRail ? { paymentRail: dst.paymentRail } : {}),
      ...(dst.umaAddress ? { umaAddress: dst.umaAddress } : {}),
      currency: dst.currency,
    },
    sendingCurrency: currencyView(src.currency),
    receivingCurrency: currencyView(dst.currency),
    totalSendingAmount: Number(q.totalSendingAmount),
    totalReceivingAmount: Number(q.totalReceivingAmount),
    exchangeRate: Number(q.exchangeRate),
    feesIncluded: Number(q.feesIncluded),
    lockedCurrencySide: q.lockedCurrencySide as Quote['lockedCurrencySide'],
    lockedCurrencyAmount: Number(q.lockedCurrencyAmount),
    ...(q.transactionId ? { transactionId: q.transactionId } : {}),
    ...(q.lookupId ? { lookupId: q.lookupId } : {}),
    ...(q.description !== undefined ? { description: q.description } : {}),
    ...(q.purposeOfPayment ? { purposeOfPayment: q.purposeOfPayment } : {}),
    counterpartyInformation: q.counterpartyInformation,
    ...(q.payloadToSign ? { payloadToSign: q.payloadToSign } : {}),
    ...(q.paymentInstructions.length
      ? { paymentInstructions: q.paymentInstructions.map(paymentInstructionJson) }
      : {}),
    rateDetails: rateDetailsJson(q.rateDetails!),
  };
}

/** POST /sandbox/send (reference SandboxSendRequest). */
export const SandboxSendRequest = Type.Object(
  {
    quoteId: Id('Quote'),
    currencyCode: Type.String({ description: 'The quote’s sending currency' }),
    currencyAmount: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 9_000_000_000_000_000,
        description: 'Smallest units; must equal the quote’s totalSendingAmount (default: that amount)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type SandboxSendRequest = Static<typeof SandboxSendRequest>;
