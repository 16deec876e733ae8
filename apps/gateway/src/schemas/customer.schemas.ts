import { Type, type Static, type TProperties } from '@sinclair/typebox';
import {
  Address,
  BusinessInfo,
  CountryCode,
  Customer,
  CustomerType,
  DateOnly,
  Id,
  KybStatus,
  KycStatus,
  Page,
  UmaAddress,
} from '@sluice/api';
import { discriminated, DateTimeFilter, PageQuery, named } from './common.js';

/** Request schemas of `/customers` (individual and business variants, discriminated by customerType). */

const CurrencyCode = Type.String({
  minLength: 1,
  maxLength: 10,
  description: 'currency code (USD, EUR, USDC, ...)',
});

const currencies = (description: string) =>
  Type.Optional(Type.Array(CurrencyCode, { minItems: 1, maxItems: 50, uniqueItems: true, description }));

/** The fields an individual's request may carry besides the common ones. */
const individualFields = {
  fullName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  birthDate: Type.Optional(DateOnly),
  nationality: Type.Optional(CountryCode),
  /** Only a regulated financial institution's (isRegulatedFinancialInstitution) own verification. */
  kycStatus: Type.Optional(KycStatus),
};

/** kybStatus of a business: only a regulated financial institution's own verification. */
const kybStatus = Type.Optional(KybStatus);

/** An INDIVIDUAL and a BUSINESS variant of a request, discriminated by customerType. */
function customerRequest<C extends TProperties, B extends TProperties>(
  name: 'Create' | 'Update',
  common: C,
  business: B,
  description: string,
) {
  const individual = Type.Object(
    { customerType: Type.Literal('INDIVIDUAL'), ...common, ...individualFields },
    { additionalProperties: false, title: `IndividualCustomer${name}Request` },
  );
  const businessVariant = Type.Object(
    { customerType: Type.Literal('BUSINESS'), ...common, ...business },
    { additionalProperties: false, title: `BusinessCustomer${name}Request` },
  );
  return discriminated('customerType', [individual, businessVariant], { description });
}

const create = customerRequest(
  'Create',
  {
    platformCustomerId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: 'your id for the customer; generated when absent; unique among live customers',
      }),
    ),
    region: Type.Optional(CountryCode),
    currencies: currencies('currencies to enable; default: the platform supported currencies'),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    umaAddress: Type.Optional(UmaAddress('UMA address `$user@domain`')),
    address: Type.Optional(Address),
  },
  { businessInfo: BusinessInfo, kybStatus },
  'An INDIVIDUAL or a BUSINESS customer',
);
export const CustomerCreateRequest = named('CustomerCreateRequestOneOf', create);
export type CustomerCreateRequest = Static<typeof CustomerCreateRequest>;

/** Business info in an update: every field optional, merged into the stored one. */
const BusinessInfoUpdate = Type.Partial(BusinessInfo, { $id: undefined, additionalProperties: false });

const update = customerRequest(
  'Update',
  {
    currencies: currencies('replaces the enabled currencies'),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    umaAddress: Type.Optional(UmaAddress('UMA address `$user@domain`')),
    address: Type.Optional(Address),
  },
  { businessInfo: Type.Optional(BusinessInfoUpdate), kybStatus },
  'Fields to change; customerType must be the customer’s type. region and platformCustomerId cannot change.',
);
export const CustomerUpdateRequest = named('CustomerUpdateRequestOneOf', update);
export type CustomerUpdateRequest = Static<typeof CustomerUpdateRequest>;

export const CustomerListQuery = Type.Object(
  {
    platformCustomerId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    customerType: Type.Optional(CustomerType),
    createdAfter: Type.Optional(DateTimeFilter('inclusive')),
    createdBefore: Type.Optional(DateTimeFilter('inclusive')),
    updatedAfter: Type.Optional(DateTimeFilter('inclusive')),
    updatedBefore: Type.Optional(DateTimeFilter('inclusive')),
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

export const CustomerParams = Type.Object({ customerId: Id('Customer') }, { additionalProperties: false });

export const CustomerList = Page(Customer, 'CustomerListResponse');

/** Largest CSV file of a bulk customer import: 64 MiB (100,000 rows of the format fit well within). */
export const MAX_IMPORT_CSV_BYTES = 67_108_864;

/** The multipart body of POST /customers/bulk/csv as the OpenAPI document shows it (read as it streams). */
export const BulkCustomerImportRequest = Type.Object(
  {
    file: Type.String({
      format: 'binary',
      maxLength: MAX_IMPORT_CSV_BYTES,
      description:
        'The CSV file (UTF-8, RFC 4180, header row first), at most 64 MiB and 100,000 data rows. The only part of the form.',
    }),
  },
  { additionalProperties: false },
);

export const BulkImportJobParams = Type.Object({ jobId: Id('Job') }, { additionalProperties: false });
