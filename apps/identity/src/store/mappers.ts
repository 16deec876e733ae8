import type { MasterKeyring } from '@sluice/crypto';
import type { Customer } from '../domain/customer.js';
import type { CurrencyConfig, PlatformSettings } from '../domain/platform-config.js';
import type { Platform, PlatformConfig, StoredToken } from '../domain/platform.js';
import type { SigningSecret } from '../domain/webhook-secret.js';
import type {
  ApiTokenRecord,
  CurrencyConfigJson,
  CustomerRecord,
  PlatformConfigRecord,
  PlatformRecord,
  WebhookSecretRecord,
} from './entities.js';
import {
  openPersonalData,
  openUmaAddress,
  openWebhookSecret,
  personalDataOf,
  sealPersonalData,
  sealUmaAddress,
  sealWebhookSecret,
  umaAddressIndexes,
  type PersonalData,
} from './sealing.js';

/**
 * One mapper per table, between its row (`entities.ts`) and the domain: `<x>FromRow`
 * reads a row, `<x>ToRow` writes one.
 */

// platforms

export function platformFromRow(r: PlatformRecord): Platform {
  return { id: r.id, name: r.name, environment: r.environment, createdAt: r.createdAt };
}

/** A platform never changes after its creation: updated_at stays created_at. */
export function platformToRow(p: Platform): PlatformRecord {
  return {
    id: p.id,
    name: p.name,
    environment: p.environment,
    createdAt: p.createdAt,
    updatedAt: p.createdAt,
  };
}

// platform_configs

export function platformConfigFromRow(r: PlatformConfigRecord): PlatformConfig {
  const settings: PlatformSettings = {
    supportedCurrencies: r.supportedCurrencies.map((c): CurrencyConfig => ({
      currencyCode: c.currencyCode,
      minAmount: BigInt(c.minAmount),
      maxAmount: BigInt(c.maxAmount),
      requiredCounterpartyFields: c.requiredCounterpartyFields.map((f) => ({
        name: f.name,
        mandatory: f.mandatory,
      })),
      enabledTransactionTypes: [...c.enabledTransactionTypes],
      ...(c.incomingPaymentApprovalThreshold !== undefined
        ? { incomingPaymentApprovalThreshold: BigInt(c.incomingPaymentApprovalThreshold) }
        : {}),
    })),
  };
  if (r.umaDomain) settings.umaDomain = r.umaDomain;
  if (r.webhookEndpoint) settings.webhookEndpoint = r.webhookEndpoint;
  if (r.embeddedWalletConfig) settings.embeddedWalletConfig = r.embeddedWalletConfig;
  if (r.kycLinkUrlTemplate) settings.kycLinkUrlTemplate = r.kycLinkUrlTemplate;
  return {
    platformId: r.platformId,
    settings,
    ...(r.webhookEndpointDisabledAt
      ? {
          webhookEndpointDisabled: {
            at: r.webhookEndpointDisabledAt,
            reason: r.webhookEndpointDisabledReason ?? '',
          },
        }
      : {}),
    isRegulatedFinancialInstitution: r.isRegulatedFinancialInstitution,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export function platformConfigToRow(c: PlatformConfig): PlatformConfigRecord {
  const s = c.settings;
  return {
    platformId: c.platformId,
    umaDomain: s.umaDomain ?? null,
    webhookEndpoint: s.webhookEndpoint ?? null,
    supportedCurrencies: s.supportedCurrencies.map((cc): CurrencyConfigJson => ({
      currencyCode: cc.currencyCode,
      minAmount: cc.minAmount.toString(),
      maxAmount: cc.maxAmount.toString(),
      requiredCounterpartyFields: cc.requiredCounterpartyFields.map((f) => ({
        name: f.name,
        mandatory: f.mandatory,
      })),
      enabledTransactionTypes: [...cc.enabledTransactionTypes],
      ...(cc.incomingPaymentApprovalThreshold !== undefined
        ? { incomingPaymentApprovalThreshold: cc.incomingPaymentApprovalThreshold.toString() }
        : {}),
    })),
    embeddedWalletConfig: s.embeddedWalletConfig ? structuredClone(s.embeddedWalletConfig) : null,
    webhookEndpointDisabledAt: c.webhookEndpointDisabled?.at ?? null,
    webhookEndpointDisabledReason: c.webhookEndpointDisabled?.reason ?? null,
    kycLinkUrlTemplate: s.kycLinkUrlTemplate ?? null,
    isRegulatedFinancialInstitution: c.isRegulatedFinancialInstitution,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
}

// webhook_signing_secrets

export function signingSecretFromRow(r: WebhookSecretRecord, keyring: MasterKeyring): SigningSecret {
  return {
    secret: openWebhookSecret(keyring, r.platformId, r.id, r.secret),
    createdAt: r.createdAt,
    ...(r.expiresAt ? { expiresAt: r.expiresAt } : {}),
  };
}

/** The row of a signing secret: the secret sealed, bound to the platform and the row. */
export function signingSecretToRow(
  id: string,
  platformId: string,
  s: SigningSecret,
  keyring: MasterKeyring,
): WebhookSecretRecord {
  return {
    id,
    platformId,
    secret: sealWebhookSecret(keyring, platformId, id, s.secret),
    createdAt: s.createdAt,
    expiresAt: s.expiresAt ?? null,
  };
}

// api_tokens

export function tokenFromRow(r: ApiTokenRecord): StoredToken {
  return {
    id: r.id,
    platformId: r.platformId,
    name: r.name,
    permissions: [...r.permissions],
    secretHash: r.secretHash,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    ...(r.deletedAt ? { deletedAt: r.deletedAt } : {}),
  };
}

export function tokenToRow(t: StoredToken): ApiTokenRecord {
  return {
    id: t.id,
    platformId: t.platformId,
    name: t.name,
    permissions: [...t.permissions],
    secretHash: t.secretHash,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    deletedAt: t.deletedAt ?? null,
  };
}

// customers

/**
 * A customer from its row: the personal fields opened from `personal_data` and the UMA address
 * from `sealed_uma_address`, or read from their own columns on a row written before sealing (the
 * `rewrap` command seals those).
 */
export function customerFromRow(r: CustomerRecord, keyring: MasterKeyring): Customer {
  const c: Customer = {
    id: r.id,
    platformId: r.platformId,
    platformCustomerId: r.platformCustomerId,
    customerType: r.customerType,
    currencies: [...r.currencies],
    umaAddress: r.sealedUmaAddress ? openUmaAddress(keyring, r.id, r.sealedUmaAddress) : r.umaAddress!,
    verificationStatus: r.verificationStatus,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
  if (r.region) c.region = r.region;
  if (r.deletedAt) c.deletedAt = r.deletedAt;
  const personal = r.personalData ? openPersonalData(keyring, r.id, r.personalData) : legacyPersonalData(r);
  return { ...c, ...personalDataOf(personal) };
}

/** The personal fields of a row written before sealing (their own plaintext columns; rewrap.ts seals the same). */
function legacyPersonalData(
  r: Pick<CustomerRecord, 'email' | 'fullName' | 'birthDate' | 'nationality' | 'address' | 'businessInfo'>,
): PersonalData {
  return {
    ...(r.email ? { email: r.email } : {}),
    ...(r.fullName ? { fullName: r.fullName } : {}),
    ...(r.birthDate ? { birthDate: r.birthDate } : {}),
    ...(r.nationality ? { nationality: r.nationality } : {}),
    ...(r.address ? { address: r.address } : {}),
    ...(r.businessInfo ? { businessInfo: r.businessInfo } : {}),
  };
}

/**
 * The row of a customer, its personal fields sealed in `personal_data` and its UMA address in
 * `sealed_uma_address` beside its blind index under the current key (their own columns stay
 * null); `requestKey` is the Idempotency-Key of the request that created it.
 */
export function customerToRow(c: Customer, keyring: MasterKeyring, requestKey: string | null = null): CustomerRecord {
  return {
    id: c.id,
    platformId: c.platformId,
    platformCustomerId: c.platformCustomerId,
    customerType: c.customerType,
    region: c.region ?? null,
    currencies: [...c.currencies],
    email: null,
    umaAddress: null,
    sealedUmaAddress: sealUmaAddress(keyring, c.id, c.umaAddress),
    umaAddressIndex: umaAddressIndexes(keyring, c.umaAddress)[0],
    verificationStatus: c.verificationStatus,
    fullName: null,
    birthDate: null,
    nationality: null,
    address: null,
    businessInfo: null,
    personalData: sealPersonalData(keyring, c.id, c),
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    deletedAt: c.deletedAt ?? null,
    requestKey,
  };
}
