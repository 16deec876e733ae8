import { ArrayType, BlobType, EntitySchema } from '@mikro-orm/core';
import type { PostalAddress } from '@sluice/core';
import type { BusinessInfo, CustomerType, VerificationStatus } from '../domain/customer.js';
import type { CustomerInfoField, EmbeddedWalletConfig, TransactionType } from '../domain/platform-config.js';
import type { Permission } from '../domain/token.js';

/**
 * One row type and one EntitySchema per table (mapped by `mappers.ts`). Columns
 * hold what the mappers wrote from validated domain values, so enum-like text
 * columns are typed with their domain unions and jsonb columns with their domain
 * shapes.
 */

/** Row of `platforms`. */
export class PlatformRecord {
  id!: string;
  name!: string;
  environment!: 'SANDBOX' | 'PRODUCTION';
  createdAt!: Date;
  updatedAt!: Date;
}

export const PlatformEntity = new EntitySchema<PlatformRecord>({
  class: PlatformRecord,
  tableName: 'platforms',
  properties: {
    id: { type: 'string', primary: true },
    name: { type: 'string' },
    environment: { type: 'string' },
    createdAt: { type: 'datetime' },
    updatedAt: { type: 'datetime' },
  },
});

/** Stored JSON of a supported currency (amounts as decimal strings: JSON has no int64). */
export interface CurrencyConfigJson {
  currencyCode: string;
  minAmount: string;
  maxAmount: string;
  requiredCounterpartyFields: { name: CustomerInfoField; mandatory: boolean }[];
  enabledTransactionTypes: TransactionType[];
  /** Decimal string; absent when not set. */
  incomingPaymentApprovalThreshold?: string;
}

/** Row of `platform_configs` (one per platform). */
export class PlatformConfigRecord {
  platformId!: string;
  umaDomain?: string | null;
  webhookEndpoint?: string | null;
  supportedCurrencies!: CurrencyConfigJson[];
  /** jsonb: the validated domain value (plain JSON: no bigints). */
  embeddedWalletConfig?: EmbeddedWalletConfig | null;
  isRegulatedFinancialInstitution!: boolean;
  webhookEndpointDisabledAt?: Date | null;
  webhookEndpointDisabledReason?: string | null;
  kycLinkUrlTemplate?: string | null;
  createdAt!: Date;
  updatedAt!: Date;
}

export const PlatformConfigEntity = new EntitySchema<PlatformConfigRecord>({
  class: PlatformConfigRecord,
  tableName: 'platform_configs',
  properties: {
    platformId: { type: 'string', primary: true },
    umaDomain: { type: 'string', nullable: true },
    webhookEndpoint: { type: 'string', nullable: true },
    supportedCurrencies: { type: 'json' },
    embeddedWalletConfig: { type: 'json', nullable: true },
    isRegulatedFinancialInstitution: { type: 'boolean' },
    webhookEndpointDisabledAt: { type: 'datetime', nullable: true },
    webhookEndpointDisabledReason: { type: 'string', nullable: true },
    kycLinkUrlTemplate: { type: 'string', nullable: true },
    createdAt: { type: 'datetime' },
    updatedAt: { type: 'datetime' },
  },
});

/** Row of `webhook_signing_secrets`: the current secret has no expiry. */
export class WebhookSecretRecord {
  id!: string;
  platformId!: string;
  /** Sealed (sealing.ts); `whsec_...` as is on rows written before sealing. */
  secret!: string;
  createdAt!: Date;
  expiresAt?: Date | null;
}

export const WebhookSecretEntity = new EntitySchema<WebhookSecretRecord>({
  class: WebhookSecretRecord,
  tableName: 'webhook_signing_secrets',
  properties: {
    id: { type: 'string', primary: true },
    platformId: { type: 'string' },
    secret: { type: 'string' },
    createdAt: { type: 'datetime' },
    expiresAt: { type: 'datetime', nullable: true },
  },
});

/** Row of `api_tokens`: only the SHA-256 of the client secret is kept. */
export class ApiTokenRecord {
  id!: string;
  platformId!: string;
  name!: string;
  permissions!: Permission[];
  secretHash!: Buffer;
  createdAt!: Date;
  updatedAt!: Date;
  deletedAt?: Date | null;
}

export const ApiTokenEntity = new EntitySchema<ApiTokenRecord>({
  class: ApiTokenRecord,
  tableName: 'api_tokens',
  properties: {
    id: { type: 'string', primary: true },
    platformId: { type: 'string' },
    name: { type: 'string' },
    permissions: { type: ArrayType },
    secretHash: { type: BlobType },
    createdAt: { type: 'datetime' },
    updatedAt: { type: 'datetime' },
    deletedAt: { type: 'datetime', nullable: true },
  },
});

/** Row of `customers`. */
export class CustomerRecord {
  id!: string;
  platformId!: string;
  platformCustomerId!: string;
  customerType!: CustomerType;
  region?: string | null;
  currencies!: string[];
  email?: string | null;
  /** Rows written before the UMA address was sealed only (null once sealed). */
  umaAddress?: string | null;
  /** The UMA address sealed (sealing.ts); null on rows written before. */
  sealedUmaAddress?: string | null;
  /** Blind index of the UMA address (sealing.ts `umaAddressIndexes`), unique among live customers; null on rows written before. */
  umaAddressIndex?: string | null;
  verificationStatus!: VerificationStatus;
  fullName?: string | null;
  birthDate?: string | null;
  nationality?: string | null;
  /** jsonb, as validated by the domain. */
  address?: PostalAddress | null;
  /** jsonb, as validated by the domain. */
  businessInfo?: BusinessInfo | null;
  /** The personal fields sealed (sealing.ts); null on rows written before sealing. */
  personalData?: string | null;
  createdAt!: Date;
  updatedAt!: Date;
  deletedAt?: Date | null;
  /** Idempotency key of the request that created the customer. */
  requestKey?: string | null;
}

export const CustomerEntity = new EntitySchema<CustomerRecord>({
  class: CustomerRecord,
  tableName: 'customers',
  properties: {
    id: { type: 'string', primary: true },
    platformId: { type: 'string' },
    platformCustomerId: { type: 'string' },
    customerType: { type: 'string' },
    region: { type: 'string', nullable: true },
    currencies: { type: ArrayType },
    email: { type: 'string', nullable: true },
    umaAddress: { type: 'string', nullable: true },
    sealedUmaAddress: { type: 'text', nullable: true },
    umaAddressIndex: { type: 'string', nullable: true },
    verificationStatus: { type: 'string' },
    fullName: { type: 'string', nullable: true },
    birthDate: { type: 'date', nullable: true },
    nationality: { type: 'string', nullable: true },
    address: { type: 'json', nullable: true },
    businessInfo: { type: 'json', nullable: true },
    personalData: { type: 'text', nullable: true },
    createdAt: { type: 'datetime' },
    updatedAt: { type: 'datetime' },
    deletedAt: { type: 'datetime', nullable: true },
    requestKey: { type: 'string', nullable: true },
  },
});

export const entities = [
  PlatformEntity,
  PlatformConfigEntity,
  WebhookSecretEntity,
  ApiTokenEntity,
  CustomerEntity,
];
