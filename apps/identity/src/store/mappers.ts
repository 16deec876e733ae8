import type {
  Customer,
  CustomerType,
  VerificationStatus,
  Address,
  BusinessInfo,
} from '../domain/customer.js';
import type {
  CurrencyConfig,
  EmbeddedWalletConfig,
  PlatformSettings,
  TransactionType,
  CustomerInfoField,
} from '../domain/platform-config.js';
import type { ApiToken, Platform } from '../domain/platform.js';
import type { Permission } from '../domain/token.js';
import type {
  ApiTokenRecord,
  CurrencyConfigJson,
  CustomerRecord,
  PlatformConfigRecord,
  PlatformRecord,
} from './entities.js';

export function platformFromRecord(r: PlatformRecord): Platform {
  return { id: r.id, name: r.name, environment: r.environment, createdAt: r.createdAt };
}

export function settingsFromRecord(r: PlatformConfigRecord): PlatformSettings {
  const s: PlatformSettings = {
    supportedCurrencies: r.supportedCurrencies.map((c): CurrencyConfig => ({
      currencyCode: c.currencyCode,
      minAmount: BigInt(c.minAmount),
      maxAmount: BigInt(c.maxAmount),
      requiredCounterpartyFields: c.requiredCounterpartyFields.map((f) => ({
        name: f.name as CustomerInfoField,
        mandatory: f.mandatory,
      })),
      enabledTransactionTypes: c.enabledTransactionTypes as TransactionType[],
    })),
  };
  if (r.umaDomain) s.umaDomain = r.umaDomain;
  if (r.webhookEndpoint) s.webhookEndpoint = r.webhookEndpoint;
  if (r.embeddedWalletConfig)
    s.embeddedWalletConfig = r.embeddedWalletConfig as unknown as EmbeddedWalletConfig;
  return s;
}

/** The columns of `platform_configs` a settings change writes. */
export function settingsToRecord(
  s: PlatformSettings,
): Pick<
  PlatformConfigRecord,
  'umaDomain' | 'webhookEndpoint' | 'supportedCurrencies' | 'embeddedWalletConfig'
> {
  return {
    umaDomain: s.umaDomain ?? null,
    webhookEndpoint: s.webhookEndpoint ?? null,
    supportedCurrencies: s.supportedCurrencies.map((c): CurrencyConfigJson => ({
      currencyCode: c.currencyCode,
      minAmount: c.minAmount.toString(),
      maxAmount: c.maxAmount.toString(),
      requiredCounterpartyFields: c.requiredCounterpartyFields.map((f) => ({
        name: f.name,
        mandatory: f.mandatory,
      })),
      enabledTransactionTypes: [...c.enabledTransactionTypes],
    })),
    embeddedWalletConfig: s.embeddedWalletConfig
      ? (JSON.parse(JSON.stringify(s.embeddedWalletConfig)) as Record<string, unknown>)
      : null,
  };
}

export function tokenFromRecord(r: ApiTokenRecord): ApiToken {
  return {
    id: r.id,
    platformId: r.platformId,
    name: r.name,
    permissions: r.permissions as Permission[],
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export function customerFromRecord(r: CustomerRecord): Customer {
  const c: Customer = {
    id: r.id,
    platformId: r.platformId,
    platformCustomerId: r.platformCustomerId,
    customerType: r.customerType as CustomerType,
    currencies: [...r.currencies],
    umaAddress: r.umaAddress,
    verificationStatus: r.verificationStatus as VerificationStatus,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
  if (r.region) c.region = r.region;
  if (r.email) c.email = r.email;
  if (r.fullName) c.fullName = r.fullName;
  if (r.birthDate) c.birthDate = r.birthDate;
  if (r.nationality) c.nationality = r.nationality;
  if (r.address) c.address = r.address as unknown as Address;
  if (r.businessInfo) c.businessInfo = r.businessInfo as unknown as BusinessInfo;
  if (r.deletedAt) c.deletedAt = r.deletedAt;
  return c;
}

/** Writes a customer's mutable fields onto its row. */
export function customerToRecord(c: Customer, r: CustomerRecord): void {
  r.currencies = [...c.currencies];
  r.email = c.email ?? null;
  r.umaAddress = c.umaAddress;
  r.verificationStatus = c.verificationStatus;
  r.fullName = c.fullName ?? null;
  r.birthDate = c.birthDate ?? null;
  r.nationality = c.nationality ?? null;
  r.address = c.address ? { ...c.address } : null;
  r.businessInfo = c.businessInfo ? { ...c.businessInfo } : null;
  r.updatedAt = c.updatedAt;
  r.deletedAt = c.deletedAt ?? null;
}
