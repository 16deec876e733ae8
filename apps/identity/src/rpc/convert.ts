import type { PostalAddress } from '@sluice/core';
import { environmentToPb } from '@sluice/rpc';
import { identity as pb } from '@sluice/contracts';
import { idUuid } from '@sluice/core';
import type { BusinessInfo, Customer, CustomerType, VerificationStatus } from '../domain/customer.js';
import type {
  CurrencyConfig,
  CurrencyConfigInput,
  EmbeddedWalletConfig,
  EmbeddedWalletConfigInput,
} from '../domain/platform-config.js';
import type { Invitation } from '../domain/invitation.js';
import type { BulkImportJob } from '../domain/bulk-import.js';
import type { ApiToken, Platform, PlatformConfigView } from '../domain/platform.js';
import type { Permission } from '../domain/token.js';

// Proto enums are strings with the enum prefix (`ENVIRONMENT_SANDBOX`); the domain uses the bare name.
function bare<T extends string>(prefix: string, value: string): T | undefined {
  return value.startsWith(prefix) && !value.endsWith('_UNSPECIFIED')
    ? (value.slice(prefix.length) as T)
    : undefined;
}

export const permissionFromPb = (p: pb.Permission): Permission | undefined =>
  bare<Permission>('PERMISSION_', p);
export const permissionToPb = (p: Permission): pb.Permission => `PERMISSION_${p}` as pb.Permission;
export const customerTypeFromPb = (t: pb.CustomerType): CustomerType | undefined =>
  bare<CustomerType>('CUSTOMER_TYPE_', t);
export const customerTypeToPb = (t: CustomerType): pb.CustomerType => `CUSTOMER_TYPE_${t}` as pb.CustomerType;
const statusToPb = (s: VerificationStatus): pb.VerificationStatus =>
  `VERIFICATION_STATUS_${s}` as pb.VerificationStatus;
export const verificationStatusFromPb = (s: pb.VerificationStatus): VerificationStatus | undefined =>
  bare<VerificationStatus>('VERIFICATION_STATUS_', s);

export function platformToPb(p: Platform): pb.Platform {
  return { id: p.id, name: p.name, environment: environmentToPb(p.environment), createdAt: p.createdAt };
}

export function tokenToPb(t: ApiToken): pb.ApiToken {
  return {
    id: t.id,
    platformId: t.platformId,
    name: t.name,
    permissions: t.permissions.map(permissionToPb),
    clientId: t.id,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}

function currencyConfigToPb(c: CurrencyConfig): pb.CurrencyConfig {
  return {
    currencyCode: c.currencyCode,
    minAmount: c.minAmount,
    maxAmount: c.maxAmount,
    requiredCounterpartyFields: c.requiredCounterpartyFields.map((f) => ({
      name: f.name,
      mandatory: f.mandatory,
    })),
    enabledTransactionTypes: c.enabledTransactionTypes.map(
      (t) => `TRANSACTION_TYPE_${t}` as pb.TransactionType,
    ),
    ...(c.incomingPaymentApprovalThreshold !== undefined
      ? { incomingPaymentApprovalThreshold: c.incomingPaymentApprovalThreshold }
      : {}),
  };
}

export function currencyConfigFromPb(c: pb.CurrencyConfig): CurrencyConfigInput {
  const input: CurrencyConfigInput = {
    currencyCode: c.currencyCode,
    requiredCounterpartyFields: c.requiredCounterpartyFields.map((f) => ({
      name: f.name,
      mandatory: f.mandatory,
    })),
    enabledTransactionTypes: c.enabledTransactionTypes.map((t) => bare<string>('TRANSACTION_TYPE_', t)),
  };
  if (c.minAmount !== undefined) input.minAmount = c.minAmount;
  if (c.maxAmount !== undefined) input.maxAmount = c.maxAmount;
  if (c.incomingPaymentApprovalThreshold !== undefined)
    input.incomingPaymentApprovalThreshold = c.incomingPaymentApprovalThreshold;
  return input;
}

function embeddedWalletToPb(w: EmbeddedWalletConfig): pb.EmbeddedWalletConfig {
  return {
    currencies: [...w.currencies],
    appName: w.appName,
    otpLength: w.otpLength,
    passkey: w.passkey ? { rpId: w.passkey.rpId, origins: [...w.passkey.origins] } : undefined,
    oidcIssuers: w.oidcIssuers.map((i) => ({
      issuer: i.issuer,
      jwksUri: i.jwksUri,
      audiences: [...i.audiences],
    })),
  };
}

export function embeddedWalletFromPb(w: pb.EmbeddedWalletConfig): EmbeddedWalletConfigInput {
  const input: EmbeddedWalletConfigInput = {
    currencies: [...w.currencies],
    otpLength: w.otpLength,
    oidcIssuers: w.oidcIssuers.map((i) => ({
      issuer: i.issuer,
      jwksUri: i.jwksUri,
      audiences: [...i.audiences],
    })),
  };
  if (w.appName !== undefined) input.appName = w.appName;
  if (w.passkey) input.passkey = { rpId: w.passkey.rpId, origins: [...w.passkey.origins] };
  return input;
}

export function configToPb(v: PlatformConfigView): pb.PlatformConfig {
  return {
    id: `PlatformConfig:${idUuid(v.platformId)}`,
    platformId: v.platformId,
    environment: environmentToPb(v.environment),
    umaDomain: v.settings.umaDomain,
    webhookEndpoint: v.settings.webhookEndpoint,
    supportedCurrencies: v.settings.supportedCurrencies.map(currencyConfigToPb),
    embeddedWalletConfig: v.settings.embeddedWalletConfig
      ? embeddedWalletToPb(v.settings.embeddedWalletConfig)
      : undefined,
    webhookSigningSecret: v.webhookSigningSecret,
    previousWebhookSigningSecretExpiresAt: v.previousWebhookSigningSecretExpiresAt,
    webhookEndpointDisabledAt: v.webhookEndpointDisabled?.at,
    webhookEndpointDisabledReason: v.webhookEndpointDisabled?.reason,
    kycLinkUrlTemplate: v.settings.kycLinkUrlTemplate,
    isRegulatedFinancialInstitution: v.isRegulatedFinancialInstitution,
    createdAt: v.createdAt,
    updatedAt: v.updatedAt,
  };
}

function businessInfoToPb(b: BusinessInfo): pb.BusinessInfo {
  return {
    ...b,
    countriesOfOperation: b.countriesOfOperation ?? [],
    expectedRecipientJurisdictions: b.expectedRecipientJurisdictions ?? [],
  };
}

/** Proto BusinessInfo to domain: absent optionals and empty lists mean "not given". */
export function businessInfoFromPb(b: pb.BusinessInfo): BusinessInfo {
  const out: BusinessInfo = {};
  for (const [k, v] of Object.entries(b)) {
    if (v === undefined || (Array.isArray(v) && v.length === 0)) continue;
    (out as Record<string, unknown>)[k] = Array.isArray(v) ? [...(v as string[])] : v;
  }
  return out;
}

export function addressFromPb(a: pb.Address): PostalAddress {
  const out: PostalAddress = { line1: a.line1, postalCode: a.postalCode, country: a.country };
  if (a.line2 !== undefined) out.line2 = a.line2;
  if (a.city !== undefined) out.city = a.city;
  if (a.state !== undefined) out.state = a.state;
  return out;
}

export function customerToPb(c: Customer): pb.Customer {
  const unspecified = pb.VerificationStatus.UNSPECIFIED;
  return {
    id: c.id,
    platformId: c.platformId,
    platformCustomerId: c.platformCustomerId,
    customerType: customerTypeToPb(c.customerType),
    region: c.region,
    currencies: [...c.currencies],
    email: c.email,
    umaAddress: c.umaAddress,
    kycStatus: c.customerType === 'INDIVIDUAL' ? statusToPb(c.verificationStatus) : unspecified,
    kybStatus: c.customerType === 'BUSINESS' ? statusToPb(c.verificationStatus) : unspecified,
    fullName: c.fullName,
    birthDate: c.birthDate,
    nationality: c.nationality,
    address: c.address ? { ...c.address } : undefined,
    businessInfo: c.businessInfo ? businessInfoToPb(c.businessInfo) : undefined,
    isDeleted: c.deletedAt !== undefined,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    deletedAt: c.deletedAt,
  };
}

export function invitationToPb(i: Invitation): pb.Invitation {
  return {
    code: i.code,
    platformId: i.platformId,
    inviterCustomerId: i.inviterCustomerId,
    inviterUma: i.inviterUma,
    inviteeUma: i.inviteeUma,
    status: `INVITATION_STATUS_${i.status}` as pb.InvitationStatus,
    url: i.url,
    firstName: i.firstName,
    amountToSend: i.amountToSend?.amount,
    amountCurrency: i.amountToSend?.currency,
    expiresAt: i.expiresAt,
    claimedAt: i.claimedAt,
    createdAt: i.createdAt,
  };
}

export function bulkImportJobToPb(j: BulkImportJob): pb.BulkImportJob {
  return {
    id: j.id,
    platformId: j.platformId,
    status: `BULK_IMPORT_JOB_STATUS_${j.status}` as pb.BulkImportJobStatus,
    total: j.total,
    processed: j.processed,
    successful: j.successful,
    failed: j.failed,
    errors: j.errors.map((e) => ({
      correlationId: e.correlationId,
      code: e.code,
      message: e.message,
      row: e.row,
      line: e.line,
      errors: e.errors.map(({ field, message }) => ({ field, message })),
      ...(e.customerId !== undefined ? { customerId: e.customerId } : {}),
    })),
    createdAt: j.createdAt,
    ...(j.completedAt ? { completedAt: j.completedAt } : {}),
  };
}
