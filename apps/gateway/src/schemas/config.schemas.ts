import { named } from './common.js';
import { CUSTOMER_INFO_FIELDS, MAX_AMOUNT, TRANSACTION_TYPES } from '@sluice/core';
import { Type } from '@sinclair/typebox';
import { Timestamp } from '@sluice/api';

/** REST schemas of `/config`. */

/** An amount limit of a currency: 0 to MAX_AMOUNT in the smallest unit. */
const AmountLimit = (description: string) =>
  Type.Integer({ minimum: 0, maximum: Number(MAX_AMOUNT), description });

export const CustomerInfoFieldName = Type.Union(
  CUSTOMER_INFO_FIELDS.map((v) => Type.Literal(v)),
  { $id: 'CustomerInfoFieldName' },
);

const TransactionType = Type.Union(
  TRANSACTION_TYPES.map((v) => Type.Literal(v)),
  {
    $id: 'TransactionType',
  },
);

const CounterpartyFieldDefinition = Type.Object(
  { name: CustomerInfoFieldName, mandatory: Type.Boolean() },
  { $id: 'CounterpartyFieldDefinition', additionalProperties: false },
);

/** Sluice's own: incoming payments below it are approved without the approval webhook (docs/webhooks.md). */
const INCOMING_APPROVAL_THRESHOLD = AmountLimit(
  'incoming payments in this currency below this amount (smallest unit) are approved without asking the platform; absent: every incoming payment asks through the INCOMING_PAYMENT.PENDING webhook',
);

export const PlatformCurrencyConfig = Type.Object(
  {
    currencyCode: Type.String({ description: 'ISO 4217 code or stablecoin code (USDC)' }),
    minAmount: AmountLimit('smallest amount that can be sent, in the smallest unit'),
    maxAmount: AmountLimit('largest amount that can be sent, in the smallest unit'),
    requiredCounterpartyFields: Type.Array(CounterpartyFieldDefinition),
    enabledTransactionTypes: Type.Array(TransactionType),
    incomingPaymentApprovalThreshold: Type.Optional(INCOMING_APPROVAL_THRESHOLD),
  },
  { $id: 'PlatformCurrencyConfig', additionalProperties: false },
);

/** A supported currency in an update: only the code is required. */
export const PlatformCurrencyConfigInput = Type.Object(
  {
    currencyCode: Type.String({
      minLength: 1,
      maxLength: 10,
      description: 'ISO 4217 code or stablecoin code (USDC)',
    }),
    minAmount: Type.Optional(AmountLimit('default 0')),
    maxAmount: Type.Optional(AmountLimit(`default ${MAX_AMOUNT}`)),
    requiredCounterpartyFields: Type.Optional(
      Type.Array(CounterpartyFieldDefinition, { maxItems: 18, description: 'default none' }),
    ),
    enabledTransactionTypes: Type.Optional(
      Type.Array(TransactionType, { minItems: 1, maxItems: 2, description: 'default INCOMING and OUTGOING' }),
    ),
    incomingPaymentApprovalThreshold: Type.Optional(INCOMING_APPROVAL_THRESHOLD),
  },
  { additionalProperties: false },
);

const PasskeyConfig = Type.Object(
  {
    rpId: Type.String({
      minLength: 1,
      maxLength: 253,
      description: 'WebAuthn relying party id, a domain such as example.com',
    }),
    origins: Type.Array(Type.String({ maxLength: 2048 }), {
      minItems: 1,
      maxItems: 20,
      description: 'allowed origins (https, within rpId)',
    }),
  },
  { additionalProperties: false },
);

const OidcIssuer = Type.Object(
  {
    issuer: Type.String({
      minLength: 1,
      maxLength: 512,
      description: 'the `iss` of accepted OIDC tokens (https)',
    }),
    jwksUri: Type.String({ minLength: 1, maxLength: 2048, description: 'https URL of the issuer key set' }),
    audiences: Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
      minItems: 1,
      maxItems: 20,
      description: 'accepted `aud` values',
    }),
  },
  { additionalProperties: false },
);

export const EmbeddedWalletConfig = Type.Object(
  {
    currencies: Type.Array(Type.String(), {
      description: 'stablecoins embedded wallets hold (within supportedCurrencies)',
    }),
    appName: Type.Optional(Type.String({ description: 'shown to wallet holders (e.g. in OTP emails)' })),
    otpLength: Type.Integer({ description: 'digits of email one-time passwords' }),
    passkey: Type.Optional(PasskeyConfig),
    oidcIssuers: Type.Array(OidcIssuer),
  },
  { $id: 'EmbeddedWalletConfig', additionalProperties: false },
);

export const EmbeddedWalletConfigInput = Type.Object(
  {
    currencies: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 10 }), { maxItems: 20, description: 'default none' }),
    ),
    appName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    otpLength: Type.Optional(Type.Integer({ minimum: 4, maximum: 10, description: 'default 6' })),
    passkey: Type.Optional(PasskeyConfig),
    oidcIssuers: Type.Optional(Type.Array(OidcIssuer, { maxItems: 10, description: 'default none' })),
  },
  { additionalProperties: false },
);

export const PlatformConfig = Type.Object(
  {
    id: Type.String({ description: 'PlatformConfig:<uuid>' }),
    umaDomain: Type.Optional(Type.String()),
    webhookEndpoint: Type.Optional(Type.String()),
    webhookEndpointDisabledAt: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'Sluice’s own: when webhooks stopped going to webhookEndpoint because it answered 410 Gone or failed every attempt for too long (WEBHOOK_ENDPOINT.DISABLED in the delivery log). Set webhookEndpoint again (PATCH /config) to enable it.',
      }),
    ),
    webhookEndpointDisabledReason: Type.Optional(
      Type.String({ description: 'why the endpoint was disabled' }),
    ),
    supportedCurrencies: Type.Array(PlatformCurrencyConfig),
    kycLinkUrlTemplate: Type.Optional(
      Type.String({
        description:
          'Sluice’s own: where the hosted KYC links of POST /customers/{customerId}/kyc-link point, with {token} (and optionally {customerId}, {redirectUri}) filled in per link. Absent: sandbox links point at the deployment’s stub page; production links are refused (400 KYC_LINK_NOT_CONFIGURED).',
      }),
    ),
    isRegulatedFinancialInstitution: Type.Boolean(),
    embeddedWalletConfig: Type.Optional(EmbeddedWalletConfig),
    webhookSigningSecret: Type.Optional(
      Type.String({
        description:
          'Standard Webhooks secret (`whsec_…`) that signs webhooks; verify `webhook-signature` with it. Shown to tokens with the MANAGE permission. Rotate with POST /config/webhook-secret/rotate.',
      }),
    ),
    previousWebhookSigningSecretExpiresAt: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'after a rotation: until when webhooks are also signed with the previous secret',
      }),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'PlatformConfig', additionalProperties: false },
);

export const PlatformConfigUpdateRequest = named('PlatformConfigUpdateRequest', Type.Object(
  {
    umaDomain: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 253 }), Type.Null()], {
        description: 'null removes it',
      }),
    ),
    webhookEndpoint: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 2048 }), Type.Null()], {
        description: 'absolute http(s) URL; null removes it',
      }),
    ),
    kycLinkUrlTemplate: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 2048 }), Type.Null()], {
        description:
          'Sluice’s own: the hosted KYC link pattern, an absolute https URL containing {token}; it may also contain {customerId} and {redirectUri} (in the path, query or fragment; http only for localhost on a sandbox platform); null removes it',
      }),
    ),
    supportedCurrencies: Type.Optional(
      Type.Array(PlatformCurrencyConfigInput, {
        minItems: 1,
        maxItems: 50,
        description: 'replaces the list',
      }),
    ),
    embeddedWalletConfig: Type.Optional(
      Type.Union([EmbeddedWalletConfigInput, Type.Null()], { description: 'replaces it; null removes it' }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
));
