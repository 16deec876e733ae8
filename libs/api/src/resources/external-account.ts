import {
  ACCOUNT_INFO_FIELDS,
  BENEFICIARY_VERIFICATION_STATUSES,
  BUSINESS_BENEFICIARY_FIELDS,
  EXTERNAL_ACCOUNT_STATUSES,
  EXTERNAL_ACCOUNT_TYPES,
  EXTERNAL_ACCOUNT_VARIANTS,
  INDIVIDUAL_BENEFICIARY_FIELDS,
  PHONE_PLANS,
  type BeneficiaryField,
  type ExternalAccountVariant,
  type FieldSpec,
} from '@sluice/core';
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { accounts } from '@sluice/contracts';
import { Timestamp, iso, stringEnum } from '../schema.js';
import { Address } from './customer.js';

/**
 * The public ExternalAccount (a bank account or wallet used as a payment destination or
 * source). Its `accountInfo` is one of the variants of core's EXTERNAL_ACCOUNT_VARIANTS,
 * selected by `accountType`, each built here from its row: its fields (formats as the
 * accounts service stores them, normalized), `paymentRails` and the required `beneficiary`
 * (the variant's individual beneficiary, or a business) of bank variants. The same builders
 * make the create request's variants (`externalAccountCreateInfoVariants`), strict about
 * unknown fields and loose about formats (the accounts service checks and normalizes them).
 */

const Text = (description: string, maxLength = 200) => Type.String({ minLength: 1, maxLength, description });

/** Each beneficiary field's schema (the accounts service checks dates, countries, e-mails, E.164). */
const BENEFICIARY_FIELD_SCHEMAS: Readonly<Record<BeneficiaryField, TSchema>> = {
  fullName: Text('The full name of the beneficiary'),
  legalName: Text('The legal name of the business'),
  birthDate: Type.String({ maxLength: 10, description: 'YYYY-MM-DD' }),
  nationality: Type.String({ maxLength: 2, description: 'ISO 3166-1 alpha-2' }),
  email: Type.String({ maxLength: 254 }),
  phoneNumber: Type.String({ maxLength: 20, description: 'E.164' }),
  registrationNumber: Type.String({ maxLength: 100 }),
  taxId: Type.String({ maxLength: 50 }),
  countryOfResidence: Type.String({ maxLength: 2, description: 'ISO 3166-1 alpha-2' }),
  address: Address,
};

/** PascalCase name of a variant as the reference names its schemas: USD_ACCOUNT → Usd, SPARK_WALLET → SparkWallet. */
export function variantSchemaName(accountType: string): string {
  return accountType
    .replace(/_ACCOUNT$/, '')
    .split('_')
    .map((w) => w[0] + w.slice(1).toLowerCase())
    .join('');
}

function beneficiaryObject(
  type: 'INDIVIDUAL' | 'BUSINESS',
  fields: readonly BeneficiaryField[],
  required: readonly BeneficiaryField[],
  options: { $id: string; description: string; additionalProperties?: false },
): TObject {
  return Type.Object(
    {
      beneficiaryType: Type.Literal(type),
      ...Object.fromEntries(
        fields.map((f) => [
          f,
          required.includes(f) ? BENEFICIARY_FIELD_SCHEMAS[f] : Type.Optional(BENEFICIARY_FIELD_SCHEMAS[f]),
        ]),
      ),
    },
    options,
  );
}

type Mode = 'response' | 'request';

/**
 * A response union as the reference writes it: `oneOf` with a `discriminator` on `tag` (code
 * generators make a tagged union of it). Exactly one branch matches, by the tag's literal.
 */
function oneOf<T extends TObject[]>(tag: string, branches: [...T], options: Record<string, unknown>) {
  return Type.Unsafe<Static<T[number]>>({
    ...options,
    oneOf: branches,
    discriminator: { propertyName: tag },
  });
}

export const BusinessBeneficiary = beneficiaryObject('BUSINESS', BUSINESS_BENEFICIARY_FIELDS, ['legalName'], {
  $id: 'BusinessBeneficiary',
  description: 'Business Beneficiary',
});

/** The INDIVIDUAL (that variant's fields and requirements) and BUSINESS beneficiaries of a bank variant. */
export function beneficiarySchemas(v: ExternalAccountVariant): [TObject, TObject] {
  const individual = beneficiaryObject(
    'INDIVIDUAL',
    [...INDIVIDUAL_BENEFICIARY_FIELDS, ...(v.individual?.extra ?? [])],
    ['fullName', ...(v.individual?.required ?? [])],
    { $id: `${variantSchemaName(v.accountType)}Beneficiary`, description: 'Individual Beneficiary' },
  );
  return [individual, BusinessBeneficiary];
}

/**
 * The beneficiary of a create request, for every variant at once: an INDIVIDUAL with any
 * individual field of any variant, or a BUSINESS; unknown fields refused. What a variant
 * requires of it (an address for EUR, ...) and its own fields are the accounts service's
 * checks (one schema instead of 36 keeps the request validator small).
 */
export const BeneficiaryInput = [
  beneficiaryObject(
    'INDIVIDUAL',
    [
      ...new Set(
        EXTERNAL_ACCOUNT_TYPES.flatMap((t) => [
          ...INDIVIDUAL_BENEFICIARY_FIELDS,
          ...(EXTERNAL_ACCOUNT_VARIANTS[t].individual?.extra ?? []),
        ]),
      ),
    ],
    ['fullName'],
    { $id: 'IndividualBeneficiaryInput', description: 'Individual Beneficiary', additionalProperties: false },
  ),
  beneficiaryObject('BUSINESS', BUSINESS_BENEFICIARY_FIELDS, ['legalName'], {
    $id: 'BusinessBeneficiaryInput',
    description: 'Business Beneficiary',
    additionalProperties: false,
  }),
] as [TObject, TObject];

/** The pattern of a phone number of `countries` (calling code and national lengths). */
function phonePattern(countries: readonly string[]): string {
  const alternatives = countries.flatMap((c) => {
    const p = PHONE_PLANS[c]!;
    return p.lengths.map((n) => `${p.code}[0-9]{${n}}`);
  });
  return `^\\+(${alternatives.join('|')})$`;
}

/** A field as stored and returned (normalized): its pattern where its format has one. */
function responseField(spec: FieldSpec): TSchema {
  const f = spec.format;
  const d = { description: spec.description };
  switch (f.kind) {
    case 'digits':
      return Type.String({ ...d, pattern: `^[0-9]{${f.min},${f.max}}$`, minLength: f.min, maxLength: f.max });
    case 'aba':
      return Type.String({ ...d, pattern: '^[0-9]{9}$', minLength: 9, maxLength: 9 });
    case 'clabe':
      return Type.String({ ...d, pattern: '^[0-9]{18}$', minLength: 18, maxLength: 18 });
    case 'iban':
      return Type.String({
        ...d,
        pattern:
          f.countries.length === 1
            ? `^${f.countries[0]}[0-9]{2}[A-Z0-9]{11,30}$`
            : '^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$',
        minLength: 15,
        maxLength: 34,
      });
    case 'bic':
      return Type.String({
        ...d,
        pattern: '^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$',
        minLength: 8,
        maxLength: 11,
      });
    case 'brTaxId':
      return Type.String({ ...d, pattern: '^([0-9]{11}|[0-9]{14})$', minLength: 11, maxLength: 14 });
    case 'vpa':
      return Type.String({ ...d, pattern: '^[a-z0-9.\\-_]+@[a-z0-9]+$', minLength: 3, maxLength: 255 });
    case 'phone':
      return Type.String({ ...d, pattern: phonePattern(f.countries), minLength: 7, maxLength: 16 });
    case 'text':
      return Type.String({ ...d, minLength: 1, maxLength: f.max });
    case 'enum':
      return stringEnum(f.values, d);
    default:
      return Type.String(d);
  }
}

/** A field of a create request: a bounded string (an enum where the format is one); the service checks the rest. */
function requestField(spec: FieldSpec): TSchema {
  const f = spec.format;
  if (f.kind === 'enum') return stringEnum(f.values, { description: spec.description });
  const max = f.kind === 'text' ? f.max : f.kind === 'bolt11' || f.kind === 'bolt12' ? 4096 : 320;
  return Type.String({ maxLength: max, description: spec.description });
}

/**
 * The `accountInfo` variant of a row of EXTERNAL_ACCOUNT_VARIANTS. Response: the stored fields
 * (a field required only by some rails is optional), `paymentRails` and `beneficiary`
 * required for bank variants. Request: unknown fields refused, `paymentRails` optional (the
 * rails to use; default every rail whose fields are given), `beneficiary` required for banks
 * (its shape is BeneficiaryInput, checked beside the variants).
 */
export function accountInfoVariantSchema(v: ExternalAccountVariant, mode: Mode): TObject {
  const name = variantSchemaName(v.accountType);
  const rails = Object.keys(v.rails);
  const field = mode === 'response' ? responseField : requestField;
  const holder =
    'The account holder: its name is verified against the account (beneficiaryVerificationStatus)';
  const beneficiary = !rails.length
    ? undefined
    : mode === 'response'
      ? oneOf('beneficiaryType', beneficiarySchemas(v), { description: holder })
      : Type.Unknown({
          description: `${holder}; an IndividualBeneficiaryInput or a BusinessBeneficiaryInput`,
        });
  const railList = Type.Array(stringEnum(rails), {
    minItems: mode === 'request' ? 1 : 0,
    maxItems: rails.length,
    uniqueItems: true,
    description:
      mode === 'request'
        ? `The rails to pay the account on (${rails.join(', ')}); default: every rail whose fields are given`
        : 'The payment rails the account is paid on',
  });
  return Type.Object(
    {
      accountType: Type.Literal(v.accountType),
      ...Object.fromEntries(
        ACCOUNT_INFO_FIELDS.filter((f) => v.fields[f]).map((f) => {
          const spec = v.fields[f]!;
          return [f, spec.required ? field(spec) : Type.Optional(field(spec))];
        }),
      ),
      ...(rails.length ? { paymentRails: mode === 'request' ? Type.Optional(railList) : railList } : {}),
      ...(beneficiary ? { beneficiary } : {}),
    },
    {
      $id: `${name}ExternalAccount${mode === 'request' ? 'Create' : ''}Info`,
      description: `${v.accountType}: holds ${v.currencies.join(' or ')}${rails.length ? `, paid on ${rails.join(', ')}` : ''}`,
      ...(mode === 'request' ? { additionalProperties: false } : {}),
    },
  );
}

/** `accountInfo` of an ExternalAccount (discriminated by `accountType`, as the reference's ExternalAccountInfoOneOf). */
export const ExternalAccountInfo = oneOf(
  'accountType',
  EXTERNAL_ACCOUNT_TYPES.map((t) => accountInfoVariantSchema(EXTERNAL_ACCOUNT_VARIANTS[t], 'response')),
  { $id: 'ExternalAccountInfoOneOf' },
);

export const ExternalAccount = Type.Object(
  {
    id: Type.String({ description: 'ExternalAccount:<uuid>' }),
    customerId: Type.Optional(Type.String({ description: 'Owning customer; absent for platform accounts' })),
    status: stringEnum(EXTERNAL_ACCOUNT_STATUSES),
    platformAccountId: Type.Optional(Type.String()),
    currency: Type.String(),
    defaultUmaDepositAccount: Type.Boolean(),
    beneficiaryVerificationStatus: stringEnum(BENEFICIARY_VERIFICATION_STATUSES, {
      $id: 'BeneficiaryVerificationStatus',
    }),
    beneficiaryVerifiedData: Type.Optional(
      Type.Object({ fullName: Type.Optional(Type.String()) }, { $id: 'BeneficiaryVerifiedData' }),
    ),
    accountInfo: ExternalAccountInfo,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'ExternalAccount' },
);
export type ExternalAccount = Static<typeof ExternalAccount>;

const VERIFICATION_FROM_PB: Record<string, ExternalAccount['beneficiaryVerificationStatus']> = {
  [accounts.BeneficiaryVerificationStatus.MATCHED]: 'MATCHED',
  [accounts.BeneficiaryVerificationStatus.PARTIAL_MATCH]: 'PARTIAL_MATCH',
  [accounts.BeneficiaryVerificationStatus.NOT_MATCHED]: 'NOT_MATCHED',
  [accounts.BeneficiaryVerificationStatus.UNSUPPORTED]: 'UNSUPPORTED',
  [accounts.BeneficiaryVerificationStatus.CHECKED_BY_RECEIVING_FI]: 'CHECKED_BY_RECEIVING_FI',
  [accounts.BeneficiaryVerificationStatus.PENDING]: 'PENDING',
};
const STATUS_FROM_PB: Record<string, ExternalAccount['status']> = {
  [accounts.ExternalAccountStatus.ACTIVE]: 'ACTIVE',
  [accounts.ExternalAccountStatus.PENDING]: 'PENDING',
  [accounts.ExternalAccountStatus.UNDER_REVIEW]: 'UNDER_REVIEW',
  [accounts.ExternalAccountStatus.INACTIVE]: 'INACTIVE',
};

/** Keeps the fields that are set (ts-proto leaves absent optional fields undefined). */
function defined<T extends object>(o: T): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));
}

/** The public ExternalAccount of an accounts.v1 ExternalAccount. */
export function externalAccountJson(a: accounts.ExternalAccount): ExternalAccount {
  const { beneficiary, paymentRails, ...info } = a.accountInfo!;
  const bank =
    Object.keys(
      EXTERNAL_ACCOUNT_VARIANTS[info.accountType as keyof typeof EXTERNAL_ACCOUNT_VARIANTS]?.rails ?? {},
    ).length > 0;
  return {
    id: a.id,
    ...(a.customerId ? { customerId: a.customerId } : {}),
    status: STATUS_FROM_PB[a.status] ?? 'ACTIVE',
    ...(a.platformAccountId ? { platformAccountId: a.platformAccountId } : {}),
    currency: a.currency,
    defaultUmaDepositAccount: a.defaultUmaDepositAccount,
    beneficiaryVerificationStatus: VERIFICATION_FROM_PB[a.beneficiaryVerificationStatus] ?? 'UNSUPPORTED',
    ...(a.beneficiaryVerifiedData?.fullName
      ? { beneficiaryVerifiedData: { fullName: a.beneficiaryVerifiedData.fullName } }
      : {}),
    // The variant is the accounts service's (it validated accountType and the variant's fields).
    accountInfo: {
      ...defined(info),
      ...(bank ? { paymentRails } : {}),
      ...(beneficiary
        ? {
            beneficiary: {
              ...defined({ ...beneficiary, address: undefined }),
              ...(beneficiary.address ? { address: defined(beneficiary.address) } : {}),
            },
          }
        : {}),
    } as ExternalAccount['accountInfo'],
    createdAt: iso(a.createdAt)!,
    updatedAt: iso(a.updatedAt)!,
  };
}
