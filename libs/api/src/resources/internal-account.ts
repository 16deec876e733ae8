import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { accounts } from '@sluice/contracts';
import { Currency, Id, Timestamp, iso, stringEnum } from '../schema.js';

export const INTERNAL_ACCOUNT_TYPES = ['INTERNAL_FIAT', 'INTERNAL_CRYPTO', 'EMBEDDED_WALLET'] as const;
export type InternalAccountTypeName = (typeof INTERNAL_ACCOUNT_TYPES)[number];

export const InternalAccountType = stringEnum(INTERNAL_ACCOUNT_TYPES, {
  $id: 'InternalAccountType',
  description:
    'INTERNAL_FIAT: fiat holding account. INTERNAL_CRYPTO: stablecoin/crypto holding account (e.g. USDC). EMBEDDED_WALLET: self-custodial wallet of the customer.',
});

const Reference = Type.String({
  description: 'Unique reference code that must be included with the payment to credit this account',
});

function info<P extends Record<string, TSchema>>(id: string, accountType: string, props: P) {
  return Type.Object({ accountType: Type.Literal(accountType), ...props }, { $id: id, title: id });
}

/** `accountOrWalletInfo` variants used in funding instructions (discriminated by `accountType`). */
export const PaymentAccountOrWalletInfo = Type.Union(
  [
    info('PaymentUsdAccountInfo', 'USD_ACCOUNT', {
      accountNumber: Type.String({ minLength: 1, maxLength: 34 }),
      routingNumber: Type.String({ pattern: '^[0-9]{9}$', description: 'ABA routing number' }),
      paymentRails: Type.Array(stringEnum(['ACH', 'WIRE', 'RTP', 'FEDNOW'] as const)),
      bankName: Type.Optional(Type.String()),
      reference: Reference,
    }),
    info('PaymentEurAccountInfo', 'EUR_ACCOUNT', {
      iban: Type.String({ pattern: '^[A-Z]{2}[0-9]{2}[A-Za-z0-9]{11,30}$' }),
      swiftCode: Type.Optional(Type.String({ pattern: '^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$' })),
      paymentRails: Type.Array(stringEnum(['SEPA', 'SEPA_INSTANT'] as const)),
      reference: Reference,
    }),
    info('PaymentGbpAccountInfo', 'GBP_ACCOUNT', {
      sortCode: Type.String({ pattern: '^[0-9]{6}$' }),
      accountNumber: Type.String({ pattern: '^[0-9]{8}$' }),
      paymentRails: Type.Array(stringEnum(['FASTER_PAYMENTS'] as const)),
      reference: Reference,
    }),
    info('PaymentMxnAccountInfo', 'MXN_ACCOUNT', {
      clabeNumber: Type.String({ pattern: '^[0-9]{18}$' }),
      paymentRails: Type.Array(stringEnum(['SPEI'] as const)),
      reference: Reference,
    }),
    info('PaymentBrlAccountInfo', 'BRL_ACCOUNT', {
      qrCode: Type.String({
        minLength: 1,
        description: 'PIX "copia e cola" payload; its transaction id is the account reference',
      }),
    }),
    info('PaymentCadAccountInfo', 'CAD_ACCOUNT', {
      bankCode: Type.String({ pattern: '^[0-9]{3}$' }),
      branchCode: Type.String({ pattern: '^[0-9]{5}$' }),
      accountNumber: Type.String({ pattern: '^[0-9]{7,12}$' }),
      paymentRails: Type.Array(stringEnum(['BANK_TRANSFER'] as const)),
      reference: Reference,
    }),
    info('PaymentInrAccountInfo', 'INR_ACCOUNT', {
      vpa: Type.String({ description: 'UPI virtual payment address, unique to this account' }),
      paymentRails: Type.Array(stringEnum(['UPI'] as const)),
    }),
    info('PaymentNgnAccountInfo', 'NGN_ACCOUNT', {
      accountNumber: Type.String({ pattern: '^[0-9]{10}$' }),
      bankName: Type.String(),
      paymentRails: Type.Array(stringEnum(['BANK_TRANSFER'] as const)),
      reference: Reference,
    }),
    info('PaymentPhpAccountInfo', 'PHP_ACCOUNT', {
      bankName: Type.String(),
      accountNumber: Type.String({ pattern: '^[0-9]{8,16}$' }),
      paymentRails: Type.Array(stringEnum(['BANK_TRANSFER'] as const)),
      reference: Reference,
    }),
    info('PaymentSolanaWalletInfo', 'SOLANA_WALLET', {
      address: Type.String(),
      assetType: Type.Optional(stringEnum(['USDC', 'USDT'] as const)),
    }),
    info('PaymentTronWalletInfo', 'TRON_WALLET', {
      address: Type.String(),
      assetType: Type.Optional(stringEnum(['USDT'] as const)),
    }),
    info('PaymentSparkWalletInfo', 'SPARK_WALLET', {
      address: Type.String(),
      assetType: stringEnum(['BTC', 'USDB'] as const),
      invoice: Type.Optional(Type.String()),
    }),
  ],
  { description: 'Where to send the funds; `accountType` says which variant' },
);

export const PaymentInstructions = Type.Object(
  {
    accountOrWalletInfo: PaymentAccountOrWalletInfo,
    instructionsNotes: Type.Optional(
      Type.String({ description: 'Additional human-readable instructions for making the payment' }),
    ),
    isPlatformAccount: Type.Optional(
      Type.Boolean({ description: 'Whether the account belongs to the platform (not a customer)' }),
    ),
  },
  { $id: 'PaymentInstructions' },
);
export type PaymentInstructions = Static<typeof PaymentInstructions>;

export const InternalAccount = Type.Object(
  {
    id: Id('InternalAccount'),
    customerId: Type.Optional(
      Type.String({ description: 'The customer owning the account; absent for platform accounts' }),
    ),
    type: InternalAccountType,
    balance: Type.Object(
      {
        amount: Type.Integer({ description: 'posted balance in the smallest unit of the currency' }),
        currency: Currency,
      },
      { $id: 'CurrencyAmount' },
    ),
    fundingPaymentInstructions: Type.Array(PaymentInstructions, {
      description: 'How to fund the account (sandbox: simulated instructions; may be empty)',
    }),
    privateEnabled: Type.Optional(Type.Boolean({ description: 'Wallet privacy; EMBEDDED_WALLET only' })),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'InternalAccount' },
);
export type InternalAccountJson = Static<typeof InternalAccount>;

const TYPE_PREFIX = 'INTERNAL_ACCOUNT_TYPE_';

/** The public InternalAccount JSON of an accounts.v1 InternalAccount. */
export function internalAccountJson(a: accounts.InternalAccount): InternalAccountJson {
  const type = String(a.type).replace(TYPE_PREFIX, '') as InternalAccountTypeName;
  return {
    id: a.id,
    ...(a.customerId ? { customerId: a.customerId } : {}),
    type,
    balance: {
      amount: Number(a.balance?.amount ?? 0n),
      currency: a.balance?.currency ?? {
        code: a.currency,
        name: a.currency,
        symbol: a.currency,
        decimals: 0,
      },
    },
    fundingPaymentInstructions: a.fundingPaymentInstructions.map(paymentInstructionJson),
    ...(a.privateEnabled !== undefined ? { privateEnabled: a.privateEnabled } : {}),
    createdAt: iso(a.createdAt)!,
    updatedAt: iso(a.updatedAt)!,
  };
}

/** The REST PaymentInstructions of a proto FundingPaymentInstruction (internal accounts, quotes). */
export function paymentInstructionJson(i: accounts.FundingPaymentInstruction): PaymentInstructions {
  return {
    accountOrWalletInfo: accountOrWalletInfoJson(i.accountOrWalletInfo) as never,
    ...(i.instructionsNotes !== undefined ? { instructionsNotes: i.instructionsNotes } : {}),
    ...(i.isPlatformAccount !== undefined ? { isPlatformAccount: i.isPlatformAccount } : {}),
  };
}

function accountOrWalletInfoJson(info: accounts.PaymentAccountInfo | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!info) return out;
  for (const [k, v] of Object.entries(info)) {
    if (v === undefined) continue;
    if (k === 'paymentRails' && Array.isArray(v) && v.length === 0) continue;
    out[k] = v;
  }
  return out;
}
