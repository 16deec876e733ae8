import { Type, type Static } from '@sinclair/typebox';
import type { compliance } from '@sluice/contracts';
import { BENEFICIAL_OWNER_ROLES, IDENTIFICATION_TYPES } from '@sluice/core';
import { DateOnly, Id, Timestamp, bare, defined, iso, stringEnum } from '../schema.js';
import { Address, CountryCode, KycStatus } from './customer.js';

/** The public BeneficialOwner (reference `BeneficialOwner`), one schema and one mapper. */

export const BeneficialOwnerRole = stringEnum(BENEFICIAL_OWNER_ROLES, {
  $id: 'BeneficialOwnerRole',
  description: 'Role of the beneficial owner within the business',
});
export const IdentificationType = stringEnum(IDENTIFICATION_TYPES, {
  $id: 'IdentificationType',
  description: 'Type of tax identification',
});

const personalFields = {
  firstName: Type.String({ minLength: 1, maxLength: 100 }),
  middleName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  lastName: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'Sandbox: the last 3 characters set kycStatus (001 PENDING, 002 REJECTED, other APPROVED)',
  }),
  birthDate: DateOnly,
  nationality: CountryCode,
  email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
  phoneNumber: Type.Optional(
    Type.String({ maxLength: 16, pattern: '^\\+[1-9]\\d{1,14}$', description: 'E.164 phone number' }),
  ),
  address: Address,
  idType: IdentificationType,
  identifier: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'The identification number or value',
  }),
  countryOfIssuance: Type.Optional(CountryCode),
};

export const BeneficialOwnerPersonalInfo = Type.Object(personalFields, {
  $id: 'BeneficialOwnerPersonalInfo',
  additionalProperties: false,
});

/** Partial personal info of an update: only the fields present change. */
export const BeneficialOwnerPersonalInfoUpdate = Type.Partial(Type.Object(personalFields), {
  $id: 'BeneficialOwnerPersonalInfoUpdate',
  additionalProperties: false,
});

const roles = Type.Array(BeneficialOwnerRole, {
  minItems: 1,
  maxItems: 6,
  description: 'Roles of this person within the business',
});
const ownershipPercentage = Type.Integer({
  minimum: 0,
  maximum: 100,
  description:
    'Percentage of ownership in the business (0-100); above 0 for a UBO; the UBOs of a business own at most 100 together',
});

export const BeneficialOwnerCreateRequest = Type.Object(
  { customerId: Id('Customer'), roles, ownershipPercentage, personalInfo: BeneficialOwnerPersonalInfo },
  { $id: 'BeneficialOwnerCreateRequest', additionalProperties: false },
);

export const BeneficialOwnerUpdateRequest = Type.Object(
  {
    roles: Type.Optional(roles),
    ownershipPercentage: Type.Optional(ownershipPercentage),
    personalInfo: Type.Optional(BeneficialOwnerPersonalInfoUpdate),
  },
  { $id: 'BeneficialOwnerUpdateRequest', additionalProperties: false },
);

export const BeneficialOwner = Type.Object(
  {
    id: Id('BeneficialOwner'),
    customerId: Id('Customer'),
    roles: Type.Array(BeneficialOwnerRole),
    ownershipPercentage: Type.Integer({ minimum: 0, maximum: 100 }),
    personalInfo: BeneficialOwnerPersonalInfo,
    kycStatus: KycStatus,
    createdAt: Timestamp,
    updatedAt: Type.Optional(Timestamp),
  },
  { $id: 'BeneficialOwner' },
);
export type BeneficialOwner = Static<typeof BeneficialOwner>;

/** The public BeneficialOwner of a compliance.v1 BeneficialOwner. */
export function beneficialOwnerJson(o: compliance.BeneficialOwner): BeneficialOwner {
  const p = o.personalInfo!;
  return {
    id: o.id,
    customerId: o.customerId,
    roles: o.roles.map((r) => bare(r, 'BENEFICIAL_OWNER_ROLE_') as BeneficialOwner['roles'][number]),
    ownershipPercentage: o.ownershipPercentage,
    personalInfo: defined({
      firstName: p.firstName ?? '',
      middleName: p.middleName,
      lastName: p.lastName ?? '',
      birthDate: p.birthDate ?? '',
      nationality: p.nationality ?? '',
      email: p.email,
      phoneNumber: p.phoneNumber,
      address: defined({ ...p.address! }),
      idType: bare(p.idType, 'IDENTIFICATION_TYPE_') as BeneficialOwner['personalInfo']['idType'],
      identifier: p.identifier ?? '',
      countryOfIssuance: p.countryOfIssuance,
    }),
    kycStatus: bare(o.kycStatus, 'KYC_STATUS_') as BeneficialOwner['kycStatus'],
    createdAt: iso(o.createdAt)!,
    ...(o.updatedAt ? { updatedAt: iso(o.updatedAt)! } : {}),
  };
}
