import { CUSTOMER_TYPES, VERIFICATION_STATUSES, ENTITY_TYPES, BUSINESS_TYPES, PURPOSES_OF_ACCOUNT, MONTHLY_TRANSACTION_COUNTS, MONTHLY_TRANSACTION_VOLUMES } from '@sluice/core';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { DateOnly, Id, PageQuery, Timestamp } from './common.js';

/** REST schemas of `/customers` (individual and business variants, discriminated by customerType). */

const CountryCode = Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2 country code' });
const CurrencyCode = Type.String({
  minLength: 1,
  maxLength: 10,
  description: 'currency code (USD, EUR, USDC, ...)',
});
const UmaAddress = Type.String({ minLength: 4, maxLength: 320, description: 'UMA address `$user@domain`' });

function literals(values: readonly string[], id: string) {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    { $id: id },
  );
}

export const KycStatus = literals(VERIFICATION_STATUSES, 'KycStatus');
export const KybStatus = literals(VERIFICATION_STATUSES, 'KybStatus');
const CustomerTypeSchema = literals(CUSTOMER_TYPES, 'CustomerType');

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

const businessInfoFields = {
  legalName: Type.String({ minLength: 1, maxLength: 300 }),
  doingBusinessAs: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
  country: Type.Optional(CountryCode),
  registrationNumber: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  incorporatedOn: Type.Optional(DateOnly),
  entityType: Type.Optional(
    literals(ENTITY_TYPES, 'EntityType'),
  ),
  taxId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  countriesOfOperation: Type.Optional(Type.Array(CountryCode, { minItems: 1, maxItems: 250 })),
  businessType: Type.Optional(
    literals(BUSINESS_TYPES, 'BusinessType'),
  ),
  purposeOfAccount: Type.Optional(
    literals(PURPOSES_OF_ACCOUNT, 'PurposeOfAccount'),
  ),
  sourceOfFunds: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
  expectedMonthlyTransactionCount: Type.Optional(
    literals(MONTHLY_TRANSACTION_COUNTS, 'ExpectedMonthlyTransactionCount'),
  ),
  expectedMonthlyTransactionVolume: Type.Optional(
    literals(MONTHLY_TRANSACTION_VOLUMES, 'ExpectedMonthlyTransactionVolume'),
  ),
  expectedRecipientJurisdictions: Type.Optional(Type.Array(CountryCode, { minItems: 1, maxItems: 250 })),
};

export const BusinessInfo = Type.Object(businessInfoFields, {
  $id: 'BusinessInfo',
  additionalProperties: false,
});
/** Business info in an update: every field optional, merged into the stored one. */
export const BusinessInfoUpdate = Type.Partial(
  Type.Object(businessInfoFields, { additionalProperties: false }),
);

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

export const Customer = Type.Union([IndividualCustomer, BusinessCustomer], { $id: 'Customer' });

/**
 * A body that is one of the branches, chosen by `customerType`: first the tag
 * itself is checked (so a missing or unknown customerType is reported on that
 * field), then the body is validated against the branch the tag names only
 * (oneOf + discriminator), so errors concern that variant.
 */
function discriminated<T extends TSchema[]>(branches: [...T], description: string) {
  return Type.Unsafe<Static<T[number]>>({
    description,
    allOf: [
      {
        type: 'object',
        required: ['customerType'],
        properties: { customerType: { type: 'string', enum: ['INDIVIDUAL', 'BUSINESS'] } },
      },
      { oneOf: branches, discriminator: { propertyName: 'customerType' } },
    ],
  });
}

const createCommon = {
  platformCustomerId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'your id for the customer; generated when absent; unique among live customers',
    }),
  ),
  region: Type.Optional(CountryCode),
  currencies: Type.Optional(
    Type.Array(CurrencyCode, {
      minItems: 1,
      maxItems: 50,
      uniqueItems: true,
      description: 'currencies to enable; default: the platform supported currencies',
    }),
  ),
  email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
  umaAddress: Type.Optional(UmaAddress),
};

export const IndividualCustomerCreateRequest = Type.Object(
  {
    customerType: Type.Literal('INDIVIDUAL'),
    ...createCommon,
    fullName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    birthDate: Type.Optional(DateOnly),
    nationality: Type.Optional(CountryCode),
    address: Type.Optional(Address),
  },
  { additionalProperties: false, title: 'IndividualCustomerCreateRequest' },
);

export const BusinessCustomerCreateRequest = Type.Object(
  {
    customerType: Type.Literal('BUSINESS'),
    ...createCommon,
    address: Type.Optional(Address),
    businessInfo: BusinessInfo,
  },
  { additionalProperties: false, title: 'BusinessCustomerCreateRequest' },
);

export const CustomerCreateRequest = discriminated(
  [IndividualCustomerCreateRequest, BusinessCustomerCreateRequest],
  'An INDIVIDUAL or a BUSINESS customer',
);
export type CustomerCreateRequest =
  Static<typeof IndividualCustomerCreateRequest> | Static<typeof BusinessCustomerCreateRequest>;

const updateCommon = {
  currencies: Type.Optional(
    Type.Array(CurrencyCode, {
      minItems: 1,
      maxItems: 50,
      uniqueItems: true,
      description: 'replaces the enabled currencies',
    }),
  ),
  email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
  umaAddress: Type.Optional(UmaAddress),
  address: Type.Optional(Address),
};

export const IndividualCustomerUpdateRequest = Type.Object(
  {
    customerType: Type.Literal('INDIVIDUAL'),
    ...updateCommon,
    fullName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    birthDate: Type.Optional(DateOnly),
    nationality: Type.Optional(CountryCode),
  },
  { additionalProperties: false, title: 'IndividualCustomerUpdateRequest' },
);

export const BusinessCustomerUpdateRequest = Type.Object(
  {
    customerType: Type.Literal('BUSINESS'),
    ...updateCommon,
    businessInfo: Type.Optional(BusinessInfoUpdate),
  },
  { additionalProperties: false, title: 'BusinessCustomerUpdateRequest' },
);

export const CustomerUpdateRequest = discriminated(
  [IndividualCustomerUpdateRequest, BusinessCustomerUpdateRequest],
  'Fields to change; customerType must be the customer’s type. region and platformCustomerId cannot change.',
);
export type CustomerUpdateRequest =
  Static<typeof IndividualCustomerUpdateRequest> | Static<typeof BusinessCustomerUpdateRequest>;

export const CustomerListQuery = Type.Object(
  {
    platformCustomerId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    customerType: Type.Optional(CustomerTypeSchema),
    createdAfter: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive' })),
    createdBefore: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive' })),
    updatedAfter: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive' })),
    updatedBefore: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive' })),
    region: Type.Optional(CountryCode),
    currency: Type.Optional(
      Type.String({ minLength: 1, maxLength: 10, description: 'customers having this currency enabled' }),
    ),
    umaAddress: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
    isIncludingDeleted: Type.Optional(Type.Boolean({ default: false })),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type CustomerListQuery = Static<typeof CustomerListQuery>;

export const CustomerParams = Type.Object({ customerId: Id('Customer') }, { additionalProperties: false });
export type CustomerParams = Static<typeof CustomerParams>;
