import { Type, type Static } from '@sinclair/typebox';
import type { identity } from '@sluice/contracts';
import {
  BUSINESS_TYPES,
  CUSTOMER_TYPES,
  ENTITY_TYPES,
  MONTHLY_TRANSACTION_COUNTS,
  MONTHLY_TRANSACTION_VOLUMES,
  PURPOSES_OF_ACCOUNT,
  VERIFICATION_STATUSES,
} from '@sluice/core';
import { DateOnly, Id, Timestamp, bare, defined, iso } from '../schema.js';

/** The public Customer: an INDIVIDUAL or a BUSINESS (discriminated by `customerType`). */

function literals<T extends string>(values: readonly T[], id: string) {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    { $id: id },
  );
}

export const CountryCode = Type.String({
  pattern: '^[A-Z]{2}$',
  description: 'ISO 3166-1 alpha-2 country code',
});

export const KycStatus = literals(VERIFICATION_STATUSES, 'KycStatus');
export const KybStatus = literals(VERIFICATION_STATUSES, 'KybStatus');
export const CustomerType = literals(CUSTOMER_TYPES, 'CustomerType');

export const Address = Type.Object(
  {
    line1: Type.String({ minLength: 1, maxLength: 200 }),
    line2: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    city: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    state: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    postalCode: Type.String({ minLength: 1, maxLength: 20 }),
    country: CountryCode,
  },
  { $id: 'Address', additionalProperties: false },
);

const countries = Type.Array(CountryCode, { minItems: 1, maxItems: 250 });

/** The fields of a business's information (all optional but `legalName`). */
export const BusinessInfo = Type.Object(
  {
    legalName: Type.String({ minLength: 1, maxLength: 300 }),
    doingBusinessAs: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    country: Type.Optional(CountryCode),
    registrationNumber: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    incorporatedOn: Type.Optional(DateOnly),
    entityType: Type.Optional(literals(ENTITY_TYPES, 'EntityType')),
    taxId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    countriesOfOperation: Type.Optional(countries),
    businessType: Type.Optional(literals(BUSINESS_TYPES, 'BusinessType')),
    purposeOfAccount: Type.Optional(literals(PURPOSES_OF_ACCOUNT, 'PurposeOfAccount')),
    sourceOfFunds: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    expectedMonthlyTransactionCount: Type.Optional(
      literals(MONTHLY_TRANSACTION_COUNTS, 'ExpectedMonthlyTransactionCount'),
    ),
    expectedMonthlyTransactionVolume: Type.Optional(
      literals(MONTHLY_TRANSACTION_VOLUMES, 'ExpectedMonthlyTransactionVolume'),
    ),
    expectedRecipientJurisdictions: Type.Optional(countries),
  },
  { $id: 'BusinessInfo', additionalProperties: false },
);
export type BusinessInfo = Static<typeof BusinessInfo>;

const customerCommon = {
  id: Id('Customer'),
  platformCustomerId: Type.String(),
  umaAddress: Type.String({ description: 'UMA address (system generated when none was given)' }),
  region: Type.Optional(Type.String()),
  currencies: Type.Array(Type.String(), { description: 'currency codes enabled for the customer' }),
  email: Type.Optional(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  isDeleted: Type.Boolean(),
};

export const IndividualCustomer = Type.Object(
  {
    ...customerCommon,
    customerType: Type.Literal('INDIVIDUAL'),
    kycStatus: KycStatus,
    fullName: Type.Optional(Type.String()),
    birthDate: Type.Optional(DateOnly),
    nationality: Type.Optional(Type.String()),
    address: Type.Optional(Address),
  },
  { $id: 'IndividualCustomer', additionalProperties: false },
);

export const BusinessCustomer = Type.Object(
  {
    ...customerCommon,
    customerType: Type.Literal('BUSINESS'),
    kybStatus: KybStatus,
    address: Type.Optional(Address),
    businessInfo: Type.Optional(BusinessInfo),
  },
  { $id: 'BusinessCustomer', additionalProperties: false },
);

export const Customer = Type.Union([IndividualCustomer, BusinessCustomer], { $id: 'CustomerOneOf' });
export type Customer = Static<typeof Customer>;

/** Keeps the fields that are set (ts-proto leaves absent optional fields undefined). */

/** The public BusinessInfo of an identity.v1 BusinessInfo (empty lists left out). */
function businessInfoJson(b: identity.BusinessInfo): BusinessInfo {
  const { countriesOfOperation, expectedRecipientJurisdictions, ...rest } = b;
  // identity validated the enumerated values (entity type, business type, ...) when it stored them.
  return {
    ...(defined(rest) as Omit<BusinessInfo, 'countriesOfOperation' | 'expectedRecipientJurisdictions'>),
    ...(countriesOfOperation.length ? { countriesOfOperation } : {}),
    ...(expectedRecipientJurisdictions.length ? { expectedRecipientJurisdictions } : {}),
  };
}

/** The public Customer (IndividualCustomer or BusinessCustomer) of an identity.v1 Customer. */
export function customerJson(c: identity.Customer): Customer {
  const common = {
    id: c.id,
    platformCustomerId: c.platformCustomerId,
    umaAddress: c.umaAddress,
    currencies: c.currencies,
    createdAt: iso(c.createdAt)!,
    updatedAt: iso(c.updatedAt)!,
    isDeleted: c.isDeleted,
    ...(c.region ? { region: c.region } : {}),
    ...(c.email ? { email: c.email } : {}),
    ...(c.address ? { address: defined({ ...c.address }) } : {}),
  };
  if (bare(c.customerType, 'CUSTOMER_TYPE_') === 'INDIVIDUAL') {
    return {
      ...common,
      customerType: 'INDIVIDUAL',
      kycStatus: bare(c.kycStatus, 'VERIFICATION_STATUS_') as Static<typeof KycStatus>,
      ...(c.fullName ? { fullName: c.fullName } : {}),
      ...(c.birthDate ? { birthDate: c.birthDate } : {}),
      ...(c.nationality ? { nationality: c.nationality } : {}),
    };
  }
  return {
    ...common,
    customerType: 'BUSINESS',
    kybStatus: bare(c.kybStatus, 'VERIFICATION_STATUS_') as Static<typeof KybStatus>,
    ...(c.businessInfo ? { businessInfo: businessInfoJson(c.businessInfo) } : {}),
  };
}
